/**
 * Budgets: `maxBudgetUsd` is checked after each model response (and after each round of tool
 * results) and ends the turn with `error_max_budget_usd`; `maxTurns` ends it with `error_max_turns`.
 * Either way every `tool_use` is answered, so the next turn (or a resumed session) goes on from a
 * valid transcript.
 */
import { assert, describe, it } from "@effect/vitest"
import { Invariants, Message, Session, SessionState, TestModel, TokenUsage, Tool } from "@keel/core"
import type { SdkMessage } from "@keel/core"
import { Effect, Layer, Ref, Schema } from "effect"
import { collect, kinds, layerFor, messagesOf, resultOf } from "./support/Sessions.js"

/** Tools that count their runs: `Slow` after a second (under Clock), `Spend` adds $5 of Opus usage to the session. */
const toolsFor = (runs: Ref.Ref<number>) => [
  Tool.make({
    name: "Slow",
    description: "Counts after a second",
    input: Schema.Struct({}),
    isReadOnly: true,
    call: () => Effect.as(Effect.zipRight(Effect.sleep("1 second"), Ref.update(runs, (n) => n + 1)), "counted")
  }),
  Tool.make({
    name: "Spend",
    description: "Spends like a subagent",
    input: Schema.Struct({}),
    isReadOnly: true,
    call: () =>
      Effect.gen(function*() {
        yield* Ref.update(runs, (n) => n + 1)
        const state = yield* SessionState.SessionState
        yield* Ref.update(state.usage, (u) =>
          TokenUsage.addTo(
            u,
            "claude-opus-4-6",
            TokenUsage.fromResponse(new Message.Usage({ input_tokens: 1_000_000, output_tokens: 0 }))
          ))
        return "spent"
      })
  })
]

const setup = (script: ReadonlyArray<TestModel.ScriptItem>) =>
  Effect.gen(function*() {
    const runs = yield* Ref.make(0)
    const context = yield* Layer.build(layerFor(script, toolsFor(runs)))
    return { runs, context }
  })

/** A Sonnet answer: 1,000 input and `output` output tokens cost $0.003 + output × $0.000015. */
const sonnet = (content: ReadonlyArray<Message.ContentBlock>, output = 100) =>
  TestModel.reply(content, { model: "claude-sonnet-4-6", usage: { input_tokens: 1_000, output_tokens: output } })

const options = { model: "claude-sonnet-4-6", cwd: "/work" } as const

