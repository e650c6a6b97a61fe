/**
 * Every tool call is bounded in time (under `Clock`): a call still running after its timeout is
 * interrupted (its resources released: a process group killed, a file closed) and ends as an error
 * result, "Read timed out after 120 s", that the model reads while the turn goes on.
 *
 * The timeout of a call of tool `T` is, first found: `KEEL_TOOL_TIMEOUT_MS_<T>` (the tool's name in
 * capitals, every other character `_`: `KEEL_TOOL_TIMEOUT_MS_READ`,
 * `KEEL_TOOL_TIMEOUT_MS_MCP__FILES__FETCH`); none when the tool bounds its calls itself
 * (`Tool.timeoutMs` is `Infinity`: Bash's own `timeout` input, MCP tools' `MCP_TOOL_TIMEOUT`, a
 * subagent, a question to the user); the tool's own default (`Tool.timeoutMs`);
 * `KEEL_TOOL_TIMEOUT_MS`; else {@link DEFAULT_TIMEOUT_MS}. `0` turns the bound off.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { type Any, ToolError } from "./Tool.js"

/** The timeout of a tool call when nothing sets one: 2 minutes. @category Constants */
export const DEFAULT_TIMEOUT_MS = 120_000

/** A call that ran past its timeout (it was interrupted). @category Errors */
export class ToolTimedOut extends Schema.TaggedError<ToolTimedOut>("@keel/core/ToolTimeout/ToolTimedOut")("ToolTimedOut", {
  toolName: Schema.String,
  millis: Schema.Number
}) {
  override get message(): string {
    return `${this.toolName} timed out after ${seconds(this.millis)} and was stopped ` +
      `(KEEL_TOOL_TIMEOUT_MS, or ${envName(this.toolName)} for this tool, sets the limit).`
  }
}

const seconds = (ms: number): string => `${Number((ms / 1000).toFixed(3))} s`

/** The variable that sets the timeout of `toolName`'s calls. @category Configuration */
export const envName = (toolName: string): string => `KEEL_TOOL_TIMEOUT_MS_${toolName.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`

const millis = (name: string) =>
  Config.option(
    Config.integer(name).pipe(Config.validate({ message: "must be a whole number of milliseconds, 0 or more", validation: (n) => n >= 0 }))
  )

/**
 * The timeout of `tool`'s calls (see the module's doc), or none; an invalid setting is logged and
 * skipped.
 *
 * @category Configuration
 */
export const timeoutFor = (tool: Any): Effect.Effect<Option.Option<Duration.Duration>> =>
  Effect.gen(function*() {
    const read = (name: string) =>
      millis(name).pipe(
        Effect.catchAll((e) => Effect.as(Effect.logWarning(`Ignoring ${name}: ${e}`), Option.none<number>()))
      )
    const own = yield* read(envName(tool.name))
    const chosen = Option.isSome(own)
      ? own.value
      : tool.timeoutMs !== undefined
      ? tool.timeoutMs
      : Option.getOrElse(yield* read("KEEL_TOOL_TIMEOUT_MS"), () => DEFAULT_TIMEOUT_MS)
    return chosen === 0 || !Number.isFinite(chosen) ? Option.none() : Option.some(Duration.millis(chosen))
  })

/**
 * `call` (a call of `tool`) bounded by the tool's timeout: past it, interrupted, and failed with
 * the {@link ToolTimedOut} message as a `ToolError` for the model.
 *
 * @category Combinators
 */
export const bounded = <A, R>(tool: Any, call: Effect.Effect<A, ToolError, R>): Effect.Effect<A, ToolError, R> =>
  Effect.flatMap(timeoutFor(tool), (timeout) =>
    Option.isNone(timeout)
      ? call
      : Effect.timeoutFail(call, {
        duration: timeout.value,
        onTimeout: () =>
          new ToolError({ message: new ToolTimedOut({ toolName: tool.name, millis: Duration.toMillis(timeout.value) }).message })
      }))
