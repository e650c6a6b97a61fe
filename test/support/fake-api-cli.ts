/**
 * Runs the fake Messages API with a demo script, for trying the real `keel` binary end to end:
 *
 *   npm run fake-api [-- --port N]
 *   (node --import ./test/support/exit-with-parent.mjs --import tsx test/support/fake-api-cli.ts)
 *
 * Prints `ANTHROPIC_BASE_URL=http://127.0.0.1:PORT` (one line) on stdout and serves until SIGTERM,
 * SIGINT or SIGHUP; with the preload `exit-with-parent.mjs` (as `npm run fake-api` runs it), also
 * until the process that started it is gone. For any number of sessions: a request whose last
 * message is a plain prompt gets a `Read` of README.md; a request whose last message carries a
 * tool_result gets a text answer quoting the first line read and the number of lines, which proves
 * the tool round trip; a Read refused as too large is followed, as a model would, by a Read of the
 * range the refusal names.
 *
 * @since 0.1.0
 */
import { pathToFileURL } from "node:url"
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

const parsePort = (argv: ReadonlyArray<string>): number => {
  const i = argv.indexOf("--port")
  const raw = i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith("--port="))?.slice("--port=".length)
  if (raw === undefined) return 0
  const port = Number(raw)
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`fake-api: invalid --port ${raw}\n`)
    process.exit(2)
  }
  return port
}

const main = async () => {
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
  fake = await FakeAnthropic.start([], {
    port: parsePort(process.argv.slice(2)),
    fallback: (body, index) => {
      const response = demo(body, index)
      const kind = firstToolResult(body?.messages?.[body.messages.length - 1]) === undefined ? "tool_use Read" : "text"
      process.stderr.write(`fake-api: request ${index + 1} -> ${kind}\n`)
      return response
    }
  })
  if (stopping) return void (await fake.close())
  const url = fake.url
  await new Promise<void>((resolve) => process.stdout.write(`ANTHROPIC_BASE_URL=${url}\n`, () => resolve()))
}

// Run only as a script, so that tests may import `demo` and `summarize`.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error) => {
    process.stderr.write(`fake-api: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
    process.exit(1)
  })
}
