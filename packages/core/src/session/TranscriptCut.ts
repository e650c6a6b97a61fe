/**
 * A transcript cut at one of its messages (`resumeSessionAt`, `--resume-session-at`): what the
 * session was when that message had been written, for a fork to start from. The cut is a replay of
 * the file's entries up to it ({@link cutAt}), so everything a replay restores is as it was then:
 * the conversation (as it stood: a compaction after the message is not in it), the token totals,
 * the file read state, the model, the system prompts and the turn envelopes.
 *
 * Where the cut falls:
 * - after the message's entry, and the entries written with it up to the next message, rewrite or
 *   model change: its call's `usage`, the `file_state` of its round, and for a prompt its turn's
 *   `system_prompt` and `envelope`;
 * - an answer with tool calls takes the tool results that follow it (their entries included): the
 *   history stays valid, every `tool_use` answered. Results that never followed (a crash) are
 *   answered when the session starts, as for any resume (`answerDangling`).
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

/** Whether `next` is the entry of the tool results of `entry`'s answer (one of them at least). */
const answers = (entry: TranscriptEntry.Entry, next: TranscriptEntry.Entry | undefined): boolean => {
  if (entry.type !== "assistant" || next?.type !== "user") return false
  const uses = new Set(entry.message.toolUses.map((u) => u.id))
  return uses.size > 0 && next.message.toolResults.some((r) => uses.has(r.tool_use_id))
}

/**
 * The index of the last entry a cut after the entry at `at` keeps (see the module's doc).
 *
 * @category Cutting
 */
export const endOfCut = (entries: ReadonlyArray<TranscriptEntry.Entry>, at: number): number => {
  const runFrom = (i: number) => {
    let last = i
    while (last + 1 < entries.length && !ends(entries[last + 1]!)) last++
    return last
  }
  const end = runFrom(at)
  return answers(entries[at]!, entries[end + 1]) ? runFrom(end + 1) : end
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
  const kept = entries.slice(0, endOfCut(entries, at) + 1)
  return Either.map(
    replayEntries(kept, { file: loaded.file, sessionId: loaded.sessionId }),
    (cut) => ({ ...cut, warnings: loaded.warnings })
  )
}
