/**
 * Persistent goals on a real session and runtime under the testing layer and `TestClock`: the
 * idle runtime admits continuation turns through its queue until the model ends the goal with
 * `update_goal`, and never while input is queued, an action waits, the goal is paused, its budget
 * is spent or the last turn failed; a continuation without progress blocks it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Actions, type Message, ModelError, Session, SessionRuntime, Tool, TestModel } from "@keel/core"
import { Testing } from "@keel/core/testing"
import { UpdateGoal } from "@keel/tools"
import { Effect, Schema, Stream, TestClock } from "effect"
import { ownScope, release } from "../packages/core/test/support/Sessions.js"

/** `Step` (`ms`): waits `ms` of virtual time, then says it stepped (a unit of progress). */
const step = Tool.make({
  name: "Step",
  description: "Takes a step",
  input: Schema.Struct({ ms: Schema.Number }),
  isReadOnly: true,
  call: (input) => Effect.as(input.ms > 0 ? Effect.sleep(input.ms) : Effect.void, "stepped")
})

const tools = { tools: [step, UpdateGoal.tool] }

/** The text of each request's last prompt (not tool results). */
const promptsOf = (requests: ReadonlyArray<{ readonly messages: ReadonlyArray<Message.Message> }>) =>
  requests.map((request) => {
    const last = request.messages.filter((m) =>
      m.role === "user" && (typeof m.content === "string" || m.content.some((b) => b.type === "text"))
    ).at(-1)!
    return typeof last.content === "string" ? last.content : last.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("")
  })

/** A runtime over a fresh session, every turn's stream drained as it starts. */
const runtime = Effect.gen(function*() {
  const session = yield* Session.make({ model: "claude-test", cwd: "/work" })
  const rt = yield* SessionRuntime.make(session)
  yield* Effect.forkScoped(Stream.runForEach(yield* rt.turns, (turn) => Stream.runDrain(Stream.catchAll(turn.events, () => Stream.empty))))
  return { rt, session }
})

const prompts = Effect.flatMap(TestModel.TestModel, (model) => Effect.map(model.requests, promptsOf))

const isContinuation = (prompt: string) => prompt.startsWith("Continue working toward the session's goal: ")

