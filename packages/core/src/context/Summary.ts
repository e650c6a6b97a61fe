/**
 * The summary of a compaction: one model call (background source) over the conversation as it
 * stands, with the summary instruction (`SummaryPrompt.prompt`) appended after its last message. The
 * request is the conversation's own (model, system prompt, tools, thinking, parameters: see
 * `StageContext.request`), with its cache breakpoint where the conversation's previous request put
 * it (`ModelRequest.cacheTailAt`), so everything up to there is read from the prompt cache. What is
 * kept of the answer is its `<summary>` (`SummaryPrompt.summaryText`). If the summary request is
 * itself too long, its oldest turns are dropped (at most 3 times).
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { AssistantMessage, type Message, TextBlock, UserMessage } from "../message/Message.js"
import * as Accumulator from "../model/Accumulator.js"
import { isEvent, type ModelClient } from "../model/ModelClient.js"
import { describe as describeError, type ModelError } from "../model/ModelError.js"
import type { ModelRequest } from "../model/ModelRequest.js"
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
 * Where the conversation's previous request ended: the last user message before its last answer
 * (that request's tail breakpoint), or `undefined` when no answer came yet.
 *
 * @category Accessors
 */
export const previousTail = (messages: ReadonlyArray<Message>): number | undefined => {
  let i = messages.length - 1
  while (i >= 0 && !(messages[i] instanceof AssistantMessage)) i--
  while (i >= 0 && !(messages[i] instanceof UserMessage)) i--
  return i >= 0 ? i : undefined
}

/**
 * The summary request for `messages`: the conversation's request (`context.request`, else what the
 * context says of it) with the instruction after the last message, and the cache breakpoint where
 * the previous request had it when `shareCache` (the messages are the conversation's, unchanged).
 *
 * @category Summaries
 */
export const requestFor = (
  messages: ReadonlyArray<Message>,
  context: StageContext,
  instructions: string | undefined,
  shareCache: boolean
): ModelRequest => {
  const shape = context.request ?? {
    model: context.model,
    max_tokens: context.maxTokens,
    ...(context.system !== undefined ? { system: context.system } : {}),
    ...(context.tools !== undefined ? { tools: context.tools } : {})
  }
  const tail = shareCache ? previousTail(messages) : undefined
  return {
    ...shape,
    messages: withUserText(messages, SummaryPrompt.prompt(instructions)),
    source: "background",
    ...(tail !== undefined ? { cacheTailAt: tail } : {})
  }
}

/**
 * One summary request (see {@link requestFor}): the summary kept of the answer. Fails with the
 * model's error. The answer is text only; a tool call in it is never run: its text alone counts.
 *
 * @category Summaries
 */
export const summarize = (
  client: ModelClient["Type"],
  messages: ReadonlyArray<Message>,
  context: StageContext,
  instructions: string | undefined,
  shareCache = true
): Effect.Effect<string, ModelError> =>
  Effect.gen(function*() {
    const items = yield* Stream.runCollect(client.stream(requestFor(messages, context, instructions, shareCache)))
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
    return SummaryPrompt.summaryText(Accumulator.fold(all.slice(from).filter(isEvent)).message.text)
  })

/**
 * The summary of `messages`, dropping its oldest turns when the summary request itself is too long
 * (at most {@link MAX_DROPS} times; a shortened conversation shares no cache). Never fails: a
 * failure is a {@link Result}.
 *
 * @category Summaries
 */
export const summaryOf = (
  client: ModelClient["Type"],
  messages: ReadonlyArray<Message>,
  context: StageContext,
  instructions: string | undefined
): Effect.Effect<Result> =>
  Effect.gen(function*() {
    let current = messages
    for (let attempt = 0; attempt <= MAX_DROPS; attempt++) {
      const result = yield* Effect.either(summarize(client, current, context, instructions, attempt === 0))
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
