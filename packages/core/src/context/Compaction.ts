/**
 * One compaction: the whole conversation is summarised (`Summary`, a request that shares the
 * conversation's cached prefix), and the conversation becomes the summary, a pointer to the
 * session's transcript, the files read before it (`FileRestore`: small ones attached, large ones
 * named), and the end of the conversation verbatim: its last tool round (the answer that called
 * the tools and their results) when it ends in one, else its last turns within a budget. The
 * result must be smaller than the input, or the compaction fails. When to compact, and how often a
 * failure may repeat, is `Autocompact`'s and `CompactionBreaker`'s.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { AssistantMessage, type Message, TextBlock, ToolResultBlock, UserMessage } from "../message/Message.js"
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
  /**
   * Turns kept verbatim at the end when the conversation does not end in a tool round (1 for
   * autocompact, 3 for the reactive one, 0 for `/compact`).
   */
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

/**
 * Where the last tool round starts, when the conversation ends in one within `budget` tokens: an
 * answer with tool calls followed by the user message with their results. `undefined` otherwise.
 *
 * @category Accessors
 */
export const lastToolRound = (messages: ReadonlyArray<Message>, budget: number): number | undefined => {
  const results = messages.at(-1)
  const call = messages.at(-2)
  if (!(results instanceof UserMessage) || typeof results.content === "string") return undefined
  if (!results.content.some((b) => b instanceof ToolResultBlock)) return undefined
  if (!(call instanceof AssistantMessage) || call.toolUses.length === 0) return undefined
  return TokenEstimate.ofMessages(messages.slice(-2)) <= budget ? messages.length - 2 : undefined
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
 * The compacted conversation: the `opening` blocks (summary, notes, files), then the `tail` kept. A
 * tail that starts with an answer (a tool round) follows the opening as its own message; one that
 * starts with a prompt takes the opening before its blocks; with no tail, a conversation that was
 * waiting for an answer (`waiting`) is told to go on, and one that ended with an answer waits for
 * the user's next prompt.
 *
 * @category Constructors
 */
export const assemble = (
  opening: ReadonlyArray<TextBlock>,
  tail: ReadonlyArray<Message>,
  waiting: boolean
): Array<Message> => {
  const first = tail[0]
  if (first === undefined) {
    return [new UserMessage({ content: waiting ? [...opening, new TextBlock({ text: SummaryPrompt.RESUME })] : opening })]
  }
  if (first instanceof AssistantMessage) return [new UserMessage({ content: opening }), ...tail]
  return [new UserMessage({ content: [...opening, ...blocksOf(first as UserMessage)] }), ...tail.slice(1)]
}

/**
 * Compacts `messages` as `request` asks: the summary by `client`, the files through `fs`. Never
 * fails: a failure is an {@link Outcome}.
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
    // The tail: the last tool round, else the recent turns; within a quarter of the window.
    const budget = windowOf(options, context) / 4
    const start = lastToolRound(messages, budget) ?? tailStart(messages, request.keepTurns, budget)
    const tail = messages.slice(start).map(withoutUsage)
    if (start === 0) return { _tag: "Failed", reason: "there is nothing before the recent turns to summarise" } as Outcome
    const summary = yield* Summary.summaryOf(client, messages, context, request.instructions)
    if ("failure" in summary) return { _tag: "Failed", reason: summary.failure } as Outcome
    const files = yield* FileRestore.restoredFiles(fs, options, messages, tail, context.cwd)
    // The transcript is pointed at only where it is (a session that keeps none has none to read).
    const transcript = context.transcriptPath
    const readable = transcript !== undefined && (yield* Effect.orElseSucceed(fs.exists(transcript), () => false))
    const opening = [
      new TextBlock({ text: SummaryPrompt.continuation(summary.text) }),
      ...(readable ? [new TextBlock({ text: SummaryPrompt.transcriptNote(transcript) })] : []),
      ...files
    ]
    const compacted = assemble(opening, tail, messages.at(-1) instanceof UserMessage)
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