describe("maxBudgetUsd", () => {
  it.scoped("the response that crosses the budget ends the turn with error_max_budget_usd; its tool calls are answered, not run", () =>
    Effect.gen(function*() {
      const { context, runs } = yield* setup([
        sonnet([Message.text("Counting."), TestModel.toolUse("Slow", {}, "t-slow")]),
        sonnet([Message.text("Carrying on.")])
      ])
      const session = yield* Effect.provide(Session.make({ ...options, maxBudgetUsd: 0.004 }), context)
      const messages = yield* collect(session.submit("count"))
      assert.deepStrictEqual(kinds(messages), ["system/init", "assistant", "user", "result"])
      const result = resultOf(messages)
      assert.strictEqual(result.subtype, "error_max_budget_usd")
      assert.strictEqual(result.is_error, true)
      assert.deepStrictEqual(result.errors, ["Reached maximum budget ($0.004)"])
      assert.strictEqual(result.terminal_reason, "budget_exhausted")
      assert.strictEqual(result.num_turns, 1)
      assert.closeTo(result.total_cost_usd, 0.0045, 1e-12)
      // The call is answered (with why), and did not run.
      assert.deepStrictEqual((messages[2] as SdkMessage.User).message.content, [{
        type: "tool_result",
        tool_use_id: "t-slow",
        content:
          "<tool_use_error>Reached maximum budget ($0.004): the turn ended before this tool call ran to completion.</tool_use_error>",
        is_error: true
      }])
      assert.strictEqual(yield* Ref.get(runs), 0)
      const transcript = yield* messagesOf(session)
      assert.deepStrictEqual(Invariants.violations(transcript), [])

      // The session goes on from that transcript; it is still over budget, so the next response ends it again.
      const next = yield* collect(session.submit("go on"))
      assert.deepStrictEqual(kinds(next), ["assistant", "result"])
      assert.strictEqual(resultOf(next).subtype, "error_max_budget_usd")
      const sent = yield* Effect.provide(Effect.flatMap(TestModel.TestModel, (m) => m.requests), context)
      assert.deepStrictEqual(sent[1]!.messages.map((m) => m.role), ["user", "assistant", "user", "user"])
      assert.deepStrictEqual(Invariants.violations(sent[1]!.messages), [])
    }))

  it.scoped("under the budget a turn succeeds; the final answer that crosses it ends with error_max_budget_usd", () =>
    Effect.gen(function*() {
      const { context } = yield* setup([sonnet([Message.text("One.")]), sonnet([Message.text("Two.")], 200)])
      const session = yield* Effect.provide(Session.make({ ...options, maxBudgetUsd: 0.01 }), context)
      const first = resultOf(yield* collect(session.submit("one")))
      assert.strictEqual(first.subtype, "success")
      assert.closeTo(first.total_cost_usd, 0.0045, 1e-12)
      // 0.0045 + 0.003 + 200 × 0.000015 = 0.0105 ≥ 0.01: Claude Code checks after every response, final ones too.
      const second = yield* collect(session.submit("two"))
      assert.deepStrictEqual(kinds(second), ["assistant", "result"])
      assert.strictEqual(((second[0] as SdkMessage.Assistant).message.content[0] as { text: string }).text, "Two.")
      assert.strictEqual(resultOf(second).subtype, "error_max_budget_usd")
      assert.closeTo(resultOf(second).total_cost_usd, 0.0105, 1e-12)
    }))

  it.scoped("what the tools spend counts too: the budget is checked again after their results", () =>
    Effect.gen(function*() {
      const { context, runs } = yield* setup([
        sonnet([TestModel.toolUse("Spend", {}, "t-spend")]),
        sonnet([Message.text("never asked")])
      ])
      const session = yield* Effect.provide(Session.make({ ...options, maxBudgetUsd: 1 }), context)
      const messages = yield* collect(session.submit("spend"))
      assert.deepStrictEqual(kinds(messages), ["system/init", "assistant", "user", "result"])
      assert.strictEqual(yield* Ref.get(runs), 1)
      assert.deepStrictEqual((messages[2] as SdkMessage.User).message.content, [{
        type: "tool_result",
        tool_use_id: "t-spend",
        content: "spent"
      }])
      const result = resultOf(messages)
      assert.strictEqual(result.subtype, "error_max_budget_usd")
      assert.closeTo(result.total_cost_usd, 5 + 0.0045, 1e-9)
      const sent = yield* Effect.provide(Effect.flatMap(TestModel.TestModel, (m) => m.requests), context)
      assert.strictEqual(sent.length, 1)
    }))
})

describe("maxTurns", () => {
  it.scoped("error_max_turns leaves every tool_use answered, and the next turn goes on from there", () =>
    Effect.gen(function*() {
      const { context } = yield* setup([
        sonnet([TestModel.toolUse("Spend", {}, "t-1")]),
        sonnet([Message.text("Done.")])
      ])
      const session = yield* Effect.provide(Session.make({ ...options, maxTurns: 1 }), context)
      const first = resultOf(yield* collect(session.submit("go")))
      assert.strictEqual(first.subtype, "error_max_turns")
      assert.deepStrictEqual(Invariants.violations(yield* messagesOf(session)), [])
      const second = resultOf(yield* collect(session.submit("finish")))
      assert.strictEqual(second.subtype, "success")
      assert.strictEqual(second.result, "Done.")
    }))
})
