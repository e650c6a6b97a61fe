/**
 * What the file tools know of the files in a session: which were read (or written), and their
 * modification time then. Edit and overwriting Write require a read whose mtime still matches, so
 * the model never writes over a file it has not seen or that changed under it. Kept in the
 * session's `fileState` Ref: the session is a requirement of both operations.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { SessionState } from "../session/SessionState.js"

/** Records that `path` was read or written when its mtime was `mtimeMs`. @category Recording */
export const record = (path: string, mtimeMs: number): Effect.Effect<void, never, SessionState> =>
  Effect.flatMap(SessionState, (state) => Ref.update(state.fileState, (m) => new Map(m).set(path, mtimeMs)))

/** The mtime recorded for `path`, if it was read in this session. @category Accessors */
export const lastSeen = (path: string): Effect.Effect<number | undefined, never, SessionState> =>
  Effect.flatMap(SessionState, (state) => Effect.map(Ref.get(state.fileState), (m) => m.get(path)))
