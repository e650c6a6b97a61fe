/**
 * The hooks service: for an event, every hook whose matcher matches runs (at the same time, each
 * under its timeout, default 60 s as Claude Code), and their results merge into one `Outcome`
 * (`HookOutcome.merge`). A hook that times out, crashes or cannot start is reported in the
 * outcome's notices and never fails or hangs the caller; a host callback registered with
 * `onFailure: "block"` turns such a failure into a block. Interrupting the caller interrupts its
 * hooks (a command hook's process is killed).
 *
 * Every hook run can be observed (`Options.observe`): a `Started` and a `Responded` event each,
 * which the CLI prints as Claude Code's `system/hook_started` and `system/hook_response` messages
 * with `--include-hook-events`. `layerNone` is the service without hooks.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ids from "../ids/Ids.js"
import { type Fired, type HookEvent, type HookInput, hookName, matchQuery } from "./HookEvent.js"
import * as HookMatcher from "./HookMatcher.js"
import * as HookOutcome from "./HookOutcome.js"
import * as HookOutput from "./HookOutput.js"

/** A hook's default timeout (Claude Code's). @category Constants */
export const DEFAULT_TIMEOUT: Duration.Duration = Duration.seconds(60)

/** One hook: a command, or a host's callback. @category Models */
export interface Hook {
  /** What reports call it: the command, or the callback's id. */
  readonly name: string
  /** Its time limit (default {@link DEFAULT_TIMEOUT}). */
  readonly timeout?: Duration.Duration | undefined
  /** What a failure of it does: reported and the action goes on (`continue`, the default), or a block. */
  readonly onFailure?: "continue" | "block" | undefined
  /** Runs it on the event's input (`toolUseId` set for tool events); never fails. */
  readonly run: (input: HookInput, toolUseId: string | undefined) => Effect.Effect<HookOutput.Raw>
}

/** Hooks under one matcher. @category Models */
export interface Matcher {
  readonly matcher?: string | undefined
  readonly hooks: ReadonlyArray<Hook>
}

/** The hooks of each event, in the order they run and merge. @category Models */
export type Config = { readonly [E in HookEvent]?: ReadonlyArray<Matcher> }

/** A hook run, as it starts and as it ends. @category Models */
export type Lifecycle =
  | { readonly _tag: "Started"; readonly id: string; readonly name: string; readonly event: HookEvent; readonly sessionId: string }
  | {
    readonly _tag: "Responded"
    readonly id: string
    readonly name: string
    readonly event: HookEvent
    readonly sessionId: string
    readonly stdout: string
    readonly stderr: string
    readonly exitCode: number | undefined
    readonly outcome: "success" | "error" | "cancelled"
  }

/** Options of {@link make}. @category Models */
export interface Options {
  /** Where the transcript of session `sessionId` in `cwd` is (the inputs' `transcript_path`). */
  readonly transcriptPath?: ((cwd: string, sessionId: string) => string) | undefined
  /** Told of every hook run (`--include-hook-events`). */
  readonly observe?: ((event: Lifecycle) => Effect.Effect<void>) | undefined
  /** The ids of hook runs (default random UUIDs). */
  readonly uuid?: (() => string) | undefined
}

/** @category Models */
export interface Service {
  /** The events that have hooks (a caller may skip building an input for the others). */
  readonly events: ReadonlySet<HookEvent>
  /** Runs the hooks of the input's event that match it, and merges their outcomes. */
  readonly run: (input: Fired, options?: { readonly toolUseId?: string | undefined }) => Effect.Effect<HookOutcome.Outcome>
}

/** @category Context */
export class Hooks extends Context.Tag("@keel/core/Hooks")<Hooks, Service>() {}

/** What one run's raw result says to its lifecycle event. */
const responded = (raw: HookOutput.Raw | undefined, result: HookOutput.Result) => {
  if (raw === undefined) return { stdout: "", stderr: "", exitCode: undefined, outcome: "cancelled" as const }
  switch (raw._tag) {
    case "Exited":
      return {
        stdout: raw.stdout,
        stderr: raw.stderr,
        exitCode: raw.exitCode,
        outcome: raw.exitCode === 0 && result._tag === "Success" ? "success" as const : "error" as const
      }
    case "Answered":
      return {
        stdout: JSON.stringify(raw.output ?? {}),
        stderr: "",
        exitCode: undefined,
        outcome: result._tag === "Success" ? "success" as const : "error" as const
      }
    case "Failed":
      return { stdout: "", stderr: raw.message, exitCode: undefined, outcome: "error" as const }
  }
}

