/**
 * A persistent goal: an objective the session keeps working on across turns (`/goal <objective>`,
 * Codex's `/goal`). While it is `active` and the session is idle, the runtime admits continuation
 * turns that restate it, through the same queue as any input; the model ends it with the
 * `update_goal` tool (`done`, or `blocked` with a reason). The rules of when a continuation may
 * start are pure functions here ({@link blocker}), so each blocker is tested apart from any fiber.
 *
 * Bounded by construction: a goal has a limit on continuation turns, and a continuation that makes
 * no progress (no tool call, or the same answer as the one before) blocks it.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** Where a goal stands. @category Models */
export const Status = Schema.Literal("active", "paused", "done", "blocked")
/** @category Models */
export type Status = typeof Status.Type

/** Continuation turns a goal may have unless it says otherwise. @category Constants */
export const DEFAULT_MAX_CONTINUATIONS = 20

/** A goal and its progress. @category Models */
export const Goal = Schema.Struct({
  objective: Schema.String,
  status: Status,
  /** Why it is `blocked`, or what `done` achieved (the model's words, or the runtime's). */
  reason: Schema.optional(Schema.String),
  /** When it was set (epoch ms, from `Clock`). */
  setAt: Schema.Number,
  /** Continuation turns admitted for it so far. */
  continuations: Schema.Int,
  /** The most it may have. */
  maxContinuations: Schema.Int,
  /** Spending cap for the session while the goal runs (USD), if any. */
  maxBudgetUsd: Schema.optional(Schema.Number),
  /** The last continuation's final answer, to notice one that repeats itself. */
  lastAnswer: Schema.optional(Schema.String)
})
/** @category Models */
export type Goal = typeof Goal.Type

/** A new active goal. @category Constructors */
export const make = (
  objective: string,
  setAt: number,
  options: { readonly maxContinuations?: number | undefined; readonly maxBudgetUsd?: number | undefined } = {}
): Goal => ({
  objective,
  status: "active",
  setAt,
  continuations: 0,
  maxContinuations: options.maxContinuations ?? DEFAULT_MAX_CONTINUATIONS,
  ...(options.maxBudgetUsd !== undefined ? { maxBudgetUsd: options.maxBudgetUsd } : {})
})

/** The prompt of a continuation turn: it restates the goal and how to end it. @category Prompts */
export const continuationPrompt = (goal: Goal): string =>
  `Continue working toward the session's goal: ${goal.objective}\n\n` +
  `This is continuation turn ${goal.continuations + 1} of at most ${goal.maxContinuations}. ` +
  "Take the next concrete step. When the goal is achieved, call update_goal with status \"done\" and a short " +
  "summary; if you cannot make progress without the user (missing information, a decision, an access), call " +
  "update_goal with status \"blocked\" and the reason."

/** What the runtime knows when it considers a continuation. @category Models */
export interface Situation {
  /** Inputs waiting in the queue. */
  readonly queued: number
  /** A turn runs. */
  readonly running: boolean
  /** Actions waiting for an answer. */
  readonly pendingActions: number
  /** The last turn ended in an error. */
  readonly lastFailed: boolean
  /** What the session has spent (USD). */
  readonly spentUsd: number
  /** The session's own budget (`maxBudgetUsd`), if any. */
  readonly sessionBudgetUsd?: number | undefined
}

/**
 * Why no continuation may start now, or `undefined` when one may. `wait` blockers pass (input,
 * a turn, an answer will come); `stop` ones end the goal as `blocked` with their reason.
 *
 * @category Deciding
 */
export const blocker = (
  goal: Goal | undefined,
  situation: Situation
): { readonly kind: "wait" | "stop"; readonly reason: string } | undefined => {
  if (goal === undefined || goal.status !== "active") return { kind: "wait", reason: "no active goal" }
  if (situation.running) return { kind: "wait", reason: "a turn runs" }
  if (situation.queued > 0) return { kind: "wait", reason: "input is queued" }
  if (situation.pendingActions > 0) return { kind: "wait", reason: "an action waits for an answer" }
  if (situation.lastFailed) return { kind: "stop", reason: "the last turn failed" }
  if (goal.continuations >= goal.maxContinuations) {
    return { kind: "stop", reason: `the goal's ${goal.maxContinuations} continuation turns are spent` }
  }
  const budget = goal.maxBudgetUsd ?? situation.sessionBudgetUsd
  if (budget !== undefined && situation.spentUsd >= budget) {
    return { kind: "stop", reason: `the budget of $${budget} is spent` }
  }
  return undefined
}

/** What a finished continuation turn did, for the progress check. @category Models */
export interface Outcome {
  /** Tool calls it made. */
  readonly toolCalls: number
  /** Its final answer's text. */
  readonly answer: string
}

/**
 * The goal after one of its continuation turns: `blocked` when the turn made no progress (no tool
 * call, or the same answer as the last continuation), otherwise with the answer remembered.
 *
 * @category Transitions
 */
export const afterContinuation = (goal: Goal, outcome: Outcome): Goal => {
  if (goal.status !== "active") return goal
  if (outcome.toolCalls === 0) {
    return { ...goal, status: "blocked", reason: "a continuation turn made no progress (no tool call)" }
  }
  if (goal.lastAnswer !== undefined && goal.lastAnswer === outcome.answer) {
    return { ...goal, status: "blocked", reason: "a continuation turn gave the same answer as the one before" }
  }
  return { ...goal, lastAnswer: outcome.answer }
}

/** A one-line description, for `/goal` and status lines. @category Formatting */
export const describe = (goal: Goal | undefined): string => {
  if (goal === undefined) return "No goal is set. Set one with /goal <objective>."
  const progress = `${goal.continuations}/${goal.maxContinuations} continuation turns`
  const why = goal.reason !== undefined ? `: ${goal.reason}` : ""
  return `Goal (${goal.status}${why}): ${goal.objective} · ${progress}`
}

/** What the idle runtime does about the goal. @category Deciding */
export type Next =
  | { readonly _tag: "Wait" }
  /** Admit a continuation turn with `prompt`; the goal counts it. */
  | { readonly _tag: "Continue"; readonly goal: Goal; readonly prompt: string }
  /** The goal cannot go on: it is `blocked` with the reason. */
  | { readonly _tag: "Stop"; readonly goal: Goal }

/**
 * The idle runtime's decision about `goal` in `situation` (see {@link blocker}).
 *
 * @category Deciding
 */
export const next = (goal: Goal | undefined, situation: Situation): Next => {
  const blocked = blocker(goal, situation)
  if (goal === undefined || blocked?.kind === "wait") return { _tag: "Wait" }
  if (blocked !== undefined) return { _tag: "Stop", goal: { ...goal, status: "blocked", reason: blocked.reason } }
  return { _tag: "Continue", goal: { ...goal, continuations: goal.continuations + 1 }, prompt: continuationPrompt(goal) }
}

/**
 * The goal after one of its continuation turns ended: `blocked` when the turn failed, else as
 * {@link afterContinuation} says; a goal that is no longer active (the turn's `update_goal`) is
 * left as it is.
 *
 * @category Transitions
 */
export const afterTurn = (goal: Goal | undefined, outcome: Outcome & { readonly failed: boolean }): Goal | undefined =>
  goal === undefined || goal.status !== "active"
    ? goal
    : outcome.failed
    ? { ...goal, status: "blocked", reason: "the last turn failed" }
    : afterContinuation(goal, outcome)