import { assert, describe, it } from "@effect/vitest"
import {
  Compactor,
  Hooks,
  Ids,
  Invariants,
  Permissions,
  Message,
  ModelError,
  Pipeline,
  SessionState,
  Stage,
  TestModel,
  Tool,
  ToolRegistry,
  ToolRuntime,
  TurnLoop
} from "@keel/core"
import type { TurnEvent } from "@keel/core"
import { Chunk, type Context, Deferred, Effect, Fiber, Layer, Ref, Schema, Stream, TestClock } from "effect"

type Event = TurnEvent.TurnEvent

/** A tool that echoes its text after `delayMs` (under Clock) and records start/end/interruption. */
const makeEcho = (log: Ref.Ref<ReadonlyArray<string>>, options: { name?: string; safe?: boolean } = {}) =>
  Tool.make({
    name: options.name ?? "Echo",
    description: "Echoes text",
    input: Schema.Struct({ text: Schema.String, delayMs: Schema.optional(Schema.Number) }),
    isReadOnly: options.safe ?? true,
    call: (input) =>
      Effect.gen(function*() {
        yield* Ref.update(log, (l) => [...l, `start ${input.text}`])
        if (input.delayMs !== undefined) yield* Effect.sleep(input.delayMs)
        yield* Ref.update(log, (l) => [...l, `end ${input.text}`])
        return `echo: ${input.text}`
      }).pipe(Effect.onInterrupt(() => Ref.update(log, (l) => [...l, `interrupted ${input.text}`])))
  })

const failing = Tool.make({
  name: "Fails",
  description: "Always fails",
  input: Schema.Struct({}),
  isReadOnly: true,
  call: () => Tool.fail("the disk is on fire")
})

const crashing = Tool.make({
  name: "Crashes",
  description: "Always throws",
  input: Schema.Struct({}),
  isReadOnly: true,
  call: () => Effect.sync(() => {
    throw new Error("boom")
  })
})

const setup = (
  script: ReadonlyArray<TestModel.ScriptItem>,
  extraTools: ReadonlyArray<Tool.Any> = [],
  stages: ReadonlyArray<Stage.Stage> = []
) =>
  Effect.gen(function*() {
    const log = yield* Ref.make<ReadonlyArray<string>>([])
    const tools = [makeEcho(log), makeEcho(log, { name: "Write", safe: false }), failing, crashing, ...extraTools]
    const state = yield* SessionState.make("session-test", [Message.user("hello")])
    const layer = Layer.mergeAll(
      TestModel.layer(script),
      Pipeline.layer(stages),
      Compactor.layerNone,
      Ids.layerSeeded(1),
      Hooks.layerNone,
      ToolRuntime.layer().pipe(
        Layer.provideMerge(ToolRegistry.layer(tools)),
        Layer.provideMerge(Permissions.layerAllowAll)
      ),
      Layer.succeed(SessionState.SessionState, state)
    )
    return { log, state, layer: yield* Layer.build(layer) } as const
  })

const runTurn = (
  layer: Context.Context<any>,
  options: Partial<TurnLoop.Options> = {}
): Effect.Effect<ReadonlyArray<Event>> =>
  TurnLoop.run({ model: "claude-test", maxTokens: 1000, cwd: "/tmp", ...options }).pipe(
    Stream.runCollect,
    Effect.map(Chunk.toReadonlyArray),
    Effect.provide(layer)
  ) as Effect.Effect<ReadonlyArray<Event>>

const tags = (events: ReadonlyArray<Event>) =>
  events.filter((e) => e._tag !== "StreamEvents" && e._tag !== "ToolProgress").map((e) => e._tag)
const rawEvents = (events: ReadonlyArray<Event>) =>
  events.flatMap((e) => (e._tag === "StreamEvents" ? e.events : []))
