/**
 * The Claude Agent SDK's callback hooks over the stream-json control protocol. The host registers
 * them in `initialize` (`hooks: {Event: [{matcher, hookCallbackIds, timeout, onFailure}]}`); when
 * one fires, Keel sends `{"type": "control_request", "request_id", "request": {"subtype":
 * "hook_callback", "callback_id", "input", "tool_use_id"}}` on stdout and the host's
 * `control_response` carries the hook's JSON output (an error response is the hook's failure). A
 * host that does not answer within the matcher's timeout (default 60 s) is reported and the action
 * goes on (or is blocked, with `onFailure: "block"`); the request is then cancelled with a
 * `control_cancel_request`.
 *
 * @since 0.1.0
 */
import { HookEvent, HookMatcher, type Hooks, type HookOutput } from "@keel/core"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as ControlMessages from "../ControlMessages.js"

/** The bridge between Keel's hooks and the host's callbacks. @category Models */
export interface Bridge {
  /** The host's hooks, once `initialize` registered them (empty before). */
  readonly config: () => Hooks.Config
  /** Registers `initialize`'s `hooks`: the problems that refuse them (each naming its key), empty when registered. */
  readonly register: (hooks: unknown) => ReadonlyArray<string>
  /** Takes a `control_response` that answers a `hook_callback`; false when it answers something else. */
  readonly take: (response: ControlMessages.Response) => Effect.Effect<boolean>
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** A matcher of `initialize`'s hooks, read; or why it cannot be. */
const readMatcher = (value: unknown, at: string): { matcher: string | undefined; ids: Array<string>; timeout: number | undefined; onFailure: "continue" | "block" | undefined } | string => {
  if (!isRecord(value)) return `${at}: not a matcher object`
  const { hookCallbackIds, matcher, onFailure, timeout } = value
  if (matcher !== undefined && matcher !== null && typeof matcher !== "string") return `${at}.matcher: not a string`
  const bad = HookMatcher.problem(typeof matcher === "string" ? matcher : undefined)
  if (bad !== undefined) return `${at}.matcher ${JSON.stringify(matcher)}: ${bad}`
  if (!Array.isArray(hookCallbackIds) || !hookCallbackIds.every((id) => typeof id === "string")) {
    return `${at}.hookCallbackIds: not an array of strings`
  }
  if (timeout !== undefined && timeout !== null && !(typeof timeout === "number" && timeout > 0)) {
    return `${at}.timeout: not a positive number of seconds`
  }
  if (onFailure !== undefined && onFailure !== null && onFailure !== "continue" && onFailure !== "block") {
    return `${at}.onFailure ${JSON.stringify(onFailure)}: not "continue" or "block"`
  }
  return {
    matcher: typeof matcher === "string" ? matcher : undefined,
    ids: hookCallbackIds as Array<string>,
    timeout: typeof timeout === "number" ? timeout : undefined,
    onFailure: onFailure === "block" || onFailure === "continue" ? onFailure : undefined
  }
}

/**
 * A bridge writing its requests with `write` (one stdout line each), their ids from `uuid`.
 *
 * @category Constructors
 */
export const make = (write: (message: unknown) => void, uuid: () => string): Bridge => {
  let registered: Hooks.Config = {}
  const waiting = new Map<string, Deferred.Deferred<HookOutput.Raw>>()

  const callback = (id: string) => (input: HookEvent.HookInput, toolUseId: string | undefined): Effect.Effect<HookOutput.Raw> =>
    Effect.gen(function*() {
      const requestId = uuid()
      const answer = yield* Deferred.make<HookOutput.Raw>()
      waiting.set(requestId, answer)
      write({
        type: "control_request",
        request_id: requestId,
        request: { subtype: "hook_callback", callback_id: id, input, ...(toolUseId === undefined ? {} : { tool_use_id: toolUseId }) }
      })
      return yield* Deferred.await(answer).pipe(
        // Timed out or interrupted: the host is told to stop waiting on it.
        Effect.onInterrupt(() =>
          Effect.sync(() => {
            if (waiting.delete(requestId)) write({ type: "control_cancel_request", request_id: requestId })
          })
        )
      )
    })

  const register: Bridge["register"] = (hooks) => {
    if (hooks === undefined || hooks === null) return []
    if (!isRecord(hooks)) return ["hooks: not an object of events"]
    const problems: Array<string> = []
    const config: { [E in HookEvent.HookEvent]?: Array<Hooks.Matcher> } = {}
    for (const [event, matchers] of Object.entries(hooks)) {
      if (!HookEvent.isEvent(event)) {
        problems.push(`hooks.${event}: Keel does not fire ${event} hooks (it fires ${HookEvent.EVENTS.join(", ")})`)
        continue
      }
      if (!Array.isArray(matchers)) {
        problems.push(`hooks.${event}: not an array of matchers`)
        continue
      }
      matchers.forEach((value, i) => {
        const m = readMatcher(value, `hooks.${event}[${i}]`)
        if (typeof m === "string") return void problems.push(m)
        ;(config[event] ??= []).push({
          matcher: m.matcher,
          hooks: m.ids.map((id) => ({
            name: `callback ${id}`,
            timeout: m.timeout === undefined ? undefined : Duration.seconds(m.timeout),
            // Ignored on Stop and SubagentStop, as the SDK documents.
            onFailure: event === "Stop" || event === "SubagentStop" ? undefined : m.onFailure,
            run: callback(id)
          }))
        })
      })
    }
    if (problems.length === 0) registered = config
    return problems
  }

  const take: Bridge["take"] = (response) =>
    Effect.suspend(() => {
      const answer = waiting.get(response.requestId)
      if (answer === undefined) return Effect.succeed(false)
      waiting.delete(response.requestId)
      return Effect.as(
        Deferred.succeed(
          answer,
          response._tag === "Answer"
            ? { _tag: "Answered", output: response.answer }
            : { _tag: "Failed", message: `the host answered with an error: ${response.error}` }
        ),
        true
      )
    })

  return { config: () => registered, register, take }
}
