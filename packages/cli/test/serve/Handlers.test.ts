/**
 * The runtime protocol's handlers through `@effect/rpc`'s in-memory client (`RpcTest`), over
 * sessions on the testing layer and `TestClock`: a first turn holds (a 10 s `Sleep` call of virtual
 * time) while the test queues, lists, cancels and reads behind it, then time passes and each
 * caller's stream is checked.
 */
import { assert, describe, it } from "@effect/vitest"
import * as RpcTest from "@effect/rpc/RpcTest"
import { Permissions, RuntimeProtocol, SessionRuntime, Tool } from "@keel/core"
import { UpdateGoal } from "@keel/tools"
import { Testing, TestModel } from "@keel/core/testing"
import { Chunk, Effect, Fiber, Layer, Schema, Stream, TestClock } from "effect"
import * as Serve from "../../src/serve/Serve.js"
import { testOpener } from "./TestOpener.js"

/** `Sleep` (`ms`): sleeps under `Clock`, so `TestClock` drives it. */
const sleeper = Tool.make({
  name: "Sleep",
  description: "Sleeps",
  input: Schema.Struct({ ms: Schema.Number }),
  isReadOnly: true,
  call: (input) => Effect.as(Effect.sleep(input.ms), `slept ${input.ms}`)
})

/** A client of the protocol, in memory, over the handlers and sessions on `testOpener` (closed with the test's scope). */
const client = Effect.gen(function*() {
  const server = yield* Layer.build(Serve.layer(yield* testOpener))
  return yield* RpcTest.makeClient(RuntimeProtocol.RuntimeRpcs).pipe(Effect.provide(server))
})

/** Lets the forked fibers run up to their next wait on virtual time. */
const settle = Effect.repeatN(Effect.yieldNow(), 50)

type Event = RuntimeProtocol.RuntimeEvent

const collect = <E>(stream: Stream.Stream<Event, E>) => Effect.fork(Effect.map(Stream.runCollect(stream), Chunk.toReadonlyArray))

/** The events' tags, and each message's type (`Message:result`). */
const shape = (events: ReadonlyArray<Event>) =>
  events.map((e) => (e._tag === "Message" ? `Message:${e.message.type}` : e._tag)).filter((s) => s !== "Message:tool_progress")

const resultText = (events: ReadonlyArray<Event>) => {
  const result = events.find((e) => e._tag === "Message" && e.message.type === "result")
  return result?._tag === "Message" && result.message.type === "result" ? result.message.result : undefined
}

/**
 * An error's fields, to compare: errors that crossed a span come back wrapped (a proxy that carries
 * the span), which deep equality cannot walk.
 */
const fields = (error: object) => ({ ...error })

/** The fields of the error `effect` fails with. */
const failure = <A, E extends object, R>(effect: Effect.Effect<A, E, R>) => Effect.map(Effect.flip(effect), fields)

/** `Touch` (`path`): a tool that changes something, so it asks in the default mode. */
const touch = Tool.make({
  name: "Touch",
  description: "Touches a file",
  input: Schema.Struct({ path: Schema.String }),
  isReadOnly: false,
  call: (input) => Effect.succeed(`touched ${input.path}`)
})

const holding = [TestModel.reply([TestModel.toolUse("Sleep", { ms: 10_000 })]), TestModel.text("first done")]

