/**
 * The turn lines of a journal: a turn's start with what was submitted, and its end (see
 * `JournalEntry.TurnStart`). A replay submits the recorded prompts in order; a start without its
 * end is a turn a crash cut short.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
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
