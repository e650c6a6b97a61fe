/**
 * Headless mode (`keel -p`): one turn, its messages printed as text, one JSON result, or
 * `stream-json` lines in Claude Code's headless shape, on the Layer graph of `Runtime`; the exit
 * code is 1 when the result is an error.
 *
 * @since 0.1.0
 */
import type { SdkMessage } from "@keel/core"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Stream from "effect/Stream"
import type { Flags } from "./Flags.js"
import * as Runtime from "./Runtime.js"

/** Where headless output goes (stdout and stderr, or test sinks). @category Models */
export interface Io {
  readonly out: (text: string) => void
  readonly err: (text: string) => void
  /** Called with the session's interrupt once it exists, so a signal handler can stop the turn. */
  readonly onInterruptReady?: (interrupt: () => void) => void
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s`

/**
 * What text mode prints on stderr while a turn waits or recovers, so a person can tell waiting from
 * hung (stdout keeps only the answer).
 *
 * @category Rendering
 */
export const progressLine = (message: SdkMessage.SdkMessage): string | undefined => {
  if (message.type !== "system") return undefined
  switch (message.subtype) {
    case "api_retry":
      return `keel: ${message.error_message}; retrying in ${seconds(message.retry_delay_ms)} ` +
        `(retry ${message.attempt}/${message.max_retries ?? "unlimited"})\n`
    case "model_fallback":
      return `keel: ${message.content}\n`
    case "status":
      switch (message.status) {
        case "stalled":
          return `keel: no data from the API for ${seconds(message.idle_ms ?? 0)}; the request is retried at ${
            seconds(message.timeout_ms ?? 0)
          }\n`
        case "retrying":
          return `keel: still waiting to retry (${seconds(message.retry_in_ms ?? 0)} left)\n`
        case "compacting":
          return "keel: compacting the conversation\n"
        default:
          return undefined
      }
    case "permission_denied":
      return `keel: ${message.message}\n`
    case "informational":
      return `keel: ${message.content}\n`
    case "compact_boundary":
      return `keel: compacted the conversation from ~${message.compact_metadata.pre_tokens} to ~${message.compact_metadata.post_tokens} tokens\n`
    default:
      return undefined
  }
}

/**
 * Runs one headless turn for `prompt` and prints its output. Returns the process exit code.
 *
 * @category Running
 */
export const run = async (flags: Flags, prompt: string, io: Io): Promise<number> => {
  const options: Runtime.Options = { ...flags, cwd: process.cwd() }
  const program = Effect.gen(function*() {
    const { session, warnings } = yield* Runtime.openSession(options)
    for (const warning of warnings) io.err(`keel: ${warning}\n`)
    io.onInterruptReady?.(() => Effect.runFork(session.interrupt))
    const messages: Array<SdkMessage.SdkMessage> = []
    let result: SdkMessage.Result | undefined
    yield* session.submit(prompt).pipe(Stream.runForEachChunk((chunk) =>
      Effect.sync(() => {
        let lines = ""
        for (const message of chunk) {
          if (message.type === "result") result = message
          if (flags.outputFormat === "text" && message.type === "system") {
            const line = progressLine(message)
            if (line !== undefined) io.err(line)
          }
          if (flags.outputFormat === "stream-json") lines += JSON.stringify(message) + "\n"
          else if (flags.outputFormat === "json" && flags.verbose) messages.push(message)
        }
        if (lines.length > 0) io.out(lines)
      })
    ))
    return { result, messages }
  }).pipe(Effect.provide(Runtime.layer(options)))

  const exit = await Effect.runPromiseExit(program)
  if (Exit.isFailure(exit)) {
    const failure = Runtime.describeFailure(exit.cause, flags.debug)
    io.err(failure.lines.map((line) => `keel: ${line}\n`).join(""))
    return failure.code
  }
  const { messages, result } = exit.value
  if (result === undefined) {
    io.err("keel: the turn ended without a result\n")
    return 1
  }
  switch (flags.outputFormat) {
    case "text":
      if (result.is_error) io.err(`${result.result ?? result.errors?.join("\n") ?? "Execution error"}\n`)
      else io.out(`${result.result ?? ""}\n`)
      break
    case "json":
      io.out(JSON.stringify(flags.verbose ? messages : result) + "\n")
      break
    case "stream-json":
      break
  }
  return result.is_error ? 1 : 0
}
