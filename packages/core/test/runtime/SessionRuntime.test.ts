/**
 * The runtime that owns a session's turn admission, on a real session under the testing layer and
 * `TestClock`: the first turn holds (a `Sleep` tool call of 10 s of virtual time) while the test
 * queues, lists, reorders and drops input behind it, then lets time pass and checks what ran, in
 * which order, and what each caller's stream got.
 */
import { assert, describe, it } from "@effect/vitest"
import { type Message, type SdkMessage, Session, SessionRuntime, TestModel } from "@keel/core"
import { Testing } from "@keel/core/testing"
import { Effect, Exit, Fiber, Scope, Stream, TestClock } from "effect"
import { sleeper } from "../support/Tools.js"

/** The prompt each request was made for: the last user message that is not tool results. */
const promptsOf = (requests: ReadonlyArray<{ readonly messages: ReadonlyArray<Message.Message> }>) =>
  requests.map((request) => {
    const prompts = request.messages.filter((m) =>
      m.role === "user" && (typeof m.content === "string" || m.content.some((b) => b.type === "text"))
    )
    const last = prompts.at(-1)!
    return typeof last.content === "string"
      ? last.content
      : last.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("")
  })

/** The first turn's script: a 10 s tool call, then its answer. */
const holding = [TestModel.reply([TestModel.toolUse("Sleep", { ms: 10_000 })]), TestModel.text("first done")]

/** A runtime over a fresh session, in the test's scope. */
const runtime = Effect.gen(function*() {
  const session = yield* Session.make({ model: "claude-test", cwd: "/work" })
  return yield* SessionRuntime.make(session)
})

/** Reads a turn's stream in a fiber of its own. */
const read = (submitted: SessionRuntime.Submitted) => Effect.fork(Stream.runCollect(submitted.events))

const resultOf = (messages: Iterable<SdkMessage.SdkMessage>) => [...messages].find((m) => m.type === "result")

/** Lets the forked fibers run up to their next wait on virtual time. */
const settle = Effect.repeatN(Effect.yieldNow(), 50)

/** A runtime whose first turn ("first") runs, read in a fiber, and has reached its wait. */
const withFirstRunning = Effect.gen(function*() {
  const rt = yield* runtime
  const first = yield* rt.submit("first")
  const firstRead = yield* read(first)
  yield* settle
  return { rt, first, firstRead }
})

