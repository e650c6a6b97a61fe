/**
 * The goal's rules as pure functions: when a continuation may start (each blocker on its own), and
 * what a continuation's outcome does to the goal (no progress blocks it).
 */
import { assert, describe, it } from "@effect/vitest"
import { Goal } from "@keel/core"

const idle: Goal.Situation = { queued: 0, running: false, pendingActions: 0, lastFailed: false, spentUsd: 0 }
const goal = Goal.make("ship it", 0, { maxContinuations: 3 })

describe("Goal.blocker", () => {
  it("an active goal of an idle session may continue", () => {
    assert.isUndefined(Goal.blocker(goal, idle))
  })

  it("waits while input is queued, a turn runs or an action waits; stops on failure, spent turns or budget", () => {
    const cases: ReadonlyArray<[Partial<Goal.Situation> | Partial<Goal.Goal>, "wait" | "stop", string]> = [
      [{ queued: 1 }, "wait", "input is queued"],
      [{ running: true }, "wait", "a turn runs"],
      [{ pendingActions: 2 }, "wait", "an action waits for an answer"],
      [{ lastFailed: true }, "stop", "the last turn failed"]
    ]
    for (const [change, kind, reason] of cases) {
      assert.deepStrictEqual(Goal.blocker(goal, { ...idle, ...change } as Goal.Situation), { kind, reason })
    }
    assert.deepStrictEqual(Goal.blocker({ ...goal, continuations: 3 }, idle), {
      kind: "stop",
      reason: "the goal's 3 continuation turns are spent"
    })
    assert.deepStrictEqual(Goal.blocker({ ...goal, maxBudgetUsd: 0.5 }, { ...idle, spentUsd: 0.5 }), {
      kind: "stop",
      reason: "the budget of $0.5 is spent"
    })
    assert.deepStrictEqual(Goal.blocker(goal, { ...idle, spentUsd: 2, sessionBudgetUsd: 1 }), {
      kind: "stop",
      reason: "the budget of $1 is spent"
    })
  })

  it("a paused, done, blocked or missing goal does not continue", () => {
    for (const g of [undefined, { ...goal, status: "paused" as const }, { ...goal, status: "done" as const }, { ...goal, status: "blocked" as const }]) {
      assert.strictEqual(Goal.blocker(g, idle)?.kind, "wait")
    }
  })
})

describe("Goal.afterContinuation", () => {
  it("no tool call blocks the goal; the same answer twice blocks it; progress is remembered", () => {
    assert.deepStrictEqual(Goal.afterContinuation(goal, { toolCalls: 0, answer: "x" }), {
      ...goal,
      status: "blocked",
      reason: "a continuation turn made no progress (no tool call)"
    })
    const once = Goal.afterContinuation(goal, { toolCalls: 1, answer: "same" })
    assert.strictEqual(once.status, "active")
    assert.strictEqual(once.lastAnswer, "same")
    assert.deepStrictEqual(Goal.afterContinuation(once, { toolCalls: 2, answer: "same" }).reason, "a continuation turn gave the same answer as the one before")
    assert.strictEqual(Goal.afterContinuation(once, { toolCalls: 2, answer: "different" }).status, "active")
  })

  it("a goal the turn ended (update_goal) is left as it is", () => {
    const done = { ...goal, status: "done" as const, reason: "shipped" }
    assert.strictEqual(Goal.afterContinuation(done, { toolCalls: 0, answer: "" }), done)
  })

  it("the continuation prompt restates the objective and how to end it", () => {
    const prompt = Goal.continuationPrompt({ ...goal, continuations: 1 })
    assert.include(prompt, "ship it")
    assert.include(prompt, "continuation turn 2 of at most 3")
    assert.include(prompt, "update_goal")
  })
})

describe("Goal.next and Goal.afterTurn", () => {
  it("next: wait, continue (counting the turn, with the prompt), or stop (blocked with why)", () => {
    assert.deepStrictEqual(Goal.next(goal, { ...idle, queued: 1 }), { _tag: "Wait" })
    assert.deepStrictEqual(Goal.next(undefined, idle), { _tag: "Wait" })
    const go = Goal.next(goal, idle)
    assert.strictEqual(go._tag, "Continue")
    if (go._tag === "Continue") {
      assert.strictEqual(go.goal.continuations, 1)
      assert.strictEqual(go.prompt, Goal.continuationPrompt(goal))
    }
    assert.deepStrictEqual(Goal.next(goal, { ...idle, lastFailed: true }), {
      _tag: "Stop",
      goal: { ...goal, status: "blocked", reason: "the last turn failed" }
    })
  })

  it("afterTurn: a failed continuation blocks the goal; an ended goal stays as it is", () => {
    assert.deepStrictEqual(Goal.afterTurn(goal, { toolCalls: 3, answer: "x", failed: true }), {
      ...goal,
      status: "blocked",
      reason: "the last turn failed"
    })
    assert.isUndefined(Goal.afterTurn(undefined, { toolCalls: 1, answer: "x", failed: false }))
    const done = { ...goal, status: "done" as const }
    assert.strictEqual(Goal.afterTurn(done, { toolCalls: 0, answer: "", failed: true }), done)
  })
})
