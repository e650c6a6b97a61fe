/**
 * One compaction: the older part of the conversation becomes its summary (`Summary`), followed by
 * the most recently read files re-read from disk (`FileRestore`) and the recent turns verbatim. The
 * result must be smaller than the input, or the compaction fails. When to compact, and how often a
 * failure may repeat, is `Autocompact`'s and `CompactionBreaker`'s.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { AssistantMessage, type Message, TextBlock, UserMessage } from "../message/Message.js"
import type { ModelClient } from "../model/ModelClient.js"
import type { Compaction, StageContext } from "../turn/Stage.js"
import * as FileRestore from "./FileRestore.js"
import * as Summary from "./Summary.js"
import * as SummaryPrompt from "./SummaryPrompt.js"
import * as TokenEstimate from "./TokenEstimate.js"
import { blocksOf, turnStarts } from "./Turns.js"

/** Options: the window, and the files re-read (`FileRestore.Options`). @category Models */
export interface Options extends FileRestore.Options {
  /** The context window in tokens (default: the model's, see `TokenEstimate.windowFor`). */
  readonly window?: number | undefined
}

/** How one compaction went. @category Models */
export type Outcome =
  | { readonly _tag: "Compacted"; readonly messages: ReadonlyArray<Message>; readonly compaction: Compaction }
  | { readonly _tag: "Failed"; readonly reason: string }

/** What a compaction is asked to do. @category Models */
export interface Request {
  readonly trigger: "auto" | "manual"
  /** Turns kept verbatim at the end (1 for autocompact, 3 for the reactive one). */
  readonly keepTurns: number
  /** Extra instructions for the summary (`/compact ...`). */
  readonly instructions?: string | undefined
}

/** The context window: the option, or the model's. @category Accessors */
export const windowOf = (options: Options, context: StageContext): number =>
  options.window ?? TokenEstimate.windowFor(context.model)

/**
 * Where the kept turns start: the last `keepTurns` turns, fewer while they take more than
 * `tailBudget` tokens, and never the first turn (something must be summarised). A conversation of
 * one long turn (a long tool loop) is summarised whole and resumed from the summary.
 *
 * @category Accessors
 */
export const tailStart = (messages: ReadonlyArray<Message>, keepTurns: number, tailBudget: number): number => {
  const starts = turnStarts(messages)
  let first = Math.min(starts.length, Math.max(1, starts.length - keepTurns))
  while (first < starts.length && TokenEstimate.ofMessages(messages.slice(starts[first]!)) > tailBudget) first++
  return first < starts.length ? starts[first]! : messages.length
}

/** An answer whose usage no longer describes the conversation it is in: estimated by size instead. */
const withoutUsage = (message: Message): Message =>
  message instanceof AssistantMessage && message.usage !== undefined
    ? new AssistantMessage({
      content: message.content,
      ...(message.id !== undefined ? { id: message.id } : {}),
      ...(message.model !== undefined ? { model: message.model } : {}),
      ...(message.stop_reason !== undefined ? { stop_reason: message.stop_reason } : {}),
      ...(message.stop_sequence !== undefined ? { stop_sequence: message.stop_sequence } : {})
    })
    : message

/**
 * Compacts `messages` as `request` asks: the summary by `client`, the files re-read through `fs`.
 * Never fails: a failure is an {@link Outcome}.
 *
 * @category Compaction
 */
export const compact = (
  client: ModelClient["Type"],
  fs: FileSystem.FileSystem,
  options: Options,
  messages: ReadonlyArray<Message>,
  context: StageContext,
  request: Request
): Effect.Effect<Outcome> =>
  Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    const pre = TokenEstimate.ofRequest(messages)
    // The tail: the recent turns, within a quarter of the window.
    const start = tailStart(messages, request.keepTurns, windowOf(options, context) / 4)
    const head = messages.slice(0, start)
    const tail = messages.slice(start).map(withoutUsage)
    if (head.length === 0) {
      return { _tag: "Failed", reason: "there is nothing before the recent turns to summarise" } as Outcome
    }
    const summary = yield* Summary.summaryOf(client, head, context, request.instructions)
    if ("failure" in summary) return { _tag: "Failed", reason: summary.failure } as Outcome
    const files = yield* FileRestore.restoredFiles(fs, options, head, tail, context.cwd)
    const opening = [new TextBlock({ text: SummaryPrompt.continuation(summary.text) }), ...files]
    // With no tail, a conversation that was waiting for an answer is told to go on; one that ended
    // with an answer (a manual compaction between turns) waits for the user's next prompt.
    const waiting = messages.at(-1) instanceof UserMessage
    const compacted: Array<Message> = tail.length === 0
      ? [new UserMessage({ content: waiting ? [...opening, new TextBlock({ text: SummaryPrompt.RESUME })] : opening })]
      : [new UserMessage({ content: [...opening, ...blocksOf(tail[0] as UserMessage)] }), ...tail.slice(1)]
    const post = TokenEstimate.ofMessages(compacted)
    if (post >= pre) {
      const reason = `the compacted conversation (~${post} tokens) is not smaller than ~${pre}`
      return { _tag: "Failed", reason } as Outcome
    }
    const now = yield* Clock.currentTimeMillis
    return {
      _tag: "Compacted",
      messages: compacted,
      compaction: { trigger: request.trigger, preTokens: pre, postTokens: post, durationMs: now - startedAt }
    } as Outcome
  })