describe("SessionRuntime", () => {
  it.scoped("input queues while a turn runs; the queue is listed, promoted and pruned; the rest runs in order", () =>
    Effect.gen(function*() {
      const { first, firstRead, rt } = yield* withFirstRunning
      assert.strictEqual(yield* rt.running, first.turnId)
      yield* TestClock.adjust("1 second")
      const second = yield* rt.submit("second", { priority: "later" })
      const third = yield* rt.submit("third\n  with   more", { priority: "next" })
      const fourth = yield* rt.submit("fourth", { priority: "later" })
      const reads = yield* Effect.forEach([second, third, fourth], read)
      assert.deepStrictEqual(yield* rt.queue, [
        { id: third.turnId, priority: "next", preview: "third with more", queuedAt: 1000, position: 0, kind: "input" },
        { id: second.turnId, priority: "later", preview: "second", queuedAt: 1000, position: 1, kind: "input" },
        { id: fourth.turnId, priority: "later", preview: "fourth", queuedAt: 1000, position: 2, kind: "input" }
      ])
      assert.isTrue(yield* rt.promote(fourth.turnId))
      assert.isTrue(yield* rt.remove(third.turnId))
      assert.isFalse(yield* rt.remove(third.turnId))
      assert.isFalse(yield* rt.promote(first.turnId), "the running turn is not queued")
      assert.deepStrictEqual((yield* rt.queue).map((q) => q.id), [fourth.turnId, second.turnId])

      // The removed turn's stream fails, typed; it never reached the model.
      const removed = yield* Effect.flip(Fiber.join(reads[1]!))
      assert.deepStrictEqual(removed, new SessionRuntime.TurnCancelled({ turnId: third.turnId, reason: "removed" }))
      assert.strictEqual(removed.message, `Turn ${third.turnId} was removed before it ran.`)

      yield* TestClock.adjust("10 seconds")
      yield* rt.idle
      const firstOut = yield* Fiber.join(firstRead)
      assert.strictEqual((resultOf(firstOut) as { result?: string } | undefined)?.result, "first done")
      assert.strictEqual((resultOf(yield* Fiber.join(reads[2]!)) as { result?: string }).result, "for fourth")
      assert.strictEqual((resultOf(yield* Fiber.join(reads[0]!)) as { result?: string }).result, "for second")
      const model = yield* TestModel.TestModel
      assert.deepStrictEqual(promptsOf(yield* model.requests), ["first", "first", "fourth", "second"])
    }).pipe(Effect.provide(Testing.layer([...holding, TestModel.text("for fourth"), TestModel.text("for second")], { tools: [sleeper] }))))

  it.scoped("interruptTurn stops only the turn it names, and only while it runs", () =>
    Effect.gen(function*() {
      const { first, firstRead, rt } = yield* withFirstRunning
      const second = yield* rt.submit("second")
      const secondRead = yield* read(second)
      assert.isFalse(yield* rt.interruptTurn(second.turnId), "a queued turn is not running")
      assert.isFalse(yield* rt.interruptTurn("no-such-turn"))
      assert.isTrue(yield* rt.interruptTurn(first.turnId))
      yield* settle
      const firstResult = resultOf(yield* Fiber.join(firstRead)) as { subtype: string }
      assert.strictEqual(firstResult.subtype, "error_during_execution")
      assert.isFalse(yield* rt.interruptTurn(first.turnId), "a turn that ended takes no interrupt")
      yield* rt.idle
      assert.strictEqual((resultOf(yield* Fiber.join(secondRead)) as { result?: string }).result, "for second")
    }).pipe(Effect.provide(Testing.layer([holding[0]!, TestModel.text("for second")], { tools: [sleeper] }))))

  it.scoped("`now` interrupts the running turn, whose transcript stays valid, and runs before what waited", () =>
    Effect.gen(function*() {
      const { firstRead, rt } = yield* withFirstRunning
      const later = yield* read(yield* rt.submit("later one", { priority: "later" }))
      const urgent = yield* read(yield* rt.submit("urgent", { priority: "now" }))
      yield* settle
      const firstOut = yield* Fiber.join(firstRead)
      const result = resultOf(firstOut) as { subtype: string; terminal_reason?: string }
      assert.isDefined(result, "the interrupted turn still ends with its result")
      // Its tool call is answered (interrupted), so the next request is valid.
      const toolResults = [...firstOut].filter((m) => m.type === "user")
      assert.strictEqual(toolResults.length, 1)
      yield* rt.idle
      assert.strictEqual((resultOf(yield* Fiber.join(urgent)) as { result?: string }).result, "for urgent")
      assert.strictEqual((resultOf(yield* Fiber.join(later)) as { result?: string }).result, "for later")
      const model = yield* TestModel.TestModel
      assert.deepStrictEqual(promptsOf(yield* model.requests), ["first", "urgent", "later one"])
    }).pipe(Effect.provide(Testing.layer([holding[0]!, TestModel.text("for urgent"), TestModel.text("for later")], { tools: [sleeper] }))))

  it.scoped("concurrent submissions each get their own turn, run once each, in the order the queue listed", () =>
    Effect.gen(function*() {
      const { rt } = yield* withFirstRunning
      const submitted = yield* Effect.forEach(
        Array.from({ length: 20 }, (_, i) => `p${i}`),
        (text) => rt.submit(text, { priority: "later" }),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(new Set(submitted.map((s) => s.turnId)).size, 20)
      const listed = yield* rt.queue
      assert.strictEqual(listed.length, 20)
      const byId = new Map(submitted.map((s, i) => [s.turnId, `p${i}`]))
      const reads = yield* Effect.forEach(submitted, read)
      yield* TestClock.adjust("10 seconds")
      yield* rt.idle
      for (const fiber of reads) assert.isDefined(resultOf(yield* Fiber.join(fiber)))
      const model = yield* TestModel.TestModel
      assert.deepStrictEqual(promptsOf(yield* model.requests).slice(2), listed.map((q) => byId.get(q.id)))
    }).pipe(Effect.provide(Testing.layer([...holding, ...Array.from({ length: 20 }, (_, i) => TestModel.text(`r${i}`))], { tools: [sleeper] }))))

  it.scoped("clear cancels everything that waits; a full queue refuses more, naming how many wait", () =>
    Effect.gen(function*() {
      const { rt } = yield* withFirstRunning
      const waiting = yield* Effect.forEach(Array.from({ length: 100 }, (_, i) => `q${i}`), (text) => rt.submit(text))
      const refused = yield* Effect.flip(rt.submit("one too many"))
      assert.deepStrictEqual(refused, new SessionRuntime.QueueFull({ queued: 100 }))
      assert.include(refused.message, "100 inputs already wait")
      const reads = yield* Effect.forEach(waiting.slice(0, 3), read)
      const dropped = yield* rt.clear
      assert.strictEqual(dropped.length, 100)
      assert.deepStrictEqual(yield* rt.queue, [])
      for (const fiber of reads) {
        const exit = yield* Fiber.await(fiber)
        assert.isTrue(Exit.isFailure(exit))
      }
      yield* TestClock.adjust("10 seconds")
      yield* rt.idle
      const model = yield* TestModel.TestModel
      assert.deepStrictEqual(promptsOf(yield* model.requests), ["first", "first"])
    }).pipe(Effect.provide(Testing.layer(holding, { tools: [sleeper] }))))

  it.effect("closing the runtime stops the running turn and cancels what waits", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const rt = yield* runtime.pipe(Scope.extend(scope))
      const running = yield* read(yield* rt.submit("first"))
      yield* settle
      const waiting = yield* read(yield* rt.submit("second"))
      yield* Scope.close(scope, Exit.void)
      const cancelled = yield* Effect.flip(Fiber.join(waiting))
      assert.strictEqual(cancelled.reason, "closed")
      // The running turn's stream ends (it does not hang).
      yield* Fiber.await(running)
    }).pipe(Effect.provide(Testing.layer(holding, { tools: [sleeper] }))))
})

