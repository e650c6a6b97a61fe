/**
 * What the file tools know of the files in a session: which were read (or written), and their
 * modification time then. Edit and overwriting Write require a read whose mtime still matches, so
 * the model never writes over a file it has not seen or that changed under it. Kept in the
 * session's `fileState` Ref; outside a session nothing is recorded and nothing counts as read.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import { SessionState } from "../session/SessionState.js"

/** Records that `path` was read or written when its mtime was `mtimeMs`. @category Recording */
export const record = (path: string, mtimeMs: number): Effect.Effect<void> =>
  Effect.flatMap(Effect.serviceOption(SessionState), (state) =>
    Option.isNone(state) ? Effect.void : Ref.update(state.value.fileState, (m) => new Map(m).set(path, mtimeMs)))

/** The mtime recorded for `path`, if it was read in this session. @category Accessors */
export const lastSeen = (path: string): Effect.Effect<number | undefined> =>
  Effect.flatMap(Effect.serviceOption(SessionState), (state) =>
    Option.isNone(state) ? Effect.succeed(undefined) : Effect.map(Ref.get(state.value.fileState), (m) => m.get(path)))
