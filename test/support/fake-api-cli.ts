/**
 * Runs the fake Messages API with a demo script, for trying the real `keel` binary end to end:
 *
 *   npm run fake-api [-- --port N] [-- --idle-minutes M]
 *   (node --import ./test/support/exit-with-parent.mjs --import tsx test/support/fake-api-cli.ts)
 *
 * Prints `ANTHROPIC_BASE_URL=http://127.0.0.1:PORT` (one line) on stdout and serves until SIGTERM,
 * SIGINT or SIGHUP (or, with `--idle-minutes M`, M minutes without a request; M may be a
 * fraction); with the preload `exit-with-parent.mjs` (as `npm run fake-api` runs it), also until
 * the process that started it is gone.
 *
 *   eval "$(npm run --silent fake-api -- --env)"
 *
 * With `--env` (the README's quick start) it starts the server in the background instead, in a
 * process of its own that outlives the shell's command (detached, no preload, its log in
 * `$TMPDIR/keel-fake-api.log`) and stops after 30 minutes without a request (`--idle-minutes`) or
 * on SIGTERM, and prints shell lines to `eval`:
 * `export ANTHROPIC_BASE_URL=http://127.0.0.1:PORT ANTHROPIC_API_KEY=fake` and
 * `export KEEL_FAKE_API_PID=PID`. It exits once the server listens (non-zero, printing nothing on
 * stdout, if it does not within 60 s).
 *
 * For any number of sessions: a request whose last
 * message is a plain prompt gets a `Read` of README.md; a request whose last message carries a
 * tool_result gets a text answer quoting the first line read and the number of lines, which proves
 * the tool round trip; a Read refused as too large is followed, as a model would, by a Read of the
 * range the refusal names.
 *
 * @since 0.1.0
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { TextBlock, ToolUseBlock } from "../../packages/core/src/message/Message.js"
import * as FakeAnthropic from "./FakeAnthropic.js"

/** The text of a tool_result's `content`: a string, or its text blocks joined by newlines. */
export const toolResultText = (content: unknown): string => {
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  return content
    .filter((b): b is { type: "text"; text: string } => b?.type === "text" && typeof b.text === "string")
    .map((b) => b.text)
    .join("\n")
}

/** The first tool_result block of a message param, if any. */
const firstToolResult = (message: any): { content?: unknown; is_error?: unknown } | undefined =>
  Array.isArray(message?.content) ? message.content.find((b: any) => b?.type === "tool_result") : undefined

const LINE_NUMBER = /^\s*\d+\t/

/**
 * The demo answer for a tool_result: its first non-empty line (without `cat -n` numbering) and line
 * count. A result too large for the conversation comes as a `<persisted-output>` preview: the file's
 * lines are the numbered ones in it.
 */
export const summarize = (content: unknown): string => {
  const text = toolResultText(content)
  const all = text.length === 0 ? [] : text.replace(/\r?\n$/, "").split(/\r?\n/)
  const persisted = text.startsWith("<persisted-output>")
  const lines = persisted ? all.filter((l) => LINE_NUMBER.test(l)) : all
  const first = lines.map((l) => l.replace(LINE_NUMBER, "").trimEnd()).find((l) => l.trim().length > 0) ?? "(empty)"
  return `README.md summary: ${first} (${persisted ? `a preview of ${lines.length} lines: the file is large` : `${lines.length} lines read`})`
}

/**
 * The range a Read refusal tells the model to read instead (`(offset N, limit M)` in an error
 * result), as a model would follow it; `undefined` for any other result.
 */
export const rangeAsked = (result: { content?: unknown; is_error?: unknown }): { offset: number; limit: number } | undefined => {
  if (result.is_error !== true) return undefined
  const m = /\(offset (\d+), limit (\d+)\)/.exec(toolResultText(result.content))
  return m === null ? undefined : { offset: Number(m[1]), limit: Number(m[2]) }
}

const tokens = (s: string): number => Math.max(1, Math.ceil(s.length / 4))

/** The demo script: `Read` README.md after a prompt, a summary after the tool_result. */
export const demo: FakeAnthropic.ScriptFunction = (body, index) => {
  const messages: Array<any> = Array.isArray(body?.messages) ? body.messages : []
  const last = messages[messages.length - 1]
  const result = firstToolResult(last)
  const input_tokens = tokens(JSON.stringify(body))
  const model = typeof body?.model === "string" ? body.model : "claude-fake"
  const readReply = (intro: string, input: Record<string, unknown>) =>
    FakeAnthropic.toolUseReply([
      new TextBlock({ text: intro }),
      new ToolUseBlock({ id: `toolu_demo_${index + 1}`, name: "Read", input })
    ], {
      id: `msg_demo_${index + 1}`,
      model,
      usage: { input_tokens, output_tokens: tokens(intro + JSON.stringify(input)) }
    })
  if (result === undefined) return readReply("I'll read README.md first.", { file_path: "README.md" })
  const range = rangeAsked(result)
  if (range !== undefined) {
    const last = range.offset + range.limit - 1
    return readReply(`README.md is too large to read at once; reading lines ${range.offset}-${last}.`, {
      file_path: "README.md",
      ...range
    })
  }
  const answer = summarize(result.content)
  return FakeAnthropic.textReply(answer, {
    id: `msg_demo_${index + 1}`,
    model,
    usage: { input_tokens, output_tokens: tokens(answer) }
  })
}

/** The value of `--name V` or `--name=V` in argv, if given. */
const option = (argv: ReadonlyArray<string>, name: string): string | undefined => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1)
}