/**
 * The service over `config`.
 *
 * @category Constructors
 */
export const make = (config: Config, options: Options = {}): Service => {
  const events = new Set(
    (Object.keys(config) as Array<HookEvent>).filter((e) => (config[e] ?? []).some((m) => m.hooks.length > 0))
  )
  const uuid = options.uuid ?? Ids.crypto.uuid
  const observe = options.observe ?? (() => Effect.void)

  const runOne = (hook: Hook, input: HookInput, toolUseId: string | undefined): Effect.Effect<HookOutput.Result> =>
    Effect.gen(function*() {
      const id = uuid()
      const name = hookName(input)
      const event = input.hook_event_name
      const sessionId = input.session_id
      yield* observe({ _tag: "Started", id, name, event, sessionId })
      const timeout = hook.timeout ?? DEFAULT_TIMEOUT
      const raw = yield* hook.run(input, toolUseId).pipe(Effect.timeoutOption(timeout))
      const read: HookOutput.Result = Option.isNone(raw)
        ? { _tag: "NonBlocking", message: `The hook ${hook.name} timed out after ${Duration.format(timeout)} and was stopped` }
        : HookOutput.read(hook.name, raw.value)
      yield* observe({ _tag: "Responded", id, name, event, sessionId, ...responded(Option.getOrUndefined(raw), read) })
      // A failed host callback that guards an action blocks it when its matcher says so.
      return read._tag === "NonBlocking" && hook.onFailure === "block" ? { _tag: "Blocking", reason: read.message } : read
    })

  const run: Service["run"] = (fired, runOptions = {}) => {
    const event = fired.hook_event_name
    if (!events.has(event)) return Effect.succeed(HookOutcome.empty)
    const query = matchQuery(fired)
    const hooks = (config[event] ?? []).filter((m) => HookMatcher.matches(m.matcher, query)).flatMap((m) => m.hooks)
    if (hooks.length === 0) return Effect.succeed(HookOutcome.empty)
    const input = {
      ...fired,
      transcript_path: options.transcriptPath?.(fired.cwd, fired.session_id) ?? ""
    } as HookInput
    return Effect.map(
      Effect.forEach(hooks, (hook) => runOne(hook, input, runOptions.toolUseId), { concurrency: "unbounded" }),
      (results) => HookOutcome.merge(event, results)
    )
  }

  return Hooks.of({ events, run })
}

/** No hooks: every event's outcome is empty. @category Constructors */
export const none: Service = make({})

/** The service without hooks. @category Layers */
export const layerNone: Layer.Layer<Hooks> = Layer.succeed(Hooks, none)

/** The service over `config`. @category Layers */
export const layer = (config: Config, options: Options = {}): Layer.Layer<Hooks> => Layer.succeed(Hooks, make(config, options))

/** Merges configs: each event's matchers of `a`, then those of `b`. @category Combinators */
export const concat = (a: Config, b: Config): Config => {
  const out: { [E in HookEvent]?: ReadonlyArray<Matcher> } = { ...a }
  for (const event of Object.keys(b) as Array<HookEvent>) out[event] = [...(a[event] ?? []), ...(b[event] ?? [])]
  return out
}

/**
 * The text a hook's context reaches the model in: one `<system-reminder>` per piece, saying which
 * event's hook it comes from.
 *
 * @category Rendering
 */
export const contextText = (event: HookEvent, context: ReadonlyArray<string>): string =>
  context.map((text) => `<system-reminder>\nFrom a ${event} hook:\n${text}\n</system-reminder>`).join("\n")

/**
 * A service that asks `current` for the service to use at each use: for hooks registered while
 * the session runs (a host's `initialize`).
 *
 * @category Constructors
 */
export const delegating = (current: () => Service): Service =>
  Hooks.of({
    get events() {
      return current().events
    },
    run: (input, options) => Effect.suspend(() => current().run(input, options))
  })