describe("SessionRuntime, order and failures", () => {
  it.scoped("a `now` submitted before the worker started the first turn simply runs first", () =>
    Effect.gen(function*() {
      const rt = yield* runtime
      const first = yield* read(yield* rt.submit("first"))
      const urgent = yield* read(yield* rt.submit("urgent", { priority: "now" }))
      yield* rt.idle
      assert.strictEqual((resultOf(yield* Fiber.join(urgent)) as { result?: string }).result, "for urgent")
      assert.strictEqual((resultOf(yield* Fiber.join(first)) as { result?: string }).result, "for first")
      const model = yield* TestModel.TestModel
      assert.deepStrictEqual(promptsOf(yield* model.requests), ["urgent", "first"])
    }).pipe(Effect.provide(Testing.layer([TestModel.text("for urgent"), TestModel.text("for first")]))))

  it.scoped("a turn that dies does not take the runtime with it: its stream fails, the next turn runs", () =>
    Effect.gen(function*() {
      const rt = yield* runtime
      const doomed = yield* read(yield* rt.submit("first"))
      const next = yield* read(yield* rt.submit("second"))
      yield* rt.idle
      const died = yield* Fiber.await(doomed)
      assert.isTrue(Exit.isFailure(died))
      assert.strictEqual((resultOf(yield* Fiber.join(next)) as { result?: string }).result, "for second")
    }).pipe(Effect.provide(Testing.layer([
      () => {
        throw new Error("a bug below the session")
      },
      TestModel.text("for second")
    ]))))

  it.scoped("interrupt stops the running turn; the queue goes on with its head", () =>
    Effect.gen(function*() {
      const rt = yield* runtime
      const first = yield* read(yield* rt.submit("first"))
      const next = yield* read(yield* rt.submit("next one"))
      yield* settle
      yield* rt.interrupt
      yield* settle
      assert.isDefined(resultOf(yield* Fiber.join(first)))
      yield* rt.idle
      assert.strictEqual((resultOf(yield* Fiber.join(next)) as { result?: string }).result, "for next")
      const model = yield* TestModel.TestModel
      assert.deepStrictEqual(promptsOf(yield* model.requests), ["first", "next one"])
    }).pipe(Effect.provide(Testing.layer([holding[0]!, TestModel.text("for next")], { tools: [sleeper] }))))
})