/**
 * `option` as a number in [min, max] (a whole one unless `fraction`), or undefined when not given;
 * exits 2 when invalid.
 */
const numberOption = (
  argv: ReadonlyArray<string>,
  name: string,
  min: number,
  max: number,
  fraction = false
): number | undefined => {
  const raw = option(argv, name)
  if (raw === undefined) return undefined
  const n = Number(raw)
  if (!Number.isFinite(n) || (!fraction && !Number.isInteger(n)) || n < min || n > max) {
    process.stderr.write(`fake-api: invalid ${name} ${raw}\n`)
    process.exit(2)
  }
  return n
}

/** The repository's root: `--import tsx` resolves from it. */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

/** How long `--env` waits for the background server to listen. */
const START_TIMEOUT_MS = 60_000

/** The idle limit of a server `--env` starts, unless `--idle-minutes` says otherwise. */
const ENV_IDLE_MINUTES = 30

/**
 * `--env`: starts the server as a detached process (its own session: it outlives the shell's
 * command and the terminal's hangup, and is bounded by its idle limit), waits for its URL over an
 * IPC channel, prints the `export` lines and exits. The server's stderr goes to a log file.
 */
const launch = async (argv: ReadonlyArray<string>): Promise<void> => {
  const port = numberOption(argv, "--port", 0, 65535) ?? 0
  const idle = numberOption(argv, "--idle-minutes", 0.01, 24 * 60, true) ?? ENV_IDLE_MINUTES
  const log = path.join(os.tmpdir(), "keel-fake-api.log")
  const fd = fs.openSync(log, "a")
  const child = spawn(process.execPath, [
    "--import",
    "tsx",
    fileURLToPath(import.meta.url),
    "--port",
    String(port),
    "--idle-minutes",
    String(idle)
  ], { cwd: root, detached: true, stdio: ["ignore", "ignore", fd, "ipc"] })
  fs.closeSync(fd)
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not listen within ${START_TIMEOUT_MS / 1000} s`)), START_TIMEOUT_MS)
    child.once("message", (message: any) => {
      clearTimeout(timer)
      if (typeof message?.url === "string") resolve(message.url)
      else reject(new Error(`unexpected message from the server: ${JSON.stringify(message)}`))
    })
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`the server exited before listening (${signal ?? `exit ${code}`})`))
    })
    child.once("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
  }).catch((error: unknown) => {
    child.kill("SIGKILL")
    const tail = fs.existsSync(log) ? fs.readFileSync(log, "utf8").split("\n").slice(-20).join("\n") : ""
    throw new Error(`${error instanceof Error ? error.message : String(error)}; ${log}:\n${tail}`)
  })
  child.disconnect()
  child.unref()
  process.stderr.write(
    `fake-api: serving ${url} in the background (pid ${child.pid}, log ${log}); ` +
      `it stops after ${idle} idle minutes, or with: kill $KEEL_FAKE_API_PID\n`
  )
  await new Promise<void>((resolve) =>
    process.stdout.write(
      `export ANTHROPIC_BASE_URL=${url} ANTHROPIC_API_KEY=fake\nexport KEEL_FAKE_API_PID=${child.pid}\n`,
      () => resolve()
    )
  )
}

/**
 * Serves until a signal, or `--idle-minutes` without a request. Its URL goes to stdout, or, when
 * `--env` started it (an IPC channel), to that parent, and the channel is closed.
 */
const serve = async (argv: ReadonlyArray<string>): Promise<void> => {
  // It ends on a signal, from the start (a signal while the server starts counts too); run by
  // `npm run fake-api`, exit-with-parent.mjs sends it SIGTERM once what started it is gone.
  let fake: FakeAnthropic.FakeAnthropic | undefined
  let stopping = false
  const stop = () => {
    if (stopping) return
    stopping = true
    // A client that holds its connection open cannot keep it serving: the exit comes within a second.
    setTimeout(() => process.exit(0), 1000).unref()
    void (fake?.close() ?? Promise.resolve()).then(() => process.exit(0))
  }
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.once(signal, stop)
  const idleMinutes = numberOption(argv, "--idle-minutes", 0.01, 24 * 60, true)
  let idle: NodeJS.Timeout | undefined
  const stillActive = () => {
    if (idleMinutes === undefined) return
    if (idle !== undefined) clearTimeout(idle)
    idle = setTimeout(() => {
      process.stderr.write(`fake-api: no request for ${idleMinutes} minutes; stopping\n`)
      stop()
    }, idleMinutes * 60_000)
  }
  stillActive()
  fake = await FakeAnthropic.start([], {
    port: numberOption(argv, "--port", 0, 65535) ?? 0,
    fallback: (body, index) => {
      stillActive()
      const response = demo(body, index)
      const kind = firstToolResult(body?.messages?.[body.messages.length - 1]) === undefined ? "tool_use Read" : "text"
      process.stderr.write(`fake-api: request ${index + 1} -> ${kind}\n`)
      return response
    }
  })
  if (stopping) return void (await fake.close())
  const url = fake.url
  if (process.send !== undefined) {
    process.send({ url }, () => process.disconnect())
    return
  }
  await new Promise<void>((resolve) => process.stdout.write(`ANTHROPIC_BASE_URL=${url}\n`, () => resolve()))
}

// Run only as a script, so that tests may import `demo` and `summarize`.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const argv = process.argv.slice(2)
  ;(argv.includes("--env") ? launch(argv) : serve(argv)).catch((error) => {
    process.stderr.write(`fake-api: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
    process.exit(1)
  })
}
