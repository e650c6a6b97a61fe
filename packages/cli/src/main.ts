/**
 * The `keel` entry point: parse flags (without loading the kernel), then run headless: one prompt
 * (`-p`), or user messages as JSON lines on stdin (`--input-format stream-json`); or the REPL; or,
 * for `keel serve`, the runtime protocol; or, for `keel export`, a saved session's export.
 *
 * @since 0.1.0
 */
import { readFileSync } from "node:fs"
import { parse } from "./Flags.js"
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
  const prompt = flags.prompt ?? (process.stdin.isTTY ? undefined : await readStdin())
  if (prompt === undefined || prompt.trim().length === 0) {
    process.stderr.write(
      "keel: no prompt. Give it as an argument (keel -p \"your prompt\") or on stdin (echo \"your prompt\" | keel -p).\n"
    )
    return exit(2)
  }
  const { run } = await import("./Headless.js")
  exit(await headless((io) => run(flags, prompt, io)))
}

/** `keel export`: a saved session's handoff, replay case or review (its parser and code load only for it). */
const exportSession = async (argv: ReadonlyArray<string>): Promise<void> => {
  const { parseExport } = await import("./export/ExportFlags.js")
  const parsed = parseExport(argv)
  if (parsed._tag === "Exit") {
    process.stdout.write(parsed.stdout)
    process.stderr.write(parsed.stderr)
    return exit(parsed.code)
  }
  const { run } = await import("./export/Export.js")
  exit(await run(parsed.flags, { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) }))
}

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
 * Runs a headless run on stdout and stderr. The first SIGINT interrupts it (the running turn ends
 * with its result, no further input is read) and the exit code becomes 130; a second one, or one
 * before the run can be interrupted, exits at once.
 */
const headless = async (start: (io: Io) => Promise<number>): Promise<number> => {
  let interrupt: (() => void) | undefined
  let interrupted = false
  process.on("SIGINT", () => {
    if (interrupted || interrupt === undefined) process.exit(130)
    interrupted = true
    interrupt()
  })
  const code = await start({
    out: (s) => process.stdout.write(s),
    err: (s) => process.stderr.write(s),
    onInterruptReady: (f) => (interrupt = f)
  })
  return interrupted ? 130 : code
}

void main()
