/**
 * The runtime's side of a persistent goal: the goal's operations (show, set, pause, clear), what a
 * finished continuation turn does to it, and, when the runtime has nothing to run, whether to admit
 * the next continuation (`Goal.next` decides; this applies the decision). Every change is saved
 * with the session (`SessionFacts`) and wakes the runtime's worker.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Goal from "../goal/Goal.js"
import type * as SdkMessage from "../session/SdkMessage.js"
import type * as Session from "../session/Session.js"
import type * as SessionFacts from "./SessionFacts.js"
import type * as TurnOutput from "./TurnOutput.js"

/** Limits of a goal. @category Models */
export interface GoalOptions {
  /** Continuation turns it may have (default `Goal.DEFAULT_MAX_CONTINUATIONS`). */
  readonly maxContinuations?: number | undefined
  /** The session's spending at which its continuations stop (USD). */
  readonly maxBudgetUsd?: number | undefined
}

/** What the driver needs from the runtime. @category Models */
export interface Deps {
  readonly session: Session.Service
  readonly facts: SessionFacts.SessionFacts
  /** Wakes the runtime's worker. */
  readonly nudge: Effect.Effect<void>
  /** What the runtime holds now: waiting inputs, a running turn, pending actions, the last result. */
  readonly situation: Effect.Effect<{
    readonly queued: number
    readonly running: boolean
    readonly pendingActions: number
    readonly lastResult: SdkMessage.Result | undefined
  }>
  /** Queues a continuation turn with `prompt`. */
  readonly admit: (prompt: string) => Effect.Effect<void>
}

/** @category Models */
export interface GoalDriver {
  readonly goal: Effect.Effect<Goal.Goal | undefined>
  readonly setGoal: (objective: string, options?: GoalOptions) => Effect.Effect<Goal.Goal>
  readonly clearGoal: Effect.Effect<boolean>
  readonly pauseGoal: (paused: boolean) => Effect.Effect<boolean>
  /** After a continuation turn: the goal as its outcome leaves it (`Goal.afterTurn`). */
  readonly afterContinuation: (drained: TurnOutput.Drained) => Effect.Effect<void>
  /** With nothing to run: admits the goal's next continuation (true), or stops the goal, or waits. */
  readonly consider: Effect.Effect<boolean>
}

/** The goal driver over `deps`. @category Constructors */
export const make = (deps: Deps): GoalDriver => {
  const change = <A>(f: (goal: Goal.Goal | undefined) => readonly [A, Goal.Goal | undefined]) =>
    Effect.zipLeft(deps.facts.changeGoal(f), deps.nudge)
  const goal = Effect.flatMap(deps.session.state, (s) => Ref.get(s.goal))
  return {
    goal,
    setGoal: (objective, options) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const next = Goal.make(objective, now, options)
        return change(() => [next, next])
      }),
    clearGoal: change((current) => [current !== undefined, undefined]),
    pauseGoal: (paused) =>
      change((current) => {
        if (current === undefined || (current.status !== "active" && current.status !== "paused")) return [false, current]
        return [true, { ...current, status: paused ? "paused" : "active" }]
      }),
    afterContinuation: ({ result, toolCalls }) =>
      change((current) => [undefined, Goal.afterTurn(current, {
        toolCalls,
        answer: result?.subtype === "success" ? result.result ?? "" : "",
        failed: result?.is_error === true
      })]),
    consider: Effect.gen(function*() {
      const current = yield* goal
      if (current?.status !== "active") return false
      const { lastResult, ...now } = yield* deps.situation
      const next = Goal.next(current, {
        ...now,
        lastFailed: lastResult?.is_error === true,
        spentUsd: lastResult?.total_cost_usd ?? 0
      })
      if (next._tag === "Wait") return false
      // Only if the goal is still the one decided on (a /goal may have replaced it meanwhile).
      const changed = yield* change((g) => (g === current ? [true, next.goal] : [false, g]))
      if (!changed || next._tag === "Stop") return false
      yield* deps.admit(next.prompt)
      return true
    })
  }
}
