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
import * as TranscriptCut from "./TranscriptCut.js"
import { type LoadError, SessionNotFound } from "./TranscriptError.js"

/** Whether `options` make the session a fork: `forkSession`, or a resume cut at a message. @category Loading */
export const isFork = (options: Pick<Options, "forkSession" | "resumeSessionAt">): boolean =>
  options.forkSession === true || options.resumeSessionAt !== undefined

/** Session `sessionId`'s transcript, cut after its message `at` (see `TranscriptCut`). */
const cutTranscript = (
  store: SessionStore.Service,
  cwd: string,
  sessionId: string,
  at: string
): Effect.Effect<Transcript.Loaded, LoadError> =>
  Effect.flatMap(store.loadEntries(cwd, sessionId), (decoded) => TranscriptCut.cutAt(decoded, at))

/**
 * The transcript `options` ask to continue, if any, from `store`; cut at `resumeSessionAt` when
 * given (a transcript passed loaded is read again from `store`, for its entries).
 *
 * @category Loading
 */
export const transcriptOf = (
  options: Pick<Options, "resume" | "continue" | "cwd" | "resumeSessionAt">,
  store: SessionStore.Service
): Effect.Effect<Transcript.Loaded | undefined, LoadError> => {
  const at = options.resumeSessionAt
  if (at !== undefined) {
    const { cwd, resume } = options
    if (resume !== undefined) return cutTranscript(store, cwd, typeof resume === "object" ? resume.sessionId : resume, at)
    if (options.continue !== true) return Effect.succeed(undefined)
    return Effect.flatMap(store.latest(cwd), (latest) =>
      Option.isNone(latest)
        ? Effect.fail(new SessionNotFound({ cwd, directory: store.directory(cwd), known: [] }))
        : cutTranscript(store, cwd, latest.value.sessionId, at))
  }
  if (typeof options.resume === "object") return Effect.succeed(options.resume)
  if (options.resume !== undefined) return store.load(options.cwd, options.resume)
  return options.continue === true ? SessionStore.loadLatest(store, options.cwd) : Effect.succeed(undefined)
}

/**
 * The transcript `options` ask to continue, loaded under its write lock when this session will
 * write it (a resume or continue that is not a fork, see {@link isFork}, with `persist`): the lock
 * is taken first, so what is loaded is what the file holds while this session appends to it, and a
 * second writer fails with `SessionLocked` before reading anything. Answers the id it locked (if
 * any), for `Options.locked`.
 *
 * @category Loading
 */
export const lockedTranscriptOf = (
  options: Pick<Options, "resume" | "continue" | "cwd" | "forkSession" | "resumeSessionAt" | "persist" | "locked">,
  store: SessionStore.Service
): Effect.Effect<{ readonly loaded: Transcript.Loaded | undefined; readonly locked: string | undefined }, LoadError, Scope.Scope> =>
  Effect.gen(function*() {
    const writes = options.persist !== false && !isFork(options)
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
