/**
 * The REPL's turns through the session's runtime, on a real session under the testing layer and
 * `TestClock`: the first turn holds (a `Sleep` tool call of 10 s of virtual time) while the test
 * submits, pulls back and switches sessions behind it, then lets time pass and checks what ran, in
 * which order it was printed, and what the queued list showed meanwhile.
 */
import { assert, describe, it } from "@effect/vitest"
import { type Message, type SdkMessage, Session, TestModel } from "@keel/core"
import { Testing } from "@keel/core/testing"
import { Effect, Fiber, TestClock } from "effect"
import { sleeper } from "../../../core/test/support/Tools.js"
import * as TurnQueue from "../../src/repl/TurnQueue.js"

/** The first turn's script: a 10 s tool call, then its answer. */
const holding = [TestModel.reply([TestModel.toolUse("Sleep", { ms: 10_000 })]), TestModel.text("first done")]

/** Lets the fibers (and the promises between them) run up to their next wait on virtual time. */
const settle = Effect.repeatN(Effect.yieldNow(), 100)

/** Hooks that log what the REPL would print, and every queued list shown. */
const recorder = (reply: TurnQueue.Hooks["reply"] = () => undefined) => {
  const log: Array<string> = []
  const shown: Array<ReadonlyArray<string>> = []
  const hooks: TurnQueue.Hooks = {
    started: (text) => log.push(`start ${text ?? "(the runtime's own)"}`),
    render: (message: SdkMessage.SdkMessage) => {
      if (message.type === "result") log.push(`result ${message.subtype === "success" ? message.result : message.subtype}`)
      if (message.type === "system" && message.subtype === "local_command_output") log.push(`output ${message.content}`)
    },
    ended: (text) => Effect.sync(() => log.push(`end ${text ?? "(the runtime's own)"}`)),
    queued: (previews) => shown.push(previews),
    refused: (text, reason) => log.push(`refused ${text}: ${reason}`),
    reply
  }
  return { hooks, log, shown }
}

/** What printing the turn of `text` logs: its start, its result (if it has one), its end. */
const printed = (text: string, result?: string) => [`start ${text}`, ...(result === undefined ? [] : [`result ${result}`]), `end ${text}`]

/** The prompt of each model request: its last user message that is not tool results. */
const prompts = Effect.map(Effect.flatMap(TestModel.TestModel, (model) => model.requests), (requests) =>
  requests.map((request: { readonly messages: ReadonlyArray<Message.Message> }) => {
    const last = request.messages.filter((m) =>
      m.role === "user" && (typeof m.content === "string" || m.content.some((b) => b.type === "text"))
    ).at(-1)!
    return typeof last.content === "string" ? last.content : last.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("")
  }))

/** Submits `text` in a fiber of its own (its promise resolves once the turn is printed). */
const submit = (queue: TurnQueue.TurnQueue, text: string) => Effect.fork(Effect.promise(() => queue.submit(text)))

/**
 * A queue over a fresh session whose first turn ("first") runs and has reached its wait, with
 * `queued` submitted behind it.
 */
const withFirstRunning = (options: { readonly reply?: TurnQueue.Hooks["reply"]; readonly queued?: ReadonlyArray<string> } = {}) =>
  Effect.gen(function*() {
    const session = yield* Session.make({ model: "claude-test", cwd: "/work" })
    const recorded = recorder(options.reply)
    const queue = yield* TurnQueue.make(session, recorded.hooks)
    const first = yield* submit(queue, "first")
    yield* settle
    const queued = yield* Effect.forEach(options.queued ?? [], (text) => submit(queue, text))
    yield* settle
    return { ...recorded, first, queue, queued }
  })

