/**
 * Which uuid each message of a session goes by: one place decides it, so the SDK message that
 * reports a prompt, an answer or tool results (`SdkProjection`) and the transcript entry that
 * stores it (`TranscriptRecorder`) carry the same uuid, as Claude Code's stream-json messages carry
 * their `.jsonl` lines' uuids. A message is given a new uuid (the session's `Ids`) the first time
 * either asks; a message loaded from a transcript keeps its entry's uuid.
 *
 * @since 0.1.0
 */
import type { Message } from "../message/Message.js"

/** @category Models */
export interface MessageIds {
  /** The uuid of `message`: its entry's, once it has one; the same every time it is asked. */
  readonly of: (message: Message) => string
}

/**
 * Message uuids drawn from `uuid`, the messages of `known` (a loaded transcript's, see
 * `Transcript.Loaded.uuids`) keeping theirs.
 *
 * @category Constructors
 */
export const make = (uuid: () => string, known?: WeakMap<Message, string>): MessageIds => {
  const given = new WeakMap<Message, string>()
  return {
    of: (message) => {
      const found = given.get(message) ?? known?.get(message)
      if (found !== undefined) return found
      const fresh = uuid()
      given.set(message, fresh)
      return fresh
    }
  }
}
