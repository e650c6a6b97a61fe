/**
 * The summary of a compaction: one model call (background source) that summarises the older part of
 * the conversation in the nine sections of `SummaryPrompt`. If the summary request is itself too
 * long, its oldest turns are dropped (at most 3 times).
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { type Message, TextBlock, UserMessage } from "../message/Message.js"
import * as Accumulator from "../model/Accumulator.js"
import { isEvent, type ModelClient } from "../model/ModelClient.js"
import { describe as describeError, type ModelError } from "../model/ModelError.js"
import type { StageContext } from "../turn/Stage.js"
import * as SummaryPrompt from "./SummaryPrompt.js"
import { blocksOf, turnStarts } from "./Turns.js"

/** The summary's text, or why there is none. @category Models */
export type Result = { readonly text: string } | { readonly failure: string }

/** How many times the oldest turn is dropped from a summary request that is too long. @category Constants */
export const MAX_DROPS = 3

/** `messages` with `text` added to the end as a user message (merged into a final user message). */
const withUserText = (messages: ReadonlyArray<Message>, text: string): Array<Message> => {
  const last = messages[messages.length - 1]
  if (last instanceof UserMessage) {
    return [...messages.slice(0, -1), new UserMessage({ content: [...blocksOf(last), new TextBlock({ text })] })]
  }
  return [...messages, new UserMessage({ content: text })]
}

/**
 * One summary request for `head`, with the user's extra `instructions`: the trimmed text of the
 * answer. Fails with the model's error.
 *
 * @category Summaries
 */
export const summarize = (
  client: ModelClient["Type"],
  head: ReadonlyArray<Message>,
  context: StageContext,
  instructions: string | undefined
): Effect.Effect<string, ModelError> =>
  Effect.gen(function*() {
    const items = yield* Stream.runCollect(client.stream({
      model: context.model,
      max_tokens: Math.min(context.maxTokens, 20_000),
      system: SummaryPrompt.SYSTEM,
      messages: withUserText(head, SummaryPrompt.prompt(instructions)),
      ...(context.tools !== undefined ? { tools: context.tools } : {}),
      source: "background"
    }))
    // Only the attempt that completed: a retry layer below retracts what failed attempts streamed.
    const all = Chunk.toReadonlyArray(items)
    let from = 0
    for (let i = all.length - 1; i >= 0; i--) {
      const item = all[i]!
      if (item.type === "notice" && item._tag === "Retracted") {
        from = i + 1
        break
      }
    }
    return Accumulator.fold(all.slice(from).filter(isEvent)).message.text.trim()
  })

/**
 * The summary of `head`, dropping its oldest turns when the summary request itself is too long (at
 * most {@link MAX_DROPS} times). Never fails: a failure is a {@link Result}.
 *
 * @category Summaries
 */
export const summaryOf = (
  client: ModelClient["Type"],
  head: ReadonlyArray<Message>,
  context: StageContext,
  instructions: string | undefined
): Effect.Effect<Result> =>
  Effect.gen(function*() {
    let current = head
    for (let attempt = 0; attempt <= MAX_DROPS; attempt++) {
      const result = yield* Effect.either(summarize(client, current, context, instructions))
      if (result._tag === "Right") {
        return result.right.length > 0 ? { text: result.right } : { failure: "the summary came back empty" }
      }
      const error: ModelError = result.left
      if (error._tag !== "PromptTooLong") return { failure: `the summary request failed: ${describeError(error)}` }
      const starts = turnStarts(current)
      if (starts.length < 2 || attempt === MAX_DROPS) {
        return { failure: "the summary request is too long even without its oldest turns" }
      }
      current = current.slice(starts[1]!)
    }
    return { failure: "unreachable" }
  })