describe("SessionRuntime, replies and the turns in run order", () => {
  it.scoped("a reply that needs no model waits its place like a turn; `turns` gives every turn in the order it runs", () =>
    Effect.gen(function*() {
      const rt = yield* runtime
      const turns = yield* rt.turns
      const seen = yield* Effect.fork(Stream.runCollect(Stream.take(turns, 4).pipe(
        Stream.mapEffect((turn) => Effect.map(Stream.runCollect(Stream.either(turn.events)), (events) => [turn.turnId, events.length] as const))
      )))
      const first = yield* rt.submit("first")
      yield* settle
      const later = yield* rt.submit("later one", { priority: "later" })
      const reply = yield* rt.submitReply("a malformed line", Effect.succeed([]))
      const urgent = yield* rt.submit("urgent", { priority: "now" })
      yield* TestClock.adjust("10 seconds")
      const ran = [...(yield* Fiber.join(seen))]
      // \`next\` (the reply's default) goes before \`later\`; \`now\` stopped the first turn and went first.
      assert.deepStrictEqual(ran.map(([id]) => id), [first.turnId, urgent.turnId, reply.turnId, later.turnId])
      assert.strictEqual(ran[2]![1], 0, "the reply made no message of its own here")
      // What a reply admitted now would see: the last turn's result, as the worker saw it.
      assert.strictEqual(((yield* rt.lastResult) as { result?: string } | undefined)?.result, "for later")
      const model = yield* TestModel.TestModel
      assert.deepStrictEqual(promptsOf(yield* model.requests), ["first", "urgent", "later one"])
    }).pipe(Effect.provide(Testing.layer([holding[0]!, TestModel.text("for urgent"), TestModel.text("for later")], { tools: [sleeper] }))))
})

describe("SessionRuntime, a slow reader of turns", () => {
  it.effect("a reader that starts after the runtime closed still gets every turn that ran, whole, then the end", () =>
    Effect.gen(function*() {
      const outer = yield* Scope.make()
      const inner = yield* Scope.make()
      const rt = yield* runtime.pipe(Scope.extend(inner))
      const turns = yield* rt.turns.pipe(Scope.extend(outer))
      for (const text of ["a", "b", "c"]) yield* rt.submit(text)
      yield* rt.idle
      yield* Scope.close(inner, Exit.void)
      const read = yield* Stream.runCollect(Stream.mapEffect(turns, (turn) => Stream.runCollect(turn.events)))
      assert.deepStrictEqual([...read].map((events) => (resultOf(events) as { result?: string }).result), ["for a", "for b", "for c"])
      yield* Scope.close(outer, Exit.void)
    }).pipe(Effect.provide(Testing.layer([TestModel.text("for a"), TestModel.text("for b"), TestModel.text("for c")]))))
})