describe("runtime protocol handlers", () => {
  it.scoped("a session: start, a running turn and a queued one streamed in order, the queue, cancel, read, close", () =>
    Effect.gen(function*() {
      const rpc = yield* client
      const { init, sessionId, warnings } = yield* rpc.session.start({})
      assert.deepStrictEqual([init.type, init.subtype, init.session_id, warnings], ["system", "init", sessionId, []])

      const all = yield* collect(rpc.session.events({ sessionId }))
      yield* settle
      const first = yield* collect(rpc.turn.start({ sessionId, prompt: "first" }))
      yield* settle
      const second = yield* collect(rpc.turn.start({ sessionId, prompt: "second", priority: "later" }))
      const third = yield* collect(rpc.turn.start({ sessionId, prompt: "third" }))
      yield* settle

      const queue = yield* rpc.queue.list({ sessionId })
      assert.isNotNull(queue.running)
      assert.deepStrictEqual(queue.queued.map((q) => [q.preview, q.priority, q.position]), [
        ["third", "next", 0],
        ["second", "later", 1]
      ])
      const [thirdId, secondId] = queue.queued.map((q) => q.id)
      assert.deepStrictEqual(yield* rpc.turn.cancel({ sessionId, turnId: thirdId! }), { outcome: "removed" })
      const cancelled = yield* failure(Fiber.join(third))
      assert.deepStrictEqual(cancelled, fields(new SessionRuntime.TurnCancelled({ turnId: thirdId!, reason: "removed" })))
      assert.deepStrictEqual(
        yield* failure(rpc.queue.promote({ sessionId, turnId: thirdId! })),
        fields(new RuntimeProtocol.TurnNotFound({ sessionId, turnId: thirdId!, expected: "queued" }))
      )
      yield* rpc.queue.promote({ sessionId, turnId: secondId! })

      yield* TestClock.adjust("10 seconds")
      const firstEvents = yield* Fiber.join(first)
      assert.deepStrictEqual(shape(firstEvents), [
        "Admitted",
        "Started",
        "Message:system",
        "Message:assistant",
        "Message:user",
        "Message:assistant",
        "Message:system", // the model has no price: said once
        "Message:result",
        "Ended"
      ])
      assert.strictEqual(resultText(firstEvents), "first done")
      const secondEvents = yield* Fiber.join(second)
      assert.deepStrictEqual(shape(secondEvents), ["Admitted", "Started", "Message:assistant", "Message:result", "Ended"])
      assert.strictEqual(resultText(secondEvents), "for second")
      assert.deepStrictEqual(secondEvents[0], RuntimeProtocol.Admitted.make({ turnId: secondId! }))

      const read = yield* rpc.session.read({ sessionId })
      assert.deepStrictEqual([read.sessionId, read.currentSessionId, read.cwd, read.model], [sessionId, sessionId, "/work", "claude-test"])
      assert.deepStrictEqual([read.running, read.queued], [null, []])
      assert.strictEqual(read.lastResult?.result, "for second")
      assert.deepStrictEqual(read.messages.map((m) => m.role), ["user", "assistant", "user", "assistant", "user", "assistant"])
      assert.deepStrictEqual(yield* rpc.session.list({}), [
        { sessionId, cwd: "/work", model: "claude-test", running: null, queued: 0 }
      ])

      yield* rpc.session.close({ sessionId })
      // Every turn that ran, in order, and the cancelled one, then the stream ends with the session.
      const seen = yield* Fiber.join(all)
      assert.deepStrictEqual(
        seen.filter((e) => e._tag !== "Message").map((e) => [e._tag, e.turnId]),
        [
          ["Started", firstEvents[0]!.turnId],
          ["Cancelled", thirdId],
          ["Ended", firstEvents[0]!.turnId],
          ["Started", secondId],
          ["Ended", secondId]
        ]
      )
      assert.deepStrictEqual(
        yield* failure(rpc.session.read({ sessionId })),
        fields(new RuntimeProtocol.SessionNotFound({ sessionId }))
      )
    }).pipe(Effect.provide(Testing.layer([...holding, TestModel.text("for second")], { tools: [sleeper] }))))

  it.scoped("cancelling the running turn interrupts it (it ends with its result); the queue goes on; clear drops what waits", () =>
    Effect.gen(function*() {
      const rpc = yield* client
      const { sessionId } = yield* rpc.session.start({})
      const first = yield* collect(rpc.turn.start({ sessionId, prompt: "first" }))
      yield* settle
      const waiting = yield* Effect.forEach(["a", "b"], (prompt) => collect(rpc.turn.start({ sessionId, prompt })))
      yield* settle
      const { queued, running } = yield* rpc.queue.list({ sessionId })
      const { removed } = yield* rpc.queue.clear({ sessionId })
      assert.deepStrictEqual(removed.map((q) => q.id), queued.map((q) => q.id))
      for (const [i, fiber] of waiting.entries()) {
        assert.deepStrictEqual(
          yield* failure(Fiber.join(fiber)),
          fields(new SessionRuntime.TurnCancelled({ turnId: queued[i]!.id, reason: "cleared" }))
        )
      }
      assert.deepStrictEqual(yield* rpc.turn.cancel({ sessionId, turnId: running! }), { outcome: "interrupted" })
      const events = yield* Fiber.join(first)
      const result = events.at(-2)
      assert.strictEqual(result?._tag === "Message" && result.message.type === "result" && result.message.subtype, "error_during_execution")
      assert.deepStrictEqual(
        yield* failure(rpc.turn.cancel({ sessionId, turnId: running! })),
        fields(new RuntimeProtocol.TurnNotFound({ sessionId, turnId: running!, expected: "queued or running" }))
      )
      // A later turn runs as usual.
      const after = yield* rpc.turn.start({ sessionId, prompt: "after" }).pipe(Stream.runCollect, Effect.map(Chunk.toReadonlyArray))
      assert.strictEqual(resultText(after), "after done")
    }).pipe(Effect.provide(Testing.layer([holding[0]!, TestModel.text("after done")], { tools: [sleeper] }))))

  it.scoped("a slash command is a turn (/compact is session.compact); unknown sessions and turns are typed errors", () =>
    Effect.gen(function*() {
      const rpc = yield* client
      const { sessionId } = yield* rpc.session.start({ model: "claude-other", cwd: "/elsewhere" })
      const cost = yield* rpc.turn.start({ sessionId, prompt: "/cost" }).pipe(Stream.runCollect, Effect.map(Chunk.toReadonlyArray))
      assert.deepStrictEqual(shape(cost), ["Admitted", "Started", "Message:system", "Message:system", "Message:result", "Ended"])
      const compact = yield* rpc.session.compact({ sessionId }).pipe(Stream.runCollect, Effect.map(Chunk.toReadonlyArray))
      assert.strictEqual(compact.at(-2)?._tag, "Message")
      const missing = fields(new RuntimeProtocol.SessionNotFound({ sessionId: "nope" }))
      assert.deepStrictEqual(yield* failure(rpc.queue.list({ sessionId: "nope" })), missing)
      assert.deepStrictEqual(yield* failure(Stream.runDrain(rpc.turn.start({ sessionId: "nope", prompt: "x" }))), missing)
      assert.deepStrictEqual(yield* failure(Stream.runDrain(rpc.session.events({ sessionId: "nope" }))), missing)
      assert.deepStrictEqual(yield* failure(rpc.session.close({ sessionId: "nope" })), missing)
      assert.deepStrictEqual(
        yield* failure(rpc.queue.remove({ sessionId, turnId: "t" })),
        fields(new RuntimeProtocol.TurnNotFound({ sessionId, turnId: "t", expected: "queued" }))
      )
      // A second runtime on the same session is refused.
      assert.deepStrictEqual(
        yield* failure(rpc.session.start({ sessionId })),
        fields(new RuntimeProtocol.SessionAlreadyOpen({ sessionId }))
      )
    }).pipe(Effect.provide(Testing.layer([]))))

  it.scoped("an ask is a pending action answered with action.respond; a goal set over the protocol runs to done; read and export show both", () =>
    Effect.gen(function*() {
      const rpc = yield* client
      const { sessionId } = yield* rpc.session.start({})
      const all = yield* collect(rpc.session.events({ sessionId }))
      yield* settle
      const turn = yield* collect(rpc.turn.start({ sessionId, prompt: "touch a" }))
      yield* settle
      const [pending] = yield* rpc.action.list({ sessionId })
      assert.deepStrictEqual([pending?.request.kind, pending?.request.kind === "permission" && pending.request.toolName], [
        "permission",
        "Touch"
      ])
      // An answer of the wrong kind is refused, typed, and the action still waits.
      const wrong = yield* Effect.flip(rpc.action.respond({ sessionId, actionId: pending!.id, answer: { action: "accept" } }))
      assert.deepStrictEqual([wrong._tag, wrong._tag === "InvalidAnswer" && wrong.kind], ["InvalidAnswer", "permission"])
      yield* rpc.action.respond({ sessionId, actionId: pending!.id, answer: { behavior: "allow" } })
      const events = yield* Fiber.join(turn)
      const turnId = events[0]!.turnId
      // The turn's stream carries its action, opened and answered, among its messages.
      assert.deepStrictEqual(
        events.filter((e) => e._tag === "Action").map((e) => e._tag === "Action" && [e.turnId, e.event.event]),
        [[turnId, "opened"], [turnId, "resolved"]]
      )
      assert.strictEqual(resultText(events), "touched a")
      assert.deepStrictEqual(
        yield* failure(rpc.action.respond({ sessionId, actionId: pending!.id, answer: { behavior: "allow" } })),
        fields(new RuntimeProtocol.ActionNotFound({ actionId: pending!.id }))
      )

      // The goal: the idle runtime admits a continuation turn, which ends it with update_goal.
      const goal = yield* rpc.goal.set({ sessionId, objective: "finish the work", maxContinuations: 3 })
      assert.deepStrictEqual([goal.objective, goal.status, goal.maxContinuations], ["finish the work", "active", 3])
      yield* settle
      const read = yield* rpc.session.read({ sessionId })
      assert.deepStrictEqual([read.goal?.status, read.goal?.reason, read.goal?.continuations], ["done", "all finished", 1])
      assert.deepStrictEqual(read.pendingActions, [])
      assert.deepStrictEqual(read.readModel?.turns.map((t) => t.items.filter((i) => i._tag === "tool_call").length), [1, 1])
      assert.deepStrictEqual(yield* rpc.goal.clear({ sessionId }), { cleared: true })
      assert.deepStrictEqual(yield* rpc.goal.pause({ sessionId, paused: true }), { changed: false })

      const review = yield* rpc.session.export({ sessionId, format: "review" })
      assert.strictEqual(review.mediaType, "application/json")
      assert.strictEqual(JSON.parse(review.text).kind, "keel/review")
      const handoff = yield* rpc.session.export({ sessionId, format: "handoff" })
      assert.strictEqual(handoff.mediaType, "text/markdown")

      yield* rpc.session.close({ sessionId })
      const seen = yield* Fiber.join(all)
      // Both turns were seen by the session's watcher: the one asked for and the goal's continuation.
      assert.deepStrictEqual(seen.filter((e) => e._tag === "Started").length, 2)
    }).pipe(Effect.provide(Testing.layer([
      TestModel.reply([TestModel.toolUse("Touch", { path: "a" })]),
      TestModel.text("touched a"),
      TestModel.reply([TestModel.toolUse("update_goal", { status: "done", reason: "all finished" })]),
      TestModel.text("goal done")
    ], { tools: [touch, UpdateGoal.tool], permissions: Permissions.layerAsking(Permissions.config({}).config) }))))
})
