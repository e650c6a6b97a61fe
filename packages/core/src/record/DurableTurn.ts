/**
 * Durable turns: a turn that a crash cut open runs on when its session is resumed, instead of
 * being left half done. The session's journal says which turn was open (its `turn_start` has no
 * `turn_end`) and what became of each tool call (`RecordedResults`); the transcript says where the
 * conversation stopped. The turn runs on from there (`SessionRuntime.resume` queues it first):
 *
 * - the transcript ends with a user message (a prompt or tool results: the model request was in
 *   flight, or streaming, or a compaction was running before it): the request is sent again;
 * - it ends with an answer whose tool calls are unanswered: each call is answered by
 *   {@link answerOf} (a finished call keeps its recorded result, one cut short runs again only if
 *   its tool is idempotent, one that never ran runs), then the turn goes on as after any tool round;
 * - it ends with an answer without tool calls: the turn had finished; nothing runs.
 *
 * A compaction writes its boundary and summary in one append when it is done, so a crash inside
 * one leaves the conversation as it was before it, and the resumed turn compacts again if it still
 * needs to. A session not recorded has no journal: its cut calls are answered "interrupted" and
 * nothing runs on by itself.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { AssistantMessage, type Message, type ToolResultBlock, type ToolUseBlock, UserMessage } from "../message/Message.js"
import * as BashGrammar from "../permission/BashGrammar.js"
import type * as Tool from "../tool/Tool.js"
import { errorResult } from "../tool/ToolRuntime.js"
import type * as JournalEntry from "./JournalEntry.js"
import * as RecordedResults from "./RecordedResults.js"

/** What a resumed session learns from its journal. @category Models */
export interface Recovered {
  /** What the journal recorded of each tool call. */
  readonly calls: RecordedResults.Lookup
  /** Whether the journal's last turn started and never ended. */
  readonly openTurn: boolean
}

/**
 * Whether the last turn of `entries` started and never ended. Each process numbers its turns from
 * 1 under its own header; a later `turn_start` (a new turn, or the open one run on) supersedes.
 *
 * @category Reading
 */
export const isOpen = (entries: ReadonlyArray<JournalEntry.Entry>): boolean => {
  let open: number | undefined
  for (const entry of entries) {
    if (entry.type === "turn_start") open = entry.turn
    else if (entry.type === "turn_end" && entry.turn === open) open = undefined
  }
  return open !== undefined
}

/** What the journal `entries` tell a resume. @category Constructors */
export const recover = (entries: ReadonlyArray<JournalEntry.Entry>): Recovered => ({
  calls: RecordedResults.of(entries),
  openTurn: isOpen(entries)
})

/**
 * The conversation an open turn runs on from: `messages` as the transcript left them (before any
 * repair), when they end with a user message or with an answer whose tool calls wait; `undefined`
 * when there is nothing to run on (the answer was whole, or there is no conversation).
 *
 * @category Resuming
 */
export const continuation = (messages: ReadonlyArray<Message>): ReadonlyArray<Message> | undefined => {
  const last = messages.at(-1)
  if (last instanceof UserMessage) return messages
  if (last instanceof AssistantMessage && last.toolUses.length > 0) return messages
  return undefined
}

/**
 * Whether a repeat of call `use` of `tool` repeats nothing its first run did (see
 * `Tool.isIdempotent`). An unknown tool, or an input its schema does not decode, is not.
 *
 * @category Resuming
 */
export const isIdempotent = (tool: Tool.Any | undefined, use: ToolUseBlock): boolean => {
  if (tool === undefined) return false
  const input = Schema.decodeUnknownEither(tool.input)(use.input)
  if (Either.isLeft(input)) return false
  try {
    return (tool.isIdempotent ?? tool.isReadOnly)(input.right)
  } catch {
    return false
  }
}

/**
 * The answer a resumed turn gives call `use` without running it, or `undefined` when it runs: its
 * recorded result if it finished; if it was cut short, the `CUT_SHORT` error unless its tool is
 * idempotent (then it runs again); if it never ran, it runs.
 *
 * @category Resuming
 */
export const answerOf = (
  recorded: RecordedResults.Recorded | undefined,
  use: ToolUseBlock,
  tool: Tool.Any | undefined
): ToolResultBlock | undefined => {
  if (recorded === undefined) return undefined
  if (recorded._tag === "Finished") return recorded.result
  return isIdempotent(tool, use) ? undefined : errorResult(use.id, RecordedResults.CUT_SHORT)
}

/**
 * The answers a resumed turn gives the calls `uses` of its cut answer without running them (see
 * {@link answerOf}), by call id; those not in it run. Bash judges idempotence on its grammar: it
 * is loaded first.
 *
 * @category Resuming
 */
export const answers = (
  recovered: Recovered,
  uses: ReadonlyArray<ToolUseBlock>,
  toolOf: (name: string) => Tool.Any | undefined
): Effect.Effect<ReadonlyMap<string, ToolResultBlock>> =>
  Effect.map(BashGrammar.ready, () => {
    const answered = new Map<string, ToolResultBlock>()
    for (const use of uses) {
      const answer = answerOf(recovered.calls(use.id), use, toolOf(use.name))
      if (answer !== undefined) answered.set(use.id, answer)
    }
    return answered
  })
