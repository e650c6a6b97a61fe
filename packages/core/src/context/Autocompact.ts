/**
 * Autocompact: when the request about to be sent reaches `window − min(max output, 20K) − 13K`
 * tokens, a model call (background source, sharing the conversation's cached prefix) summarises the
 * conversation in the nine sections of `SummaryPrompt`; the new conversation is the summary, a
 * pointer to the transcript, the files read before (small ones attached, large ones named), and the
 * last tool round (else the recent turns) verbatim. The result must be smaller than the input, or
 * the attempt counts as failed.
 *
 * The same compaction, harder (the last 3 turns kept), answers the API's `PromptTooLong` through
 * the `Compactor` service; if the summary request is itself too long, its oldest turns are dropped
 * (at most 3 times).
 *
 * A circuit breaker per session ends the turn (`prompt_too_long`) after 3 consecutive failed
 * compactions, or when the context refills to the threshold within 3 calls of a compaction 3 times
 * in a row: no path compacts forever.
 *
 * This module decides when to compact; the parts live beside it: `Compaction` (one compaction),
 * `Summary` (the summary request), `FileRestore` (the files re-read) and `CompactionBreaker`.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Message } from "../message/Message.js"
import { ModelClient } from "../model/ModelClient.js"
import * as PipelineModule from "../turn/Pipeline.js"
import type { Pipeline } from "../turn/Pipeline.js"
import { id as stageId, type Stage, type StageContext, type StageResult } from "../turn/Stage.js"
import * as Compaction from "./Compaction.js"
import * as CompactionBreaker from "./CompactionBreaker.js"
import { Compactor } from "./Compactor.js"
import * as TokenEstimate from "./TokenEstimate.js"

/** Where the turns start (defined in `Turns`). @category Accessors */
export { isPrompt, turnStarts } from "./Turns.js"

/** This stage's identity, for editing a pipeline (`Pipeline.without(Autocompact.id)`). @category Constants */
export const id = stageId("autocompact")

/**
 * Options; every number defaults to Claude Code's. The window and the files re-read after a
 * compaction are `Compaction.Options`; the breaker's limits are `CompactionBreaker.Options`.
 *
 * @category Models
 */
export interface Options extends Compaction.Options, CompactionBreaker.Options {
  /** Tokens kept free below the window besides the output reserve (13,000). */
  readonly bufferTokens?: number | undefined
  /** The output reserve is min(max output tokens, this) (20,000). */
  readonly maxOutputReserve?: number | undefined
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

/** How one compaction went. @category Models */
export type Outcome = Compaction.Outcome

/** What a compaction is asked to do. @category Models */
export type Request = Compaction.Request

/** The stage and the compactor, sharing one breaker per session. @category Models */
export interface Autocompact {
  readonly stage: Stage
  readonly compactor: Compactor["Type"]
  /** Whether `messages` are at the threshold: the stage compacts them (unless its breaker is open). */
  readonly due: (messages: ReadonlyArray<Message>, context: StageContext) => boolean
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
    const breaker = yield* CompactionBreaker.make(options)
    const compact = (messages: ReadonlyArray<Message>, context: StageContext, request: Request) =>
      Compaction.compact(client, fs, options, messages, context, request)
    const guarded = (messages: ReadonlyArray<Message>, context: StageContext, request: Request, calls: number) =>
      CompactionBreaker.guarded(breaker, messages, context, request, calls, compact(messages, context, request))
    const over = (messages: ReadonlyArray<Message>, context: StageContext) =>
      TokenEstimate.ofRequest(messages) >= threshold(Compaction.windowOf(options, context), context.maxTokens, options)

    const stage: Stage = {
      id,
      announce: (messages, context) => (over(messages, context) ? "compacting" : undefined),
      run: (messages, context) =>
        Effect.gen(function*() {
          const state = yield* CompactionBreaker.stateOf(breaker, context)
          const calls = state.calls + 1
          if (!over(messages, context)) {
            yield* CompactionBreaker.setState(breaker, context, { ...state, calls })
            return { messages }
          }
          const next = CompactionBreaker.refilled(breaker, state, calls)
          yield* CompactionBreaker.setState(breaker, context, next)
          const halt = CompactionBreaker.tripped(breaker, next)
          if (halt !== undefined) {
            yield* Effect.logDebug("the compaction breaker is open: the turn ends").pipe(Effect.annotateLogs({ halt }))
            return { messages, halt, report: halt, compactionError: halt }
          }
          return yield* guarded(messages, context, { trigger: "auto", keepTurns: 1 }, calls)
        })
    }

    const compactor = Compactor.of({
      available: true,
      reactive: (messages, context) =>
        Effect.gen(function*() {
          const state = yield* CompactionBreaker.stateOf(breaker, context)
          const halt = CompactionBreaker.tripped(breaker, state)
          if (halt !== undefined) return { messages, halt, compactionError: halt }
          const result: StageResult = yield* guarded(messages, context, { trigger: "auto", keepTurns: 3 }, state.calls)
          // A failed reactive compaction cannot make the request fit: the turn ends.
          return result.messages === messages && result.halt === undefined
            ? { ...result, halt: result.report ?? "compaction failed" }
            : result
        }),
      manual: (messages, context, instructions) =>
        Effect.map(compact(messages, context, { trigger: "manual", keepTurns: 0, instructions }), (outcome) =>
          outcome._tag === "Failed"
            ? { messages, halt: `Compaction failed: ${outcome.reason}`, compactionError: outcome.reason }
            : {
              messages: outcome.messages,
              report: `compacted ~${outcome.compaction.preTokens} → ~${outcome.compaction.postTokens} tokens`,
              compaction: outcome.compaction
            })
    })

    return { stage, compactor, compact, due: over }
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
