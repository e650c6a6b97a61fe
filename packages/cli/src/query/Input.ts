/**
 * `query()`'s streaming input: the host's `AsyncIterable` of user messages, read as fast as the
 * host yields them, and each message checked and turned into what a session runs (a prompt string,
 * or a `UserMessage` of content blocks) with the priority it is admitted at.
 *
 * @since 0.1.0
 */
import { Admission, Message } from "@keel/core"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { isRecord, type SDKUserMessage } from "./Options.js"
import { QueryError } from "./QueryError.js"

/** A failure of the caller's prompt iterable, rethrown as it was. @category Errors */
export class PromptFailure extends Data.TaggedError("PromptFailure")<{ readonly error: unknown }> {}

/**
 * The caller's prompt messages, each pulled once the one before it has been handled. Unlike
 * `Stream.fromAsyncIterable`, closing does not wait for the iterator's `return()`: a generator
 * waiting for its next input would keep the query from closing. `onRead` sees each message as soon
 * as the iterator hands it over.
 *
 * @category Constructors
 */
export const messages = (
  iterable: AsyncIterable<SDKUserMessage>,
  onRead: (message: SDKUserMessage) => void
): Stream.Stream<SDKUserMessage, PromptFailure> =>
  Stream.unwrapScoped(Effect.map(
    Effect.acquireRelease(
      Effect.try({ try: () => iterable[Symbol.asyncIterator](), catch: (error) => new PromptFailure({ error }) }),
      (iterator) =>
        Effect.sync(() => {
          Promise.resolve(iterator.return?.()).catch(() => undefined)
        })
    ),
    (iterator) =>
      Stream.repeatEffectOption(
        Effect.tryPromise({
          try: () =>
            iterator.next().then((next) => {
              if (next.done !== true) onRead(next.value)
              return next
            }),
          catch: (error) => Option.some(new PromptFailure({ error }))
        }).pipe(
          Effect.flatMap((next) => next.done === true ? Effect.fail(Option.none()) : Effect.succeed(next.value))
        )
      )
  ))

/** A streamed message, checked: what the session runs, and at which priority it waits. @category Models */
export interface Prompt {
  readonly input: string | Message.UserMessage
  readonly priority: Admission.Priority | undefined
}

/**
 * A streamed message as a session prompt: string content as a prompt (slash commands, `@path`
 * mentions), blocks as a `UserMessage`; `priority` as the Agent SDK sends it. A message Keel cannot
 * run fails with a {@link QueryError} saying why.
 *
 * @category Constructors
 */
export const toPrompt = (input: SDKUserMessage): Effect.Effect<Prompt, QueryError> => {
  const bad = (why: string) =>
    Effect.fail(new QueryError({ message: `query(): a streamed prompt message ${why}`, code: 2 }))
  if (!isRecord(input) || input.type !== "user" || !isRecord(input.message) || input.message.role !== "user") {
    return bad(`must be { type: "user", message: { role: "user", content }, parent_tool_use_id: null }`)
  }
  if (input.shouldQuery === false) return bad("has shouldQuery: false; Keel runs a turn for every message")
  const priority = input.priority
  if (priority !== undefined && !Admission.PRIORITIES.includes(priority)) {
    return bad(`has priority ${JSON.stringify(priority)}, not "now", "next" or "later"`)
  }
  const content = input.message.content
  if (typeof content === "string") return Effect.succeed({ input: content, priority })
  return Message.decode({ role: "user", content }).pipe(
    Effect.flatMap((m) => m.role === "user" ? Effect.succeed({ input: m, priority }) : bad("is not a user message")),
    Effect.catchTag("ParseError", (e) => bad(`has content Keel cannot read: ${e.message.split("\n")[0]}`))
  )
}
