/**
 * Autocompact: when the request about to be sent reaches `window − min(max output, 20K) − 13K`
 * tokens, a model call (background source) summarises the older part of the conversation in the
 * nine sections of `SummaryPrompt`; the new conversation is the summary, the most recently read
 * files re-read from disk, and the recent turns verbatim. The result must be smaller than the input,
 * or the attempt counts as failed.
 *
 * The same compaction, harder (the last 3 turns kept), answers the API's `PromptTooLong` through
 * the `Compactor` service; if the summary request is itself too long, its oldest turns are dropped
 * (at most 3 times).
 *
 * A circuit breaker per session ends the turn (`prompt_too_long`) after 3 consecutive failed
 * compactions, or when the context refills to the threshold within 3 calls of a compaction 3 times
 * in a row: no path compacts forever.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as nodePath from "node:path"
import {
  AssistantMessage,
  type ContentBlock,
  type Message,
  TextBlock,
  ToolResultBlock,
  ToolUseBlock,
  UserMessage
} from "../message/Message.js"
import * as Accumulator from "../model/Accumulator.js"
import { isEvent, ModelClient } from "../model/ModelClient.js"
import { describe as describeError, type ModelError } from "../model/ModelError.js"
import * as PipelineModule from "../turn/Pipeline.js"
import type { Pipeline } from "../turn/Pipeline.js"
import { id as stageId, type Compaction, type Stage, type StageContext, type StageResult } from "../turn/Stage.js"
import { Compactor } from "./Compactor.js"
import * as SummaryPrompt from "./SummaryPrompt.js"
import * as TokenEstimate from "./TokenEstimate.js"

/** This stage's identity, for editing a pipeline (`Pipeline.without(Autocompact.id)`). @category Constants */
export const id = stageId("autocompact")

/** Options; every number defaults to Claude Code's. @category Models */
export interface Options {
  /** The context window in tokens (default: the model's, see `TokenEstimate.windowFor`). */
  readonly window?: number | undefined
  /** Tokens kept free below the window besides the output reserve (13,000). */
  readonly bufferTokens?: number | undefined
  /** The output reserve is min(max output tokens, this) (20,000). */
  readonly maxOutputReserve?: number | undefined
  /** Files re-read after a compaction: how many (5), tokens each (5,000), tokens in all (50,000). */
  readonly restoreFiles?: number | undefined
  readonly restoreTokensPerFile?: number | undefined
  readonly restoreTokensTotal?: number | undefined
  /** The tool whose calls name the files read, and its path field (`Read`, `file_path`). */
  readonly readTool?: { readonly name: string; readonly pathField: string } | undefined
  /** Consecutive failed compactions that open the breaker (3). */
  readonly maxFailures?: number | undefined
  /** A refill within this many calls of a compaction is rapid (3); this many rapid refills in a row open the breaker (3). */
  readonly refillCalls?: number | undefined
  readonly maxRapidRefills?: number | undefined
}

/**
 * The token count at which autocompact fires: `window − min(max output, 20K) − 13K`, and never
 * below half the window (a small window, as in tests, would otherwise compact before every call).
 *
 * @category Thresholds
 */
export const threshold = (window: number, maxTokens: number, options: Options = {}): number =>
  Math.max(
    window - Math.min(maxTokens, options.maxOutputReserve ?? 20_000) - (options.bufferTokens ?? 13_000),
    Math.floor(window / 2)
  )

/** Whether a user message is a prompt (not tool results): where a turn starts. @category Predicates */
export const isPrompt = (message: Message): boolean =>
  message instanceof UserMessage &&
  (typeof message.content === "string" || !message.content.some((b) => b instanceof ToolResultBlock))

/** The indexes of the prompts: the starts of the turns. @category Accessors */
export const turnStarts = (messages: ReadonlyArray<Message>): Array<number> => {
  const out: Array<number> = []
  for (let i = 0; i < messages.length; i++) if (isPrompt(messages[i]!)) out.push(i)
  return out
}

const blocksOf = (message: UserMessage): ReadonlyArray<ContentBlock> =>
  typeof message.content === "string" ? [new TextBlock({ text: message.content })] : message.content