describe("TurnQueue", () => {
  it.scoped("a prompt submitted while a turn runs waits, listed; it runs after, and the turns print whole in run order", () =>
    Effect.gen(function*() {
      const { first, log, queue, queued: [second, third], shown } = yield* withFirstRunning({
        queued: ["second", "third\n  line two"]
      })
      assert.isTrue(queue.running())
      assert.deepStrictEqual(shown.at(-1), ["second", "third line two"])
      assert.strictEqual(queue.queued(), 2)
      assert.deepStrictEqual(log, ["start first"], "nothing of the queued prompts is printed yet")

      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(Fiber.zip(first, Fiber.zip(second!, third!)))
      assert.deepStrictEqual(log, [
        ...printed("first", "first done"),
        ...printed("second", "for second"),
        ...printed("third\n  line two", "for third")
      ])
      // Each prompt left the list when its turn started.
      assert.deepStrictEqual(shown.slice(-3), [["second", "third line two"], ["third line two"], []])
      assert.isFalse(queue.running())
      assert.deepStrictEqual(yield* prompts, ["first", "first", "second", "third\n  line two"])
    }).pipe(Effect.provide(Testing.layer([...holding, TestModel.text("for second"), TestModel.text("for third")], { tools: [sleeper] }))))

  it.scoped("pullBack takes the last queued prompt out of the queue: its text comes back, it never runs, the rest do", () =>
    Effect.gen(function*() {
      const { first, log, queue, queued: [second, third], shown } = yield* withFirstRunning({ queued: ["second", "third"] })
      assert.strictEqual(yield* Effect.promise(() => queue.pullBack()), "third")
      assert.deepStrictEqual(shown.at(-1), ["second"])
      yield* Fiber.join(third!)
      assert.strictEqual(yield* Effect.promise(() => queue.pullBack()), "second")
      assert.strictEqual(yield* Effect.promise(() => queue.pullBack()), undefined, "nothing waits")
      yield* Fiber.join(second!)
      // Edited and entered again, it waits its turn like any prompt.
      const edited = yield* submit(queue, "third, edited")
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(Fiber.zip(first, edited))
      assert.deepStrictEqual(log.filter((l) => l.startsWith("start")), ["start first", "start third, edited"])
      assert.deepStrictEqual(yield* prompts, ["first", "first", "third, edited"])
    }).pipe(Effect.provide(Testing.layer([...holding, TestModel.text("for the edit")], { tools: [sleeper] }))))

  it.scoped("interrupt stops the running turn (it ends with its result); what waits runs next", () =>
    Effect.gen(function*() {
      const { first, log, queue, queued: [second] } = yield* withFirstRunning({ queued: ["second"] })
      queue.interrupt()
      yield* Fiber.join(Fiber.zip(first, second!))
      assert.deepStrictEqual(log, [...printed("first", "error_during_execution"), ...printed("second", "for second")])
    }).pipe(Effect.provide(Testing.layer([holding[0]!, TestModel.text("for second")], { tools: [sleeper] }))))

  it.scoped("switchTo, from a reply in its turn: what waits moves to the new session's runtime, and the old one ends after", () =>
    Effect.gen(function*() {
      const other = yield* Session.make({ model: "claude-test", cwd: "/work" })
      let closed = false
      const { first, log, queue, queued: [switching, after] } = yield* withFirstRunning({
        reply: (text, q) =>
          text === "/switch" ? Effect.as(q.switchTo(other, Effect.sync(() => (closed = true))), []) : undefined,
        queued: ["/switch", "on the other session"]
      })
      assert.strictEqual(queue.queued(), 2)
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(Fiber.zip(first, Fiber.zip(switching!, after!)))
      assert.deepStrictEqual(log, [
        ...printed("first", "first done"),
        ...printed("/switch"),
        ...printed("on the other session", "for the other session")
      ])
      assert.isTrue(closed, "the session left is closed once its runtime has ended")
      // The other session's conversation holds only its own prompt.
      const model = yield* TestModel.TestModel
      const last = (yield* model.requests).at(-1)!
      assert.strictEqual(last.messages.length, 1)
    }).pipe(Effect.provide(Testing.layer([...holding, TestModel.text("for the other session")], { tools: [sleeper] }))))

  it.scoped("close drops what waits and stops the running turn; every submitter's promise resolves", () =>
    Effect.gen(function*() {
      const { first, log, queue, queued: [second] } = yield* withFirstRunning({ queued: ["second"] })
      yield* Effect.promise(() => queue.close())
      yield* Fiber.join(Fiber.zip(first, second!))
      assert.deepStrictEqual(log, printed("first", "error_during_execution"))
      assert.deepStrictEqual(yield* prompts, ["first"])
    }).pipe(Effect.provide(Testing.layer([holding[0]!], { tools: [sleeper] }))))

  it.scoped("a turn the runtime admits itself (a goal's continuation) is printed in its place, with no text of the REPL's", () =>
    Effect.gen(function*() {
      const session = yield* Session.make({ model: "claude-test", cwd: "/work" })
      const { hooks, log } = recorder()
      const queue = yield* TurnQueue.make(session, hooks)
      yield* Effect.promise(() => queue.submit("/goal write the notes"))
      yield* settle
      // Its continuation (answered without a tool call, so the goal stops there) comes after it.
      assert.deepStrictEqual(log.filter((l) => /^(start|end) /.test(l)).slice(0, 4), [
        "start /goal write the notes",
        "end /goal write the notes",
        "start (the runtime's own)",
        "end (the runtime's own)"
      ])
      assert.include(log, "result a continuation")
      yield* Effect.promise(() => queue.close())
    }).pipe(Effect.provide(Testing.layer([TestModel.text("a continuation")]))))
})
