import { assert, describe, it } from "@effect/vitest"
import { Invariants, Message, ModelError, Pricing, Session, TestModel } from "@keel/core"
import type { SdkMessage } from "@keel/core"
import { Effect, Fiber, Ref, Stream, TestClock } from "effect"
import { collect, layerFor, messagesOf, resultOf } from "./support/Sessions.js"

const options = { model: "claude-sonnet-4-6", cwd: "/work" } as const

describe("Session", () => {
  it.scoped("a turn emits init, assistant, user (tool results), assistant, and one result with totals", () =>
    Effect.gen(function*() {
      const session = yield* Session.make({ ...options, sessionId: "s-1" })
      const messages = yield* collect(session.submit("sleep a bit"))
      assert.deepStrictEqual(messages.map((m) => m.type), ["system", "assistant", "user", "assistant", "result"])
      assert.isTrue(messages.every((m) => m.session_id === "s-1"))
      assert.strictEqual(new Set(messages.map((m) => m.uuid)).size, messages.length)
      const init = messages[0] as SdkMessage.SystemInit
      assert.deepStrictEqual([init.subtype, init.model, init.cwd, init.tools], ["init", "claude-sonnet-4-6", "/work", [
        "Sleep"
      ]])
      const toolResult = messages[2] as SdkMessage.User
      assert.deepStrictEqual(toolResult.message, {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "t1", content: "slept 0" }]
      })
      const result = resultOf(messages)
      assert.strictEqual(result.subtype, "success")
      assert.strictEqual(result.is_error, false)
      assert.strictEqual(result.result, "All rested.")
      assert.strictEqual(result.num_turns, 2)
      assert.strictEqual(result.terminal_reason, "completed")
      assert.strictEqual(result.stop_reason, "end_turn")
      assert.strictEqual(result.usage.input_tokens, 30)
      assert.strictEqual(result.usage.output_tokens, 12)
      assert.strictEqual(result.usage.cache_read_input_tokens, 100)
      // Sonnet: $3 in, $15 out, $0.30 cache read per million.
      const cost = (30 * 3 + 12 * 15 + 100 * 0.3) / 1e6
      assert.closeTo(result.total_cost_usd, cost, 1e-12)
      assert.closeTo(result.modelUsage["claude-sonnet-4-6"]!.costUSD, cost, 1e-12)
      assert.strictEqual(result.modelUsage["claude-sonnet-4-6"]!.inputTokens, 30)
      assert.deepStrictEqual(result.permission_denials, [])
      assert.deepStrictEqual(Invariants.violations(yield* messagesOf(session)), [])
    }).pipe(Effect.provide(layerFor([
      TestModel.reply([TestModel.toolUse("Sleep", { ms: 0 }, "t1")], {
        model: "claude-sonnet-4-6",
        usage: { input_tokens: 10, output_tokens: 4 }
      }),
      {
        events: TestModel.text("All rested.", { model: "claude-sonnet-4-6" }).events.map((e) =>
          e.type === "message_delta"
            ? { ...e, usage: { ...e.usage, input_tokens: 20, output_tokens: 8, cache_read_input_tokens: 100 } }
            : e
        )
      }
    ]))))

  it.scoped("the second turn has no init; its usage is its own while modelUsage and cost are cumulative", () =>
    Effect.gen(function*() {
      const session = yield* Session.make(options)
      const first = resultOf(yield* collect(session.submit("one")))
      const second = yield* collect(session.submit("two"))
      assert.deepStrictEqual(second.map((m) => m.type), ["assistant", "result"])
      const result = resultOf(second)
      assert.strictEqual(result.usage.input_tokens, 7)
      assert.strictEqual(result.modelUsage["claude-sonnet-4-6"]!.inputTokens, 17)
      assert.isAbove(result.total_cost_usd, first.total_cost_usd)
      const history = yield* messagesOf(session)
      assert.deepStrictEqual(history.map((m) => m.role), ["user", "assistant", "user", "assistant"])
    }).pipe(Effect.provide(layerFor([
      TestModel.text("first", { model: "claude-sonnet-4-6", usage: { input_tokens: 10, output_tokens: 1 } }),
      TestModel.text("second", { model: "claude-sonnet-4-6", usage: { input_tokens: 7, output_tokens: 1 } })
    ]))))

  it.scoped("turns run one at a time: a second submit starts after the first's result", () =>
    Effect.gen(function*() {
      const session = yield* Session.make(options)
      const order = yield* Ref.make<ReadonlyArray<string>>([])
      const track = (name: string) => (s: Stream.Stream<SdkMessage.SdkMessage>) =>
        s.pipe(Stream.runForEach((m) => Ref.update(order, (o) => [...o, `${name}:${m.type}`])))
      const a = yield* Effect.fork(track("a")(session.submit("first")))
      yield* Effect.yieldNow()
      const b = yield* Effect.fork(track("b")(session.submit("second")))
      yield* TestClock.adjust("5 seconds")
      yield* Fiber.join(a)
      yield* Fiber.join(b)
      assert.deepStrictEqual(yield* Ref.get(order), [
        "a:system",
        "a:assistant",
        "a:result",
        "b:assistant",
        "b:result"
      ])
      const requests = yield* Effect.flatMap(TestModel.TestModel, (t) => t.requests)
      assert.deepStrictEqual(requests[1]!.messages.map((m) => m.role), ["user", "assistant", "user"])
    }).pipe(Effect.provide(layerFor([
      { ...TestModel.text("slow first", { model: "claude-sonnet-4-6" }), delay: "5 seconds" },
      TestModel.text("second", { model: "claude-sonnet-4-6" })
    ]))))

  it.scoped("duration_ms and duration_api_ms come from the Clock", () =>
    Effect.gen(function*() {
      const session = yield* Session.make(options)
      const fiber = yield* Effect.fork(collect(session.submit("wait")))
      yield* TestClock.adjust("2 seconds")
      const result = resultOf(yield* Fiber.join(fiber))
      assert.strictEqual(result.duration_ms, 2000)
      assert.strictEqual(result.duration_api_ms, 2000)
    }).pipe(Effect.provide(layerFor([{ ...TestModel.text("ok"), delay: "2 seconds" }]))))

  it.scoped("interrupt stops the running tool and ends with error_during_execution; the transcript stays valid", () =>
    Effect.gen(function*() {
      const session = yield* Session.make(options)
      const fiber = yield* Effect.fork(collect(session.submit("sleep long")))
      yield* TestClock.adjust("2500 millis")
      yield* session.interrupt
      const messages = yield* Fiber.join(fiber)
      assert.deepStrictEqual(messages.map((m) => m.type), [
        "system",
        "assistant",
        "tool_progress",
        "tool_progress",
        "user",
        "result"
      ])
      // A running tool ticks every second with its elapsed time, as Claude Code's tool_progress does.
      const toolUseId = (messages[1] as SdkMessage.Assistant).message.content[0]
      const progress = messages.filter((m): m is SdkMessage.ToolProgress => m.type === "tool_progress")
      assert.deepStrictEqual(progress.map((p) => [p.tool_name, p.tool_use_id, p.elapsed_time_seconds, p.parent_tool_use_id]), [
        ["Sleep", (toolUseId as { id: string }).id, 1, null],
        ["Sleep", (toolUseId as { id: string }).id, 2, null]
      ])
      const sessionId = yield* session.sessionId
      assert.isTrue(progress.every((p) => p.session_id === sessionId && typeof p.uuid === "string"))
      const result = resultOf(messages)
      assert.strictEqual(result.subtype, "error_during_execution")
      assert.strictEqual(result.is_error, true)
      assert.strictEqual(result.terminal_reason, "aborted_tools")
      assert.deepStrictEqual(result.errors, ["Interrupted by user"])
      assert.deepStrictEqual(Invariants.violations(yield* messagesOf(session)), [])
    }).pipe(Effect.provide(layerFor([
      TestModel.reply([TestModel.toolUse("Sleep", { ms: 3_600_000 })], { model: "claude-sonnet-4-6" })
    ]))))

  it.scoped("a signal aborted before the turn starts stops it before any request: one result, a valid transcript", () =>
    Effect.gen(function*() {
      const session = yield* Session.make(options)
      const controller = new AbortController()
      controller.abort()
      const messages = yield* collect(session.submit("never mind", { signal: controller.signal }))
      const result = resultOf(messages)
      assert.strictEqual(result.terminal_reason, "aborted_streaming")
      assert.strictEqual(messages.filter((m) => m.type === "result").length, 1)
      assert.isFalse(messages.some((m) => m.type === "assistant"), "no answer was streamed")
      const model = yield* TestModel.TestModel
      assert.strictEqual((yield* model.requests).length, 0, "the model was not called")
      assert.deepStrictEqual(Invariants.violations(yield* messagesOf(session)), [])
      // The session takes the next prompt.
      assert.strictEqual(resultOf(yield* collect(session.submit("go on"))).result, "later")
    }).pipe(Effect.provide(layerFor([TestModel.text("later", { model: "claude-sonnet-4-6" })]))))

  it.scoped("a model error ends as success + is_error with the API status and a readable message", () =>
    Effect.gen(function*() {
      const session = yield* Session.make(options)
      const result = resultOf(yield* collect(session.submit("hi")))
      assert.strictEqual(result.subtype, "success")
      assert.strictEqual(result.is_error, true)
      assert.strictEqual(result.api_error_status, 529)
      assert.strictEqual(result.terminal_reason, "model_error")
      assert.strictEqual(result.result, "API Error: Overloaded (HTTP 529): Overloaded [request req_1]")
    }).pipe(Effect.provide(layerFor([
      TestModel.fail(new ModelError.Overloaded({ message: "Overloaded", status: 529, requestId: "req_1" }))
    ]))))

  it.scoped("maxTurns ends with error_max_turns", () =>
    Effect.gen(function*() {
      const session = yield* Session.make({ ...options, maxTurns: 1 })
      const result = resultOf(yield* collect(session.submit("loop")))
      assert.strictEqual(result.subtype, "error_max_turns")
      assert.strictEqual(result.is_error, true)
      assert.deepStrictEqual(result.errors, ["Reached max turns (1)"])
      assert.strictEqual(result.num_turns, 1)
    }).pipe(Effect.provide(layerFor([TestModel.reply([TestModel.toolUse("Sleep", { ms: 0 })])]))))

  it.scoped("stream_event messages carry the raw events only with includePartialMessages", () =>
    Effect.gen(function*() {
      const quiet = yield* Session.make(options)
      const loud = yield* Session.make({ ...options, includePartialMessages: true })
      const a = yield* collect(quiet.submit("x"))
      const b = yield* collect(loud.submit("x"))
      assert.strictEqual(a.filter((m) => m.type === "stream_event").length, 0)
      const events = b.filter((m) => m.type === "stream_event") as Array<SdkMessage.PartialAssistant>
      assert.deepStrictEqual(events.map((e) => e.event.type), [
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop"
      ])
      assert.deepStrictEqual(b.map((m) => m.type).slice(-2), ["assistant", "result"])
    }).pipe(Effect.provide(layerFor([
      TestModel.text("same", { model: "claude-sonnet-4-6" }),
      TestModel.text("same", { model: "claude-sonnet-4-6" })
    ]))))

  it.scoped("history given to the session is the start of the conversation", () =>
    Effect.gen(function*() {
      const session = yield* Session.make({
        ...options,
        history: [Message.user("earlier"), new Message.AssistantMessage({ content: [Message.text("noted")] })]
      })
      yield* collect(session.submit("now"))
      const requests = yield* Effect.flatMap(TestModel.TestModel, (t) => t.requests)
      assert.deepStrictEqual(requests[0]!.messages.map((m) => Message.toParam(m).content), ["earlier", [{
        type: "text",
        text: "noted"
      }], "now"])
    }).pipe(Effect.provide(layerFor([TestModel.text("ok")]))))
})

