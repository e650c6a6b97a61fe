/**
 * The compaction circuit breaker, one state per session: it opens (the turn ends with
 * `prompt_too_long`) after 3 consecutive failed compactions, or when the context refills to the
 * threshold within 3 calls of a compaction 3 times in a row: no path compacts forever.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type { Message } from "../message/Message.js"
import { id as stageId, type StageContext, type StageResult } from "../turn/Stage.js"
import type { Outcome, Request } from "./Compaction.js"

/** Options; every number defaults to Claude Code's. @category Models */
export interface Options {
  /** Consecutive failed compactions that open the breaker (3). */
  readonly maxFailures?: number | undefined
  /**
   * A refill within this many calls of a compaction is rapid (3); this many rapid refills in a row
   * open the breaker (3).
   */
  readonly refillCalls?: number | undefined
  readonly maxRapidRefills?: number | undefined
}

/** One session's breaker. @category Models */
export interface State {
  /** The model calls prepared so far. */
  readonly calls: number
  /** Consecutive failed compactions. */
  readonly failures: number
  /** The call of the last successful compaction. */
  readonly lastCompactionCall: number | undefined
  /** Consecutive rapid refills. */
  readonly rapidRefills: number
}

/** A session's breaker before its first call. @category Constants */
export const initial: State = { calls: 0, failures: 0, lastCompactionCall: undefined, rapidRefills: 0 }

/**
 * The breaker's limits, and the states of sessions run without a session's stage memory (a stage
 * run outside any session), the oldest dropped past {@link MAX_LOOSE_STATES}. A session's own state
 * lives in its stage memory and ends with it.
 *
 * @category Models
 */
export interface CompactionBreaker {
  readonly maxFailures: number
  readonly refillCalls: number
  readonly maxRapidRefills: number
  readonly states: Ref.Ref<ReadonlyMap<string, State>>
}

/** How many states of runs without a session's memory one breaker keeps. @category Constants */
export const MAX_LOOSE_STATES = 256

/** The slot of a session's breaker state in its stage memory. */
const slotId = stageId("compaction-breaker")

/** A breaker for every session, each closed. @category Constructors */
export const make = (options: Options = {}): Effect.Effect<CompactionBreaker> =>
  Effect.map(Ref.make<ReadonlyMap<string, State>>(new Map()), (states) => ({
    maxFailures: options.maxFailures ?? 3,
    refillCalls: options.refillCalls ?? 3,
    maxRapidRefills: options.maxRapidRefills ?? 3,
    states
  }))

/** A session's state. @category Accessors */
export const stateOf = (breaker: CompactionBreaker, context: StageContext): Effect.Effect<State> =>
  context.memory !== undefined
    ? Effect.map(context.memory.slot(slotId, () => ({ state: initial })), (slot) => slot.state)
    : Effect.map(Ref.get(breaker.states), (m) => m.get(context.sessionId) ?? initial)

/** Sets a session's state. @category Mutations */
export const setState = (breaker: CompactionBreaker, context: StageContext, state: State): Effect.Effect<void> =>
  context.memory !== undefined
    ? Effect.map(context.memory.slot(slotId, () => ({ state })), (slot) => {
      slot.state = state
    })
    : Ref.update(breaker.states, (m) => {
      const next = new Map(m)
      next.delete(context.sessionId)
      if (next.size >= MAX_LOOSE_STATES) next.delete(next.keys().next().value!)
      return next.set(context.sessionId, state)
    })

/**
 * `state` after call number `calls` reached the compaction threshold: a rapid refill when it comes
 * within `refillCalls` calls of the last compaction, and the count of rapid refills reset otherwise.
 *
 * @category Transitions
 */
export const refilled = (breaker: CompactionBreaker, state: State, calls: number): State => {
  const rapid = state.lastCompactionCall !== undefined && calls - state.lastCompactionCall <= breaker.refillCalls
  return { ...state, calls, rapidRefills: rapid ? state.rapidRefills + 1 : 0 }
}

/** Why the breaker is open in `state`, or `undefined` when it is closed. @category Predicates */
export const tripped = (breaker: CompactionBreaker, state: State): string | undefined =>
  state.failures >= breaker.maxFailures
    ? `Compaction failed ${state.failures} times in a row`
    : state.rapidRefills >= breaker.maxRapidRefills
    ? `The context refilled to the compaction threshold within ${breaker.refillCalls} calls of a compaction ` +
      `${state.rapidRefills} times in a row`
    : undefined

/**
 * Runs `compaction` (of `messages`, as `request` asks) under the session's breaker at call number
 * `calls`: the stage's result. A failure counts, and sets `halt` once the breaker opens; a success
 * resets the failures and records the call.
 *
 * @category Compaction
 */
export const guarded = (
  breaker: CompactionBreaker,
  messages: ReadonlyArray<Message>,
  context: StageContext,
  request: Request,
  calls: number,
  compaction: Effect.Effect<Outcome>
): Effect.Effect<StageResult> =>
  Effect.gen(function*() {
    const before = yield* stateOf(breaker, context)
    const outcome = yield* compaction
    if (outcome._tag === "Failed") {
      const state = { ...before, failures: before.failures + 1 }
      yield* setState(breaker, context, state)
      const halt = tripped(breaker, state)
      yield* Effect.logDebug(halt === undefined ? "compaction failed" : "compaction failed; the breaker is open").pipe(
        Effect.annotateLogs({ trigger: request.trigger, reason: outcome.reason, failures: state.failures })
      )
      return {
        messages,
        report: `compaction failed: ${outcome.reason}`,
        compactionError: outcome.reason,
        ...(halt !== undefined ? { halt: `${halt} (last: ${outcome.reason})` } : {})
      } satisfies StageResult
    }
    yield* setState(breaker, context, { ...before, failures: 0, lastCompactionCall: calls })
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
