/**
 * `query()`'s `hooks` option, as the Agent SDK's: `{Event: [{matcher, hooks: [callback], timeout,
 * onFailure}]}`, each callback `(input, toolUseID, {signal}) => Promise<output>` run as a Keel hook
 * (aborted when it times out or the turn stops; a callback that throws is its hook's failure).
 * Hooks for an event Keel does not fire, and malformed matchers, are refused by their key.
 *
 * @since 0.1.0
 */
import { HookEvent, HookMatcher, type HookOutput, type Hooks } from "@keel/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"

/**
 * A hook callback, as the Agent SDK types it: its `input` is one of `HookEvent.HookInput` (typed
 * loosely so the SDK's own callback type, over its wider input union, plugs in unchanged), and it
 * answers a hook's JSON output.
 *
 * @category Models
 */
export type HookCallback = (
  input: any,
  toolUseID: string | undefined,
  options: { signal: AbortSignal }
) => Promise<any>

/** Callbacks under one matcher. @category Models */
export interface HookCallbackMatcher {
  matcher?: string
  hooks: Array<HookCallback>
  /** Seconds (default 60). */
  timeout?: number
  onFailure?: "continue" | "block"
}

/** The option: matchers by event name. @category Models */
export type HooksOption = Partial<Record<string, Array<HookCallbackMatcher>>>

const runCallback = (callback: HookCallback) => (input: HookEvent.HookInput, toolUseId: string | undefined) =>
  Effect.tryPromise({
    try: (signal) => callback(input, toolUseId, { signal }),
    catch: (e) => e
  }).pipe(
    Effect.map((output): HookOutput.Raw => ({ _tag: "Answered", output })),
    Effect.catchAll((e) =>
      Effect.succeed<HookOutput.Raw>({ _tag: "Failed", message: `the callback threw: ${e instanceof Error ? e.message : String(e)}` })
    )
  )

/**
 * The option as a hooks config, or the problems (each naming its key) that refuse it.
 *
 * @category Constructors
 */
export const fromOption = (option: unknown): { readonly config: Hooks.Config } | { readonly problems: ReadonlyArray<string> } => {
  if (typeof option !== "object" || option === null || Array.isArray(option)) return { problems: ["hooks must be an object of events"] }
  const problems: Array<string> = []
  const config: { [E in HookEvent.HookEvent]?: Array<Hooks.Matcher> } = {}
  for (const [event, matchers] of Object.entries(option as Record<string, unknown>)) {
    if (matchers === undefined) continue
    if (!HookEvent.isEvent(event)) {
      problems.push(`hooks.${event}: Keel does not fire ${event} hooks (it fires ${HookEvent.EVENTS.join(", ")})`)
      continue
    }
    if (!Array.isArray(matchers)) {
      problems.push(`hooks.${event} must be an array of matchers`)
      continue
    }
    matchers.forEach((m: HookCallbackMatcher, i) => {
      const at = `hooks.${event}[${i}]`
      const bad = HookMatcher.problem(m?.matcher)
      if (bad !== undefined) return void problems.push(`${at}.matcher: ${bad}`)
      if (!Array.isArray(m?.hooks) || !m.hooks.every((h) => typeof h === "function")) {
        return void problems.push(`${at}.hooks must be an array of functions`)
      }
      if (m.timeout !== undefined && !(typeof m.timeout === "number" && m.timeout > 0)) {
        return void problems.push(`${at}.timeout must be a positive number of seconds`)
      }
      ;(config[event] ??= []).push({
        matcher: m.matcher,
        hooks: m.hooks.map((callback, j) => ({
          name: `${event}[${i}].hooks[${j}]`,
          timeout: m.timeout === undefined ? undefined : Duration.seconds(m.timeout),
          onFailure: event === "Stop" || event === "SubagentStop" ? undefined : m.onFailure,
          run: runCallback(callback)
        }))
      })
    })
  }
  return problems.length > 0 ? { problems } : { config }
}
