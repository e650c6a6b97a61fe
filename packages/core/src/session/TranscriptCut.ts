/**
 * A transcript cut at one of its messages (`resumeSessionAt`, `--resume-session-at`): what the
 * session was when that message had been written, for a fork to start from. The cut is a replay of
 * the file's entries up to it ({@link cutAt}), so everything a replay restores is as it was then:
 * the conversation (as it stood: a compaction after the message is not in it), the token totals,
 * the file read state, the model, the system prompts and the turn envelopes.
 *
 * The cut falls after the message's entry and the entries written with it, up to the next message,
 * rewrite or model change: its call's `usage`, the `file_state` of its round, and for a prompt its
 * turn's `system_prompt` and `envelope`. An answer with tool calls ends the history without their
 * results, as Claude Code cuts it: the session answers those calls when it starts, as it answers
 * the calls of a session cut by a crash (`Transcript.answerDangling`), so every `tool_use` is
 * answered and the model is told the calls did not finish. The `file_state` written after such an
 * answer is its calls' (they start as it streams): it is not kept, so the file read state is what
 * it was before them.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import type * as Transcript from "./Transcript.js"
import { replayEntries } from "./Transcript.js"
import type * as TranscriptEntry from "./TranscriptEntry.js"
import { type CorruptTranscript, MessageNotFound } from "./TranscriptError.js"

/** Entries that end what was written with a message: the next message, a rewrite, a model change. */
const ends = (entry: TranscriptEntry.Entry): boolean =>
  entry.type === "user" || entry.type === "assistant" || entry.type === "rewrite" || entry.type === "model"

/**
 * The index of the last entry a cut after the entry at `at` keeps (see the module's doc).
 *
 * @category Cutting
 */
export const endOfCut = (entries: ReadonlyArray<TranscriptEntry.Entry>, at: number): number => {
  let last = at
  while (last + 1 < entries.length && !ends(entries[last + 1]!)) last++
  return last
}

/**
 * Session `decoded` as it was once its `user` or `assistant` message `uuid` had been written (see
 * the module's doc); `MessageNotFound` when no such message is in the file.
 *
 * @category Cutting
 */
export const cutAt = (
  decoded: Transcript.Decoded,
  uuid: string
): Either.Either<Transcript.Loaded, MessageNotFound | CorruptTranscript> => {
  const { entries, loaded } = decoded
  const at = entries.findIndex((e) => e.uuid === uuid)
  const entry = entries[at]
  if (entry === undefined || (entry.type !== "user" && entry.type !== "assistant")) {
    return Either.left(
      new MessageNotFound({ sessionId: loaded.sessionId, uuid, file: loaded.file, ...(entry !== undefined ? { found: entry.type } : {}) })
    )
  }
  // An answer's tool calls are cut off: the files they read are not read in the fork.
  const calls = entry.type === "assistant" && entry.message.toolUses.length > 0
  const after = entries.slice(at + 1, endOfCut(entries, at) + 1).filter((e) => !(calls && e.type === "file_state"))
  const kept = [...entries.slice(0, at + 1), ...after]
  return Either.map(
    replayEntries(kept, { file: loaded.file, sessionId: loaded.sessionId }),
    (cut) => ({ ...cut, warnings: loaded.warnings })
  )
}
