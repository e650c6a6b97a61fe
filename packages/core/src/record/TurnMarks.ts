/**
 * The turn lines of a journal: each submission's start with what was submitted (a prompt, a slash
 * command, or nothing for a turn that runs on from its tool calls), and its end (see
 * `JournalEntry.TurnStart`). A replay submits the recorded prompts and commands in order; a start
 * without its end is a turn a crash cut short.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { type UserMessage, UserMessage as UserMessageSchema } from "../message/Message.js"
import type { Journal } from "./Journal.js"

const counts = new WeakMap<Journal["Type"], number>()

const encodeUser = Schema.encodeSync(UserMessageSchema)

/** The prompt as a journal line holds it. */
const promptOf = (prompt: string | UserMessage | undefined): string | ReadonlyArray<unknown> | null => {
  if (prompt === undefined) return null
  if (typeof prompt === "string") return prompt
  return encodeUser(prompt).content
}

/** Journals a turn's start (`prompt` undefined: it runs on without one); answers the turn's number. @category Recording */
export const start = (journal: Journal["Type"], prompt: string | UserMessage | undefined): Effect.Effect<number> =>
  Effect.map(Clock.currentTimeMillis, (now) => {
    const turn = (counts.get(journal) ?? 0) + 1
    counts.set(journal, turn)
    journal.append({ type: "turn_start", turn, at: now - journal.startedAt, prompt: promptOf(prompt) })
    return turn
  })

/** Journals the end of turn `turn`. @category Recording */
export const end = (journal: Journal["Type"], turn: number): Effect.Effect<void> =>
  Effect.map(Clock.currentTimeMillis, (now) => journal.append({ type: "turn_end", turn, at: now - journal.startedAt }))

/**
 * `stream` (a submission's output) with its turn journaled around it when there is a journal: the
 * start as the stream starts, the end however it ends.
 *
 * @category Recording
 */
export const around = <A, E, R>(
  journal: Journal["Type"] | undefined,
  prompt: string | UserMessage | undefined,
  stream: Stream.Stream<A, E, R>
): Stream.Stream<A, E, R> =>
  journal === undefined
    ? stream
    : Stream.unwrapScoped(Effect.map(
      Effect.acquireRelease(start(journal, prompt), (turn) => end(journal, turn)),
      () => stream
    ))