const last = (events: ReadonlyArray<Event>) => events[events.length - 1]!
const complete = (events: ReadonlyArray<Event>) => {
  const e = last(events)
  assert.strictEqual(e._tag, "TurnComplete")
  return e as Extract<Event, { _tag: "TurnComplete" }>
}
const toolResultsOf = (m: Message.Message | undefined) => (m instanceof Message.UserMessage ? m.toolResults : [])

describe("TurnLoop", () => {
  it.scoped("a text answer ends the turn: raw events, the assistant message, then completed", () =>
    Effect.gen(function*() {
      const { layer, state } = yield* setup([TestModel.text("Hi there", { chunkSize: 3 })])
      const events = yield* runTurn(layer)
      assert.deepStrictEqual(tags(events), ["Assistant", "TurnComplete"])
      const raw = rawEvents(events)
      assert.strictEqual(raw.length, 8) // message_start, block start, 3 deltas, block stop, message_delta, message_stop
      const done = complete(events)
      assert.strictEqual(done.reason, "completed")
      assert.strictEqual(done.iterations, 1)
      assert.strictEqual(done.lastMessage?.text, "Hi there")
      const messages = yield* Ref.get(state.messages)
      assert.deepStrictEqual(messages.map((m) => m.role), ["user", "assistant"])
      assert.deepStrictEqual(yield* Ref.get(state.turnCount), 1)
      assert.strictEqual(yield* Ref.get(state.model), "claude-test") // what subagents inherit
      const usage = (yield* Ref.get(state.usage)).get("claude-test")
      assert.deepStrictEqual(usage, {
        inputTokens: 10,
        outputTokens: 5,
        cacheReadInputTokens: 0,
        cacheCreationInputTokens: 0,
        cacheCreationEphemeral5mInputTokens: 0,
        cacheCreationEphemeral1hInputTokens: 0,
        requests: 1
      })
    }))

  it.scoped("a tool round trip: tool_use, its result in the next request, then the answer", () =>
    Effect.gen(function*() {
      const { layer, state } = yield* setup([
        TestModel.reply([Message.text("Let me echo."), TestModel.toolUse("Echo", { text: "ping" }, "toolu_1")]),
        TestModel.text("It said ping.")
      ])
      const events = yield* Effect.gen(function*() {
        const events = yield* runTurn(layer)
        const requests = yield* TestModel.TestModel.pipe(Effect.flatMap((t) => t.requests))
        assert.strictEqual(requests.length, 2)
        const second = requests[1]!
        assert.deepStrictEqual(second.tools?.map((t) => t.name), ["Echo", "Write", "Fails", "Crashes"])
        assert.deepStrictEqual(second.messages.map((m) => m.role), ["user", "assistant", "user"])
        const results = toolResultsOf(second.messages[2])
        assert.strictEqual(results[0]?.tool_use_id, "toolu_1")
        assert.strictEqual(results[0]?.content, "echo: ping")
        assert.strictEqual(results[0]?.is_error, undefined)
        return events
      }).pipe(Effect.provide(layer))
      assert.deepStrictEqual(tags(events), ["Assistant", "ToolResults", "Assistant", "TurnComplete"])
      assert.strictEqual(complete(events).reason, "completed")
      assert.strictEqual(complete(events).iterations, 2)
      const messages = yield* Ref.get(state.messages)
      assert.deepStrictEqual(Invariants.violations(messages), [])
      assert.strictEqual(messages.length, 4)
    }))

  it.scoped("unknown tools, invalid input, tool failures and crashes become is_error results and the loop goes on", () =>
    Effect.gen(function*() {
      const { layer, state } = yield* setup([
        TestModel.reply([
          TestModel.toolUse("Nope", {}, "t1"),
          TestModel.toolUse("Echo", { text: 42 }, "t2"),
          TestModel.toolUse("Fails", {}, "t3"),
          TestModel.toolUse("Crashes", {}, "t4")
        ]),
        TestModel.text("ok")
      ])
      const events = yield* runTurn(layer)
      assert.strictEqual(complete(events).reason, "completed")
      const results = toolResultsOf((yield* Ref.get(state.messages))[2])
      assert.deepStrictEqual(results.map((r) => r.is_error), [true, true, true, true])
      assert.strictEqual(
        results[0]!.content,
        "<tool_use_error>Error: No such tool available: Nope. The available tools are: Echo, Write, Fails, Crashes.</tool_use_error>"
      )
      assert.include(results[1]!.content as string, "InputValidationError: Echo failed")
      assert.include(results[1]!.content as string, "[\"text\"]")
      assert.include(results[1]!.content as string, "Expected string, actual 42")
      assert.strictEqual(results[2]!.content, "<tool_use_error>the disk is on fire</tool_use_error>")
      assert.include(results[3]!.content as string, "Crashes crashed")
      assert.include(results[3]!.content as string, "boom")
    }))

  it.scoped("malformed tool input JSON is answered with an error result naming the raw text", () =>
    Effect.gen(function*() {
      const events = TestModel.reply([TestModel.toolUse("Echo", { text: "x" }, "t1")]).events.map((e) =>
        e.type === "content_block_delta" && e.delta.type === "input_json_delta"
          ? { ...e, delta: { ...e.delta, partial_json: e.delta.partial_json.replace("}", "") } }
          : e
      )
      const { layer, state } = yield* setup([{ events }, TestModel.text("sorry")])
      yield* runTurn(layer)
      const [result] = toolResultsOf((yield* Ref.get(state.messages))[2])
      assert.strictEqual(result!.is_error, true)
      assert.include(result!.content as string, "the input was not valid JSON: {\"text\":\"x\"")
    }))

  it.scoped("maxTurns bounds the model calls and ends with max_turns after the last call's tools", () =>
    Effect.gen(function*() {
      const again = () => TestModel.reply([TestModel.toolUse("Echo", { text: "again" })])
      const { layer, state } = yield* setup([again, again, again, again])
      const events = yield* runTurn(layer, { maxTurns: 2 })
      const done = complete(events)
      assert.strictEqual(done.reason, "max_turns")
      assert.strictEqual(done.iterations, 2)
      assert.deepStrictEqual(tags(events), ["Assistant", "ToolResults", "Assistant", "ToolResults", "TurnComplete"])
      assert.deepStrictEqual(Invariants.violations(yield* Ref.get(state.messages)), [])
    }))

  it.scoped("a model error ends the turn with model_error and leaves the conversation as it was", () =>
    Effect.gen(function*() {
      const error = new ModelError.Overloaded({ message: "Overloaded", status: 529 })
      const partial = TestModel.text("half an ans").events.slice(0, 4)
      const { layer, state } = yield* setup([TestModel.fail(error, partial)])
      const events = yield* runTurn(layer)
      const done = complete(events)
      assert.strictEqual(done.reason, "model_error")
      assert.strictEqual(done.error?._tag, "Overloaded")
      assert.deepStrictEqual(tags(events), ["TurnComplete"])
      assert.deepStrictEqual((yield* Ref.get(state.messages)).map((m) => m.role), ["user"])
    }))

  it.scoped("concurrency-safe calls run together, unsafe ones alone, and results keep tool_use order", () =>
    Effect.gen(function*() {
      const { layer, log, state } = yield* setup([
        TestModel.reply([
          TestModel.toolUse("Echo", { text: "a", delayMs: 3000 }, "a"),
          TestModel.toolUse("Echo", { text: "b", delayMs: 1000 }, "b"),
          TestModel.toolUse("Write", { text: "c", delayMs: 1000 }, "c"),
          TestModel.toolUse("Echo", { text: "d", delayMs: 1000 }, "d")
        ]),
        TestModel.text("done")
      ])
      const fiber = yield* Effect.fork(runTurn(layer))
      yield* TestClock.adjust("1 second")
      // a and b started together; b finished at 1 s; the unsafe Write waits for a.
      assert.deepStrictEqual(yield* Ref.get(log), ["start a", "start b", "end b"])
      yield* TestClock.adjust("2 seconds")
      assert.deepStrictEqual(yield* Ref.get(log), ["start a", "start b", "end b", "end a", "start c"])
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual((yield* Ref.get(log)).slice(5), ["end c", "start d"])
      yield* TestClock.adjust("1 second")
      const events = yield* Fiber.join(fiber)
      assert.strictEqual(complete(events).reason, "completed")
      const results = toolResultsOf((yield* Ref.get(state.messages))[2])
      assert.deepStrictEqual(results.map((r) => r.tool_use_id), ["a", "b", "c", "d"])
    }))

  it.scoped("interrupting while tools run stops them and answers every tool_use (finished ones keep their result)", () =>
    Effect.gen(function*() {
      const { layer, log, state } = yield* setup([
        TestModel.reply([
          TestModel.toolUse("Echo", { text: "quick", delayMs: 1000 }, "quick"),
          TestModel.toolUse("Echo", { text: "slow", delayMs: 60_000 }, "slow")
        ])
      ])
      const stop = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(runTurn(layer, { interrupt: Deferred.await(stop) }))
      yield* TestClock.adjust("5 seconds")
      yield* Deferred.succeed(stop, undefined)
      const events = yield* Fiber.join(fiber)
      assert.deepStrictEqual(tags(events), ["Assistant", "ToolResults", "TurnComplete"])
      assert.strictEqual(complete(events).reason, "aborted_tools")
      assert.deepStrictEqual(yield* Ref.get(log), ["start quick", "start slow", "end quick", "interrupted slow"])
      const messages = yield* Ref.get(state.messages)
      assert.deepStrictEqual(Invariants.violations(messages), [])
      const results = toolResultsOf(messages[2])
      assert.deepStrictEqual(results.map((r) => [r.tool_use_id, r.content]), [
        ["quick", "echo: quick"],
        ["slow", "<tool_use_error>Interrupted by user</tool_use_error>"]
      ])
    }))

  it.scoped("with an interrupt signal the loop still runs no further than its consumer: the next request waits for the tool results to be handled", () =>
    Effect.gen(function*() {
      const { layer } = yield* setup([
        TestModel.reply([TestModel.toolUse("Echo", { text: "a" })]),
        TestModel.text("done")
      ])
      const stop = yield* Deferred.make<void>()
      // The consumer takes 5 s over the tool results (as a session writing its transcript might).
      const fiber = yield* Effect.fork(
        TurnLoop.run({ model: "claude-test", maxTokens: 1000, cwd: "/tmp", interrupt: Deferred.await(stop) }).pipe(
          Stream.tap((event) => event._tag === "ToolResults" ? Effect.sleep("5 seconds") : Effect.void),
          Stream.runCollect,
          Effect.provide(layer)
        )
      )
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(complete(Chunk.toReadonlyArray(yield* Fiber.join(fiber)) as ReadonlyArray<Event>).reason, "completed")
      const model = yield* TestModel.TestModel.pipe(Effect.provide(layer))
      assert.deepStrictEqual(yield* model.requestTimes, [0, 5_000])
    }))

  it.scoped("interrupting a stalled model stream ends with aborted_streaming and no partial message", () =>
    Effect.gen(function*() {
      const partial = TestModel.text("never finished").events.slice(0, 3)
      const { layer, state } = yield* setup([{ events: partial, stall: true }])
      const stop = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(runTurn(layer, { interrupt: Deferred.await(stop) }))
      yield* TestClock.adjust("10 seconds")
      yield* Deferred.succeed(stop, undefined)
      const events = yield* Fiber.join(fiber)
      assert.strictEqual(complete(events).reason, "aborted_streaming")
      assert.strictEqual(rawEvents(events).length, 3)
      assert.deepStrictEqual((yield* Ref.get(state.messages)).map((m) => m.role), ["user"])
    }))

  it.scoped("a consumer that stops pulling mid-tools still leaves every tool_use answered", () =>
    Effect.gen(function*() {
      const { layer, log, state } = yield* setup([
        TestModel.reply([TestModel.toolUse("Echo", { text: "slow", delayMs: 60_000 }, "slow")])
      ])
      const fiber = yield* Effect.fork(runTurn(layer))
      yield* TestClock.adjust("1 second")
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(yield* Ref.get(log), ["start slow", "interrupted slow"])
      const messages = yield* Ref.get(state.messages)
      assert.deepStrictEqual(Invariants.violations(messages), [])
      assert.strictEqual(toolResultsOf(messages[2])[0]?.content, "<tool_use_error>Interrupted by user</tool_use_error>")
    }))

  it.scoped("pipeline stages run before each call, in order; a stage that breaks the invariants is discarded", () =>
    Effect.gen(function*() {
      const seen: Array<string> = []
      const tag: Stage.Stage = {
        id: Stage.id("tag"),
        run: (messages, context) =>
          Effect.sync(() => {
            seen.push(`tag ${context.iteration} ${messages.length}`)
            return { messages: [Message.user("[tagged]"), ...messages.slice(1)], report: "replaced the first message" }
          })
      }
      const breaker: Stage.Stage = {
        id: Stage.id("breaker"),
        run: (messages) =>
          Effect.sync(() => {
            seen.push(`breaker ${messages.length}`)
            return { messages: messages.slice(1), report: "dropped the first message" }
          })
      }
      const { layer } = yield* setup([
        TestModel.reply([TestModel.toolUse("Echo", { text: "x" })]),
        TestModel.text("done")
      ], [], [tag, breaker])
      const events = yield* runTurn(layer)
      assert.deepStrictEqual(seen, ["tag 1 1", "breaker 1", "tag 2 3", "breaker 3"])
      const reports = events.filter((e) => e._tag === "StageApplied").map((e) =>
        (e as Extract<Event, { _tag: "StageApplied" }>).report
      )
      assert.strictEqual(reports.length, 4)
      assert.deepStrictEqual(reports[0], { stage: "tag", report: "replaced the first message" })
      assert.strictEqual(reports[1]!.stage, "breaker")
      assert.include(reports[1]!.report, "discarded")
      assert.include(reports[3]!.report, "must start with a user message")
    }))

  it.scoped("the per-event path does not deepen with iterations: 50 tool iterations stream every event", () =>
    Effect.gen(function*() {
      const again = () => TestModel.reply([TestModel.toolUse("Echo", { text: "loop" })], { chunkSize: 4 })
      const script = [...Array.from({ length: 50 }, () => again), TestModel.text("end")]
      const { layer, state } = yield* setup(script)
      const events = yield* runTurn(layer)
      const done = complete(events)
      assert.strictEqual(done.reason, "completed")
      assert.strictEqual(done.iterations, 51)
      assert.strictEqual((yield* Ref.get(state.messages)).length, 1 + 50 * 2 + 1)
    }))

  it.scoped("a consumer that stops pulling holds the loop back (nothing runs ahead of the consumer)", () =>
    Effect.gen(function*() {
      const again = () => TestModel.reply([TestModel.toolUse("Echo", { text: "x" })])
      const { layer } = yield* setup(Array.from({ length: 300 }, () => again))
      const requests = yield* Effect.gen(function*() {
        const pull = yield* Stream.toPull(TurnLoop.run({ model: "claude-test", maxTokens: 1000, cwd: "/tmp" }))
        yield* pull
        // adjust waits until every fiber is done or suspended: the loop runs as far as it can.
        yield* TestClock.adjust("1 second")
        return yield* Effect.flatMap(TestModel.TestModel, (t) => t.requests)
      }).pipe(Effect.provide(layer))
      // The loop is pulled: it does not run ahead of its consumer.
      assert.strictEqual(requests.length, 1)
    }))
})
