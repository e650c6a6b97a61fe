/**
 * Resuming a saved session: which transcript the options ask for, and the state it restores (the
 * conversation the model last saw, token totals, file read state, the last call's model).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type { Options } from "./SessionOptions.js"
import type * as SessionState from "./SessionState.js"
import * as SessionStore from "./SessionStore.js"
import type * as Transcript from "./Transcript.js"
import type { LoadError } from "./TranscriptError.js"

/** The transcript `options` ask to continue, if any, from `store`. @category Loading */
export const transcriptOf = (
  options: Pick<Options, "resume" | "continue" | "cwd">,
  store: SessionStore.Service
): Effect.Effect<Transcript.Loaded | undefined, LoadError> => {
  if (typeof options.resume === "object") return Effect.succeed(options.resume)
  if (options.resume !== undefined) return store.load(options.cwd, options.resume)
  return options.continue === true ? SessionStore.loadLatest(store, options.cwd) : Effect.succeed(undefined)
}

/**
 * Puts a loaded transcript's totals into fresh state: usage, file read state, the last call's
 * model, and the runtime's facts (the goal, the queued inputs, the actions' history), which the
 * session's runtime takes up when it starts.
 *
 * @category Loading
 */
export const restore = (state: SessionState.Service, loaded: Transcript.Loaded): Effect.Effect<void> =>
  Effect.all([
    Ref.set(state.usage, loaded.usage),
    Ref.set(state.fileState, loaded.fileState),
    Ref.set(state.model, loaded.lastModel),
    Ref.set(state.goal, loaded.goal),
    Ref.set(state.queued, loaded.queued),
    Ref.set(state.actionLog, loaded.actions)
  ], { discard: true })