describe("goal continuation", () => {
  it.scoped("continuation turns run while the goal is active, and stop when update_goal says done", () =>
    Effect.gen(function*() {
      const { rt } = yield* runtime
      yield* rt.setGoal("make the tests pass")
      yield* rt.resume
      yield* rt.idle
      const goal = yield* rt.goal
      assert.strictEqual(goal?.status, "done")
      assert.strictEqual(goal?.reason, "all green")
      assert.strictEqual(goal?.continuations, 2)
      const sent = yield* prompts
      assert.strictEqual(sent.length, 4, "two continuation turns of two requests each, then nothing")
      assert.isTrue(sent.every(isContinuation))
      assert.include(sent[0]!, "make the tests pass")
      assert.include(sent[2]!, "continuation turn 2 of at most 20")
    }).pipe(Effect.provide(Testing.layer([
      TestModel.reply([TestModel.toolUse("Step", { ms: 0 })]),
      TestModel.text("one step further"),
      TestModel.reply([TestModel.toolUse("update_goal", { status: "done", reason: "all green" })]),
      TestModel.text("done")
    ], tools))))

  it.scoped("/goal through the session sets it; the continuation follows the command's reply", () =>
    Effect.gen(function*() {
      const { rt } = yield* runtime
      yield* rt.submit("/goal tidy the docs")
      yield* rt.idle
      assert.strictEqual((yield* rt.goal)?.status, "done")
      const sent = yield* prompts
      assert.include(sent[0]!, "tidy the docs")
      yield* rt.submit("/goal clear")
      yield* rt.idle
      assert.isUndefined(yield* rt.goal)
    }).pipe(Effect.provide(Testing.layer([
      TestModel.reply([TestModel.toolUse("update_goal", { status: "done", reason: "tidy" })]),
      TestModel.text("ok")
    ], tools))))

  it.scoped("input queued during a continuation runs before the next continuation", () =>
    Effect.gen(function*() {
      const { rt } = yield* runtime
      yield* rt.setGoal("long job")
      yield* rt.resume
      yield* Effect.repeatN(Effect.yieldNow(), 50)
      yield* rt.submit("a question from the user")
      yield* TestClock.adjust("10 seconds")
      yield* rt.idle
      const sent = yield* prompts
      assert.deepStrictEqual(sent.map((p) => (isContinuation(p) ? "goal" : p)), [
        "goal",
        "goal",
        "a question from the user",
        "goal",
        "goal"
      ])
      assert.strictEqual((yield* rt.goal)?.status, "done")
    }).pipe(Effect.provide(Testing.layer([
      TestModel.reply([TestModel.toolUse("Step", { ms: 10_000 })]),
      TestModel.text("first step"),
      TestModel.text("the answer"),
      TestModel.reply([TestModel.toolUse("update_goal", { status: "done", reason: "finished" })]),
      TestModel.text("ok")
    ], tools))))

  it.scoped("a paused goal does not continue; resumed, it does", () =>
    Effect.gen(function*() {
      const { rt } = yield* runtime
      yield* rt.setGoal("paused work")
      assert.isTrue(yield* rt.pauseGoal(true))
      yield* rt.resume
      yield* rt.idle
      assert.deepStrictEqual(yield* prompts, [])
      assert.strictEqual((yield* rt.goal)?.status, "paused")
      assert.isTrue(yield* rt.pauseGoal(false))
      yield* rt.idle
      assert.strictEqual((yield* rt.goal)?.status, "done")
      assert.strictEqual((yield* prompts).length, 2)
    }).pipe(Effect.provide(Testing.layer([
      TestModel.reply([TestModel.toolUse("update_goal", { status: "done", reason: "ok" })]),
      TestModel.text("ok")
    ], tools))))

  it.scoped("a pending action holds the goal back until it is answered", () =>
    Effect.gen(function*() {
      const { rt } = yield* runtime
      const actions = yield* Actions.Actions
      yield* actions.restore([{
        id: "act-1",
        turnId: null,
        request: { kind: "elicitation", serverName: "docs", message: "Which space?" },
        openedAt: 0
      }])
      yield* rt.setGoal("waits for an answer")
      yield* rt.resume
      yield* rt.idle
      assert.deepStrictEqual(yield* prompts, [], "no continuation while an action waits")
      yield* actions.respond("act-1", { action: "decline" })
      yield* Effect.repeatN(Effect.yieldNow(), 20)
      yield* rt.idle
      assert.strictEqual((yield* prompts).length, 2)
    }).pipe(Effect.provide(Testing.layer([
      TestModel.reply([TestModel.toolUse("update_goal", { status: "done", reason: "ok" })]),
      TestModel.text("ok")
    ], tools))))

  it.scoped("the goal's continuation budget: spent, the goal is blocked with why", () =>
    Effect.gen(function*() {
      const { rt } = yield* runtime
      yield* rt.setGoal("never quite done", { maxContinuations: 2 })
      yield* rt.resume
      yield* rt.idle
      const goal = yield* rt.goal
      assert.strictEqual(goal?.status, "blocked")
      assert.strictEqual(goal?.reason, "the goal's 2 continuation turns are spent")
      assert.strictEqual((yield* prompts).length, 4)
    }).pipe(Effect.provide(Testing.layer([
      TestModel.reply([TestModel.toolUse("Step", { ms: 0 })]),
      TestModel.text("step one"),
      TestModel.reply([TestModel.toolUse("Step", { ms: 0 })]),
      TestModel.text("step two")
    ], tools))))

  it.scoped("a failed turn blocks the goal", () =>
    Effect.gen(function*() {
      const { rt } = yield* runtime
      yield* rt.setGoal("fragile")
      yield* rt.resume
      yield* rt.idle
      const goal = yield* rt.goal
      assert.strictEqual(goal?.status, "blocked")
      assert.strictEqual(goal?.reason, "the last turn failed")
      assert.strictEqual((yield* prompts).length, 1)
    }).pipe(Effect.provide(Testing.layer([
      TestModel.fail(new ModelError.InvalidRequest({ message: "bad request", status: 400 }))
    ], tools))))

  it.scoped("no progress blocks the goal: an answer without a tool call, or the same answer twice", () =>
    Effect.gen(function*() {
      const { rt } = yield* runtime
      yield* rt.setGoal("talks only")
      yield* rt.resume
      yield* rt.idle
      assert.deepStrictEqual(yield* rt.goal, {
        ...(yield* rt.goal)!,
        status: "blocked",
        reason: "a continuation turn made no progress (no tool call)"
      })
      assert.strictEqual((yield* prompts).length, 1)
    }).pipe(Effect.provide(Testing.layer([TestModel.text("I would do it like this...")], tools))))

  it.scoped("the same answer twice blocks the goal", () =>
    Effect.gen(function*() {
      const { rt } = yield* runtime
      yield* rt.setGoal("repeats itself")
      yield* rt.resume
      yield* rt.idle
      assert.strictEqual((yield* rt.goal)?.reason, "a continuation turn gave the same answer as the one before")
      assert.strictEqual((yield* prompts).length, 4)
    }).pipe(Effect.provide(Testing.layer([
      TestModel.reply([TestModel.toolUse("Step", { ms: 0 })]),
      TestModel.text("still working"),
      TestModel.reply([TestModel.toolUse("Step", { ms: 0 })]),
      TestModel.text("still working")
    ], tools))))

  it.scoped("the goal is saved with the session and comes back with it, paused as it was", () =>
    Effect.gen(function*() {
      // The first session in a scope of its own, closed (its lock released) before the resume.
      const { rt, session } = yield* ownScope(runtime, (made) => made.session)
      yield* rt.setGoal("persisted", { maxContinuations: 5 })
      yield* rt.pauseGoal(true)
      const saved = yield* rt.goal
      yield* release(session)
      const resumed = yield* Session.make({ model: "claude-test", cwd: "/work", resume: yield* session.sessionId })
      const again = yield* SessionRuntime.make(resumed)
      assert.deepStrictEqual(yield* again.goal, saved)
      assert.strictEqual(saved?.status, "paused")
      assert.strictEqual(saved?.maxContinuations, 5)
    }).pipe(Effect.provide(Testing.layer([], tools))))
})
