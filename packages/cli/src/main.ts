/**
 * The `keel` entry point: parse flags (without loading the kernel), then run headless: one prompt
 * (`-p`), or user messages as JSON lines on stdin (`--input-format stream-json`); or the REPL; or,
 * for `keel serve`, the runtime protocol; or, for `keel export`, a saved session's export; or, for
 * `keel doctor`, a saved session's check and repair; or, for `keel replay`, a recorded session run
 * again from its journal.
 *
 * @since 0.1.0
 */
import { readFileSync } from "node:fs"
import type { Io } from "./Headless.js"

const version = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string })
  .version

const readStdin = async (): Promise<string> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
}

const exit = (code: number): void => {
  // Leave once stdout has drained; idle keep-alive sockets must not hold the process open.
  process.stdout.write("", () => process.exit(code))
}

const main = async (): Promise<void> => {
  if (process.argv[2] === "serve") return serve(process.argv.slice(3))
  if (process.argv[2] === "export") return exportSession(process.argv.slice(3))
  if (process.argv[2] === "doctor") return doctor(process.argv.slice(3))
  if (process.argv[2] === "replay") return replay(process.argv.slice(3))
  // `keel --version` alone answers before the flag parser (commander) loads.
  if (process.argv.length === 3 && (process.argv[2] === "--version" || process.argv[2] === "-v")) {
    process.stdout.write(`${version}\n`)
    return exit(0)
  }
  const { parse } = await import("./Flags.js")
  const parsed = parse(process.argv.slice(2), version)
  if (parsed._tag === "Exit") {
    process.stdout.write(parsed.stdout)
    process.stderr.write(parsed.stderr)
    return exit(parsed.code)
  }
  const flags = parsed.flags
  if (!flags.print) {
    // The REPL's Markdown renderer (marked-terminal, cli-highlight) decides on colours when it
    // loads: tell it what the REPL decided, then take the variable back from child processes.
    const { colorEnabled } = await import("./repl/Style.js")
    const forced = process.env.FORCE_COLOR
    process.env.FORCE_COLOR = colorEnabled(process.stdout.isTTY, process.env) ? "1" : "0"
    const { run } = await import("./repl/Repl.js")
    if (forced === undefined) delete process.env.FORCE_COLOR
    else process.env.FORCE_COLOR = forced
    return exit(await run(flags, version, { input: process.stdin, output: process.stdout, env: process.env }))
  }
  if (flags.inputFormat === "stream-json") {
    // User messages as JSON lines, read as they arrive (not all of stdin first).
    const [{ runStreamInput }, { createInterface }] = await Promise.all([import("./Headless.js"), import("node:readline")])
    // The iterator is taken at once: readline drops the lines it reads before one exists.
    const iterator = createInterface({ input: process.stdin, crlfDelay: Infinity })[Symbol.asyncIterator]()
    const lines: AsyncIterable<string> = { [Symbol.asyncIterator]: () => iterator }
    return exit(await headless((io) => runStreamInput(flags, lines, io)))
  }
  const given = flags.prompt ?? (process.stdin.isTTY ? undefined : await readStdin())
  const prompt = given === undefined || given.trim().length === 0 ? undefined : given
  // A resumed session needs no prompt when a crash left a turn open: it runs on (see DurableTurn).
  if (prompt === undefined && flags.resume === undefined && !flags.continue) {
    process.stderr.write(
      "keel: no prompt. Give it as an argument (keel -p \"your prompt\") or on stdin (echo \"your prompt\" | keel -p).\n"
    )
    return exit(2)
  }
  const { run } = await import("./Headless.js")
  exit(await headless((io) => run(flags, prompt, io)))
}

/** A parse that printed its answer and exits (help, version, a usage error). */
interface ParsedExit {
  readonly _tag: "Exit"
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/**
 * A subcommand on a saved session (`export`, `doctor`): its parser, then its runner with the flags
 * parsed, each loaded only for it.
 */
const sessionCommand = async <F>(
  parse: () => Promise<{ readonly _tag: string; readonly flags: F } | ParsedExit>,
  load: () => Promise<{ readonly run: (flags: F, io: { out: (s: string) => void; err: (s: string) => void }) => Promise<number> }>
): Promise<void> => {
  const parsed = await parse()
  if (parsed._tag === "Exit") {
    const done = parsed as ParsedExit
    process.stdout.write(done.stdout)
    process.stderr.write(done.stderr)
    return exit(done.code)
  }
  const { run } = await load()
  exit(await run((parsed as { readonly flags: F }).flags, { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) }))
}

/** `keel export`: a saved session's handoff, replay case or review. */
const exportSession = (argv: ReadonlyArray<string>): Promise<void> =>
  sessionCommand(async () => (await import("./export/ExportFlags.js")).parseExport(argv), () => import("./export/Export.js"))

/** `keel doctor`: checks a saved session's transcript and repairs a torn one. */
const doctor = (argv: ReadonlyArray<string>): Promise<void> =>
  sessionCommand(async () => (await import("./doctor/DoctorFlags.js")).parseDoctor(argv), () => import("./doctor/Doctor.js"))

/** `keel replay`: a recorded session run again from its journal, under virtual time. */
const replay = (argv: ReadonlyArray<string>): Promise<void> =>
  sessionCommand(
    async () => (await import("./replay/ReplayFlags.js")).parseReplay(argv),
    async () => {
      const { run } = await import("./replay/Replay.js")
      return { run: (flags, io) => run(flags, io, version) }
    }
  )

/** `keel serve`: the runtime protocol over stdio or HTTP (its parser and server load only for it). */
const serve = async (argv: ReadonlyArray<string>): Promise<void> => {
  const { parseServe } = await import("./serve/ServeFlags.js")
  const parsed = parseServe(argv, version)
  if (parsed._tag === "Exit") {
    process.stdout.write(parsed.stdout)
    process.stderr.write(parsed.stderr)
    return exit(parsed.code)
  }
  const { run } = await import("./serve/Serve.js")
  const io = { out: (s: string) => process.stdout.write(s), err: (s: string) => process.stderr.write(s), input: process.stdin }
  exit(await run(parsed.flags, parsed.transport, io))
}

/**
 * Runs a headless run on stdout and stderr. The first SIGINT, SIGTERM or SIGHUP interrupts it (the
 * running turn ends with its result, no further input is read, the session's lock is released)
 * and the exit code becomes the signal's (130, 143, 129); a second one, one before the run can be
 * interrupted, or finishing for longer than `Signals.GRACE_MS`, exits at once (see `Signals`).
 */
const headless = async (start: (io: Io) => Promise<number>): Promise<number> => {
  const { install } = await import("./Signals.js")
  let interrupt: (() => void) | undefined
  const signals = install(() => {
    if (interrupt === undefined) process.exit(signals.code())
    interrupt()
  })
  const code = await start({
    out: (s) => process.stdout.write(s),
    err: (s) => process.stderr.write(s),
    onInterruptReady: (f) => (interrupt = f)
  })
  return signals.code() ?? code
}

void main()