/** `messages` with `text` added to the end as a user message (merged into a final user message). */
const withUserText = (messages: ReadonlyArray<Message>, text: string): Array<Message> => {
  const last = messages[messages.length - 1]
  if (last instanceof UserMessage) {
    return [...messages.slice(0, -1), new UserMessage({ content: [...blocksOf(last), new TextBlock({ text })] })]
  }
  return [...messages, new UserMessage({ content: text })]
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

interface BreakerState {
  readonly calls: number
  readonly failures: number
  readonly lastCompactionCall: number | undefined
  readonly rapidRefills: number
}

const initialBreaker: BreakerState = { calls: 0, failures: 0, lastCompactionCall: undefined, rapidRefills: 0 }

/** The stage and the compactor, sharing one breaker per session. @category Models */
export interface Autocompact {
  readonly stage: Stage
  readonly compactor: Compactor["Type"]
  /** Compacts `messages` now (for `/compact` and tests), without the breaker. */
  readonly compact: (
    messages: ReadonlyArray<Message>,
    context: StageContext,
    request: Request
  ) => Effect.Effect<Outcome>
}

/**
 * Builds autocompact over the `ModelClient` (for the summary) and `FileSystem` (to re-read files)
 * in context.
 *
 * @category Constructors
 */
export const make = (
  options: Options = {}
): Effect.Effect<Autocompact, never, ModelClient | FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const client = yield* ModelClient
    const fs = yield* FileSystem.FileSystem
    const windowOf = (context: StageContext) => options.window ?? TokenEstimate.windowFor(context.model)
    const readTool = options.readTool ?? { name: "Read", pathField: "file_path" }
    const maxFailures = options.maxFailures ?? 3
    const refillCalls = options.refillCalls ?? 3
    const maxRapidRefills = options.maxRapidRefills ?? 3
    const breakers = yield* Ref.make(new Map<string, BreakerState>())

    /** One summary request; fails with the model's error. */
    const summarize = (head: ReadonlyArray<Message>, context: StageContext, instructions: string | undefined) =>
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

    /** The summary, dropping the oldest turns of `head` when the summary request itself is too long (at most 3 times). */
    const summaryOf = (
      head: ReadonlyArray<Message>,
      context: StageContext,
      instructions: string | undefined
    ): Effect.Effect<{ readonly text: string } | { readonly failure: string }> =>
      Effect.gen(function*() {
        let current = head
        for (let attempt = 0; attempt <= 3; attempt++) {
          const result = yield* Effect.either(summarize(current, context, instructions))
          if (result._tag === "Right") {
            return result.right.length > 0 ? { text: result.right } : { failure: "the summary came back empty" }
          }
          const error: ModelError = result.left
          if (error._tag !== "PromptTooLong") return { failure: `the summary request failed: ${describeError(error)}` }
          const starts = turnStarts(current)
          if (starts.length < 2 || attempt === 3) return { failure: "the summary request is too long even without its oldest turns" }
          current = current.slice(starts[1]!)
        }
        return { failure: "unreachable" }
      })

    /** The most recently read files (not read again in `tail`), re-read now, within the budgets. */
    const restoredFiles = (head: ReadonlyArray<Message>, tail: ReadonlyArray<Message>, context: StageContext) =>
      Effect.gen(function*() {
        const pathsIn = (messages: ReadonlyArray<Message>) => {
          const out: Array<string> = []
          for (let i = messages.length - 1; i >= 0; i--) {
            const m = messages[i]!
            if (!(m instanceof AssistantMessage)) continue
            for (let j = m.content.length - 1; j >= 0; j--) {
              const b = m.content[j]!
              if (!(b instanceof ToolUseBlock) || b.name !== readTool.name) continue
              const path = (b.input as Record<string, unknown> | null)?.[readTool.pathField]
              if (typeof path === "string" && !out.includes(path)) out.push(path)
            }
          }
          return out
        }
        const inTail = new Set(pathsIn(tail))
        const perFile = (options.restoreTokensPerFile ?? 5_000) * TokenEstimate.CHARS_PER_TOKEN
        let budget = (options.restoreTokensTotal ?? 50_000) * TokenEstimate.CHARS_PER_TOKEN
        const blocks: Array<TextBlock> = []
        for (const path of pathsIn(head).filter((p) => !inTail.has(p)).slice(0, options.restoreFiles ?? 5)) {
          const content = yield* Effect.option(fs.readFileString(
            context.cwd !== undefined && !nodePath.isAbsolute(path) ? nodePath.join(context.cwd, path) : path
          ))
          if (content._tag === "None") continue
          const cut = content.value.length > perFile
            ? `${content.value.slice(0, perFile)}\n[... cut at ${perFile} characters]`
            : content.value
          if (cut.length > budget) break
          budget -= cut.length
          blocks.push(new TextBlock({ text: `Contents of ${path}, read again after the compaction:\n\n${cut}` }))
        }
        return blocks
      })

    const compact = (messages: ReadonlyArray<Message>, context: StageContext, request: Request) =>
      Effect.gen(function*() {
        const startedAt = yield* Clock.currentTimeMillis
        const pre = TokenEstimate.ofRequest(messages)
        // The tail: the last `keepTurns` turns, fewer while they take more than a quarter of the window,
        // and never the first turn (something must be summarised). A conversation of one long turn
        // (a long tool loop) is summarised whole and resumed from the summary.
        const starts = turnStarts(messages)
        let first = Math.min(starts.length, Math.max(1, starts.length - request.keepTurns))
        const tailBudget = windowOf(context) / 4
        while (first < starts.length && TokenEstimate.ofMessages(messages.slice(starts[first]!)) > tailBudget) first++
        const tailStart = first < starts.length ? starts[first]! : messages.length
        const head = messages.slice(0, tailStart)
        const tail = messages.slice(tailStart).map(withoutUsage)
        if (head.length === 0) return { _tag: "Failed", reason: "there is nothing before the recent turns to summarise" } as Outcome
        const summary = yield* summaryOf(head, context, request.instructions)
        if ("failure" in summary) return { _tag: "Failed", reason: summary.failure } as Outcome
        const files = yield* restoredFiles(head, tail, context)
        const opening = [new TextBlock({ text: SummaryPrompt.continuation(summary.text) }), ...files]
        // With no tail, a conversation that was waiting for an answer is told to go on; one that ended
        // with an answer (a manual compaction between turns) waits for the user's next prompt.
        const waiting = messages.at(-1) instanceof UserMessage
        const compacted: Array<Message> = tail.length === 0
          ? [new UserMessage({ content: waiting ? [...opening, new TextBlock({ text: SummaryPrompt.RESUME })] : opening })]
          : [new UserMessage({ content: [...opening, ...blocksOf(tail[0] as UserMessage)] }), ...tail.slice(1)]
        const post = TokenEstimate.ofMessages(compacted)
        if (post >= pre) {
          return { _tag: "Failed", reason: `the compacted conversation (~${post} tokens) is not smaller than ~${pre}` } as Outcome
        }
        const now = yield* Clock.currentTimeMillis
        return {
          _tag: "Compacted",
          messages: compacted,
          compaction: { trigger: request.trigger, preTokens: pre, postTokens: post, durationMs: now - startedAt }
        } as Outcome
      })

    const breakerOf = (sessionId: string) => Effect.map(Ref.get(breakers), (m) => m.get(sessionId) ?? initialBreaker)
    const setBreaker = (sessionId: string, state: BreakerState) =>
      Ref.update(breakers, (m) => new Map(m).set(sessionId, state))
    const tripped = (state: BreakerState): string | undefined =>
      state.failures >= maxFailures
        ? `Compaction failed ${state.failures} times in a row`
        : state.rapidRefills >= maxRapidRefills
        ? `The context refilled to the compaction threshold within ${refillCalls} calls of a compaction ${state.rapidRefills} times in a row`
        : undefined

    /** Runs a compaction under the breaker: the stage's result. */
    const guarded = (messages: ReadonlyArray<Message>, context: StageContext, request: Request, calls: number) =>
      Effect.gen(function*() {
        const before = yield* breakerOf(context.sessionId)
        const outcome = yield* compact(messages, context, request)
        if (outcome._tag === "Failed") {
          const state = { ...before, failures: before.failures + 1 }
          yield* setBreaker(context.sessionId, state)
          const halt = tripped(state)
          yield* Effect.logDebug(halt === undefined ? "compaction failed" : "compaction failed; the breaker is open").pipe(
            Effect.annotateLogs({ trigger: request.trigger, reason: outcome.reason, failures: state.failures })
          )
          return {
            messages,
            report: `compaction failed: ${outcome.reason}`,
            ...(halt !== undefined ? { halt: `${halt} (last: ${outcome.reason})` } : {})
          } satisfies StageResult
        }
        yield* setBreaker(context.sessionId, { ...before, failures: 0, lastCompactionCall: calls })
        yield* Effect.logDebug("compacted the conversation").pipe(Effect.annotateLogs({
          trigger: request.trigger,
          preTokens: outcome.compaction.preTokens,
          postTokens: outcome.compaction.postTokens
        }))
        return {
          messages: outcome.messages,
          report: `compacted ~${outcome.compaction.preTokens} → ~${outcome.compaction.postTokens} tokens`,
          compaction: outcome.compaction
        } satisfies StageResult
      })

    const over = (messages: ReadonlyArray<Message>, context: StageContext) =>
      TokenEstimate.ofRequest(messages) >= threshold(windowOf(context), context.maxTokens, options)

    const stage: Stage = {
      id,
      announce: (messages, context) => (over(messages, context) ? "compacting" : undefined),
      run: (messages, context) =>
        Effect.gen(function*() {
          const state = yield* breakerOf(context.sessionId)
          const calls = state.calls + 1
          if (!over(messages, context)) {
            yield* setBreaker(context.sessionId, { ...state, calls })
            return { messages }
          }
          const rapid = state.lastCompactionCall !== undefined && calls - state.lastCompactionCall <= refillCalls
          const next = { ...state, calls, rapidRefills: rapid ? state.rapidRefills + 1 : 0 }
          yield* setBreaker(context.sessionId, next)
          const halt = tripped(next)
          if (halt !== undefined) {
            yield* Effect.logDebug("the compaction breaker is open: the turn ends").pipe(Effect.annotateLogs({ halt }))
            return { messages, halt }
          }
          return yield* guarded(messages, context, { trigger: "auto", keepTurns: 1 }, calls)
        })
    }

    const compactor = Compactor.of({
      available: true,
      reactive: (messages, context) =>
        Effect.gen(function*() {
          const state = yield* breakerOf(context.sessionId)
          const halt = tripped(state)
          if (halt !== undefined) return { messages, halt }
          const result: StageResult = yield* guarded(messages, context, { trigger: "auto", keepTurns: 3 }, state.calls)
          // A failed reactive compaction cannot make the request fit: the turn ends.
          return result.messages === messages && result.halt === undefined
            ? { ...result, halt: result.report ?? "compaction failed" }
            : result
        }),
      manual: (messages, context, instructions) =>
        Effect.map(compact(messages, context, { trigger: "manual", keepTurns: 0, instructions }), (outcome) =>
          outcome._tag === "Failed"
            ? { messages, halt: `Compaction failed: ${outcome.reason}` }
            : {
              messages: outcome.messages,
              report: `compacted ~${outcome.compaction.preTokens} → ~${outcome.compaction.postTokens} tokens`,
              compaction: outcome.compaction
            })
    })

    return { stage, compactor, compact }
  })

/**
 * A `Pipeline` whose stages are `before`, then autocompact, and the `Compactor` for reactive
 * compaction, over the `ModelClient` and `FileSystem` in context.
 *
 * @category Layers
 */
export const layer = (
  options: Options = {},
  before: ReadonlyArray<Stage> = []
): Layer.Layer<Pipeline | Compactor, never, ModelClient | FileSystem.FileSystem> =>
  Layer.unwrapEffect(Effect.map(make(options), (auto) =>
    Layer.merge(PipelineModule.layer([...before, auto.stage]), Layer.succeed(Compactor, auto.compactor))))

/** {@link layer} with the window from `KEEL_AUTO_COMPACT_WINDOW` (default: each model's). @category Layers */
export const layerConfig = (
  options: Omit<Options, "window"> = {},
  before: ReadonlyArray<Stage> = []
): Layer.Layer<Pipeline | Compactor, import("effect/ConfigError").ConfigError, ModelClient | FileSystem.FileSystem> =>
  Layer.unwrapEffect(Effect.map(TokenEstimate.windowConfig, (window) => layer({ ...options, window }, before)))
