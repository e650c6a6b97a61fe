/**
 * Resuming a saved session: which transcript the options ask for, and the state it restores (the
 * conversation the model last saw, token totals, file read state, the last call's model).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import type { Options } from "./SessionOptions.js"
import type * as SessionState from "./SessionState.js"
import * as SessionStore from "./SessionStore.js"
import type * as Transcript from "./Transcript.js"
import { type LoadError, SessionNotFound } from "./TranscriptError.js"

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
 * The transcript `options` ask to continue, loaded under its write lock when this session will
 * write it (a resume or continue that is not a fork, with `persist`): the lock is taken first, so
 * what is loaded is what the file holds while this session appends to it, and a second writer
 * fails with `SessionLocked` before reading anything. Answers the id it locked (if any), for
 * `Options.locked`.
 *
 * @category Loading
 */
export const lockedTranscriptOf = (
  options: Pick<Options, "resume" | "continue" | "cwd" | "forkSession" | "persist" | "locked">,
  store: SessionStore.Service
): Effect.Effect<{ readonly loaded: Transcript.Loaded | undefined; readonly locked: string | undefined }, LoadError, Scope.Scope> =>
  Effect.gen(function*() {
    const writes = options.persist !== false && options.forkSession !== true
    const { cwd, resume } = options
    const lockAndLoad = (id: string) =>
      Effect.gen(function*() {
        if (options.locked !== id) yield* store.lock(cwd, id)
        return { loaded: yield* store.load(cwd, id), locked: id }
      })
    if (!writes || typeof resume === "object") return { loaded: yield* transcriptOf(options, store), locked: options.locked }
    if (resume !== undefined) {
      // An id with no transcript fails as not found, without a lock file (or folder) made for it.
      return SessionStore.isValidSessionId(resume) && (yield* store.exists(cwd, resume))
        ? yield* lockAndLoad(resume)
        : { loaded: yield* store.load(cwd, resume), locked: options.locked }
    }
    if (options.continue !== true) return { loaded: undefined, locked: options.locked }
    const latest = yield* store.latest(cwd)
    if (Option.isNone(latest)) {
      return yield* Effect.fail(new SessionNotFound({ cwd, directory: store.directory(cwd), known: [] }))
    }
    return yield* lockAndLoad(latest.value.sessionId)
  })

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