describe("Pricing", () => {
  it("prices known models by their list price, including cache reads and writes", () => {
    const usage = { inputTokens: 1_000_000, outputTokens: 1_000_000, cacheReadInputTokens: 1_000_000, cacheCreationInputTokens: 1_000_000, requests: 1 }
    assert.closeTo(Pricing.costOf("claude-sonnet-4-6", usage), 3 + 15 + 0.3 + 3.75, 1e-9)
    assert.closeTo(Pricing.costOf("claude-opus-4-1-20250805", usage), 15 + 75 + 1.5 + 18.75, 1e-9)
    assert.closeTo(Pricing.costOf("claude-opus-4-6", usage), 5 + 25 + 0.5 + 6.25, 1e-9)
  })

  it("prices an unknown model at zero rather than at a relative's price", () => {
    const usage = { inputTokens: 1000, outputTokens: 1000, cacheReadInputTokens: 0, cacheCreationInputTokens: 0, requests: 1 }
    assert.strictEqual(Pricing.costOf("claude-opus-4-9", usage), 0)
    assert.strictEqual(Pricing.costOf("some-local-model", usage), 0)
    assert.strictEqual(Pricing.priceOf("claude-opus-4-9"), undefined)
  })
})

describe("Session budgets", () => {
  it.scoped("without maxTurns a turn is still bounded, by DEFAULT_MAX_TURNS", () =>
    Effect.gen(function*() {
      const session = yield* Session.make(options)
      const result = resultOf(yield* collect(session.submit("loop forever")))
      assert.strictEqual(result.subtype, "error_max_turns")
      assert.strictEqual(result.num_turns, Session.DEFAULT_MAX_TURNS)
      assert.deepStrictEqual(result.errors, [`Reached max turns (${Session.DEFAULT_MAX_TURNS})`])
    }).pipe(Effect.provide(layerFor(
      Array.from({ length: Session.DEFAULT_MAX_TURNS + 1 }, () => () =>
        TestModel.reply([TestModel.toolUse("Sleep", { ms: 0 })], { chunkSize: 64 }))
    ))))
})
