/**
 * Thinking and effort: the per-model decision (as Claude Code 2.1.328 sends it), the request body
 * and headers, thinking blocks folded from the stream and sent back with their signatures, the
 * repairs (a thinking block never last, none sent to another model), and the session's setting.
 */
import { assert, describe, it } from "@effect/vitest"
import { Accumulator, AnthropicModel, Message, type ModelRequest, Session, TestModel, Thinking } from "@keel/core"
import { Effect, Ref } from "effect"
import { collect, layerFor, resultOf } from "./support/Sessions.js"

const CONTEXT_MANAGEMENT = { edits: [{ type: "clear_thinking_20251015", keep: "all" }] }
const ALL_BETAS = [Thinking.INTERLEAVED_THINKING_BETA, Thinking.CONTEXT_MANAGEMENT_BETA, Thinking.EFFORT_BETA]

const resolve = (setting: Thinking.Setting, model: string, maxTokens = 32_000) =>
  Thinking.resolve(setting, model, maxTokens)

describe("Thinking.resolve: per model, as Claude Code sends it", () => {
  it("adaptive models: adaptive thinking, their default effort, context management", () => {
    for (const model of ["claude-sonnet-4-6", "claude-opus-4-6", "us.anthropic.claude-sonnet-4-6"]) {
      assert.deepStrictEqual(resolve({}, model), {
        params: { thinking: { type: "adaptive" }, context_management: CONTEXT_MANAGEMENT, output_config: { effort: "high" } },
        betas: ALL_BETAS
      }, model)
    }
    assert.deepStrictEqual(resolve({}, "claude-opus-4-7").params.output_config, { effort: "xhigh" })
  })

  it("an effort level is sent as asked; one the model lacks goes down to its highest below", () => {
    for (const effort of ["low", "medium", "high", "max"] as const) {
      assert.deepStrictEqual(resolve({ effort }, "claude-sonnet-4-6").params.output_config, { effort })
    }
    assert.deepStrictEqual(resolve({ effort: "xhigh" }, "claude-sonnet-4-6").params.output_config, { effort: "high" })
    assert.deepStrictEqual(resolve({ effort: "xhigh" }, "claude-opus-4-7").params.output_config, { effort: "xhigh" })
    assert.deepStrictEqual(resolve({ effort: "max" }, "claude-opus-4-5").params.output_config, { effort: "high" })
  })

  it("on adaptive models a budget only turns thinking on; 0 or disabled turn it off, the effort stays", () => {
    assert.deepStrictEqual(resolve({ budgetTokens: 4096 }, "claude-sonnet-4-6").params.thinking, { type: "adaptive" })
    for (const setting of [{ budgetTokens: 0 }, { mode: "disabled" as const }]) {
      assert.deepStrictEqual(resolve(setting, "claude-sonnet-4-6"), {
        params: { thinking: { type: "disabled" }, output_config: { effort: "high" } },
        betas: [Thinking.EFFORT_BETA]
      })
    }
  })

  it("budgeted models: max_tokens - 1 by default, the budget asked for, never at or above max_tokens nor below 1,024", () => {
    assert.deepStrictEqual(resolve({}, "claude-sonnet-4-5"), {
      params: { thinking: { type: "enabled", budget_tokens: 31_999 }, context_management: CONTEXT_MANAGEMENT },
      betas: [Thinking.INTERLEAVED_THINKING_BETA, Thinking.CONTEXT_MANAGEMENT_BETA]
    })
    const budgetOf = (setting: Thinking.Setting, model = "claude-sonnet-4-5-20250929", max = 32_000) =>
      resolve(setting, model, max).params.thinking
    assert.deepStrictEqual(budgetOf({ budgetTokens: 4096 }), { type: "enabled", budget_tokens: 4096 })
    assert.deepStrictEqual(budgetOf({ budgetTokens: 40_000 }), { type: "enabled", budget_tokens: 31_999 })
    assert.deepStrictEqual(budgetOf({ budgetTokens: 500 }), { type: "enabled", budget_tokens: 1024 })
    assert.deepStrictEqual(budgetOf({ mode: "adaptive" }, "claude-haiku-4-5"), { type: "enabled", budget_tokens: 31_999 })
    assert.deepStrictEqual(budgetOf({}, "claude-sonnet-4-20250514", 8000), { type: "enabled", budget_tokens: 7999 })
    // No room for the smallest budget below max_tokens: off.
    assert.deepStrictEqual(budgetOf({ budgetTokens: 4096 }, "claude-sonnet-4-5", 1024), { type: "disabled" })
    assert.deepStrictEqual(resolve({}, "claude-opus-4-5").params, {
      thinking: { type: "enabled", budget_tokens: 31_999 },
      context_management: CONTEXT_MANAGEMENT,
      output_config: { effort: "high" }
    })
  })

  it("Claude 3 models get nothing, even when asked; an unknown model gets nothing unless asked, then the newest form", () => {
    for (const setting of [{}, { budgetTokens: 4096 }, { mode: "adaptive" as const }]) {
      assert.deepStrictEqual(resolve(setting, "claude-3-7-sonnet-20250219"), { params: {}, betas: [] })
    }
    assert.deepStrictEqual(resolve({}, "claude-fake"), { params: {}, betas: [] })
    assert.deepStrictEqual(resolve({ budgetTokens: 4096 }, "claude-fake").params, {
      thinking: { type: "adaptive" },
      context_management: CONTEXT_MANAGEMENT,
      output_config: { effort: "high" }
    })
    assert.deepStrictEqual(resolve({ effort: "low" }, "my-proxy-model").params.output_config, { effort: "low" })
    assert.deepStrictEqual(
      Thinking.resolve({}, "my-proxy-model", 32_000, { "my-proxy": { style: "budget", efforts: [] } }).params.thinking,
      { type: "enabled", budget_tokens: 31_999 }
    )
  })

  it("set_max_thinking_tokens: null goes back to the model's default, 0 off, n a budget; the effort is kept", () => {
    const start: Thinking.Setting = { mode: "disabled", effort: "low" }
    assert.deepStrictEqual(Thinking.withMaxThinkingTokens(start, 4096), { effort: "low", budgetTokens: 4096 })
    assert.deepStrictEqual(Thinking.withMaxThinkingTokens(start, 0), { effort: "low", budgetTokens: 0 })
    assert.deepStrictEqual(Thinking.withMaxThinkingTokens({ budgetTokens: 9000, effort: "max" }, null), { effort: "max" })
    assert.deepStrictEqual(Thinking.fromFlags({ thinking: "disabled", effort: "high" }), { mode: "disabled", effort: "high" })
    assert.deepStrictEqual(Thinking.fromFlags({}), {})
  })
})

const thinking = new Message.ThinkingBlock({ thinking: "Let me look at the file.", signature: "c2lnLTE=" })
const redacted = new Message.RedactedThinkingBlock({ data: "ZW5jcnlwdGVk" })
const call = new Message.ToolUseBlock({ id: "toolu_1", name: "Read", input: { file_path: "a.txt" } })
const answer = (content: ReadonlyArray<Message.ContentBlock>, model = "claude-sonnet-4-6") =>
  new Message.AssistantMessage({ content, model })

describe("the request body", () => {
  const base: ModelRequest.ModelRequest = {
    model: "claude-sonnet-4-6",
    max_tokens: 32_000,
    messages: [Message.user("hi")],
    source: "foreground"
  }

  it("carries the thinking parameters of the request's model; explicit params win; none without a setting", () => {
    const body = AnthropicModel.toBody({ ...base, thinking: { effort: "max" } }) as unknown as Record<string, unknown>
    assert.deepStrictEqual(body.thinking, { type: "adaptive" })
    assert.deepStrictEqual(body.output_config, { effort: "max" })
    assert.deepStrictEqual(body.context_management, CONTEXT_MANAGEMENT)
    assert.deepStrictEqual(AnthropicModel.toHeaders({ ...base, thinking: {} }), { "anthropic-beta": ALL_BETAS.join(",") })
    const fallback = AnthropicModel.toBody({ ...base, model: "claude-sonnet-4-5", thinking: { effort: "max" } }) as any
    assert.deepStrictEqual([fallback.thinking, fallback.output_config], [{ type: "enabled", budget_tokens: 31_999 }, undefined])
    const overridden = AnthropicModel.toBody({ ...base, thinking: {}, params: { thinking: { type: "disabled" } } }) as any
    assert.deepStrictEqual(overridden.thinking, { type: "disabled" })
    const plain = AnthropicModel.toBody(base) as any
    assert.deepStrictEqual([plain.thinking, plain.output_config, plain.context_management], [undefined, undefined, undefined])
    assert.deepStrictEqual(AnthropicModel.toHeaders(base), {})
  })

  it("sends thinking blocks back unchanged, with their signatures, to the model that wrote them", () => {
    const messages = [
      Message.user("read a.txt"),
      answer([thinking, redacted, call]),
      Message.user([new Message.ToolResultBlock({ tool_use_id: "toolu_1", content: "x" })])
    ]
    const body = AnthropicModel.toBody({ ...base, messages, thinking: {} }) as any
    assert.deepStrictEqual(body.messages[1].content, [
      { type: "thinking", thinking: "Let me look at the file.", signature: "c2lnLTE=" },
      { type: "redacted_thinking", data: "ZW5jcnlwdGVk" },
      { type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "a.txt" } }
    ])
    // A dated id of the same model keeps them; another model (a fallback) gets none.
    const dated = AnthropicModel.toBody({ ...base, model: "claude-sonnet-4-6-20260101", messages }) as any
    assert.strictEqual(dated.messages[1].content.length, 3)
    const other = AnthropicModel.toBody({ ...base, model: "claude-sonnet-4-5", messages }) as any
    assert.deepStrictEqual(other.messages[1].content.map((b: any) => b.type), ["tool_use"])
  })

  it("never leaves a thinking block last in an answer: trailing ones are dropped, an answer left empty too", () => {
    const messages = [
      Message.user("one"),
      answer([thinking]),
      Message.user("two"),
      answer([new Message.TextBlock({ text: "ok" }), thinking, redacted])
    ]
    const repaired = Thinking.withoutTrailingThinking(messages)
    assert.deepStrictEqual(repaired.map((m) => m.role), ["user", "user", "assistant"])
    assert.deepStrictEqual((repaired[2] as Message.AssistantMessage).content.map((b) => b.type), ["text"])
    const fine = [Message.user("x"), answer([thinking, new Message.TextBlock({ text: "y" })])]
    assert.strictEqual(Thinking.withoutTrailingThinking(fine), fine)
    assert.strictEqual(Thinking.forModel(fine, "claude-sonnet-4-6"), fine)
  })
})

describe("the accumulator", () => {
  it("folds thinking and signature deltas and redacted thinking into blocks kept apart from the answer's text", () => {
    const result = Accumulator.fold([
      {
        type: "message_start",
        message: {
          id: "msg_1",
          type: "message",
          role: "assistant",
          model: "claude-sonnet-4-6",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 5, output_tokens: 0 }
        }
      } as any,
      { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "Let me look " } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "at the file." } },
      { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "c2lnLTE=" } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "redacted_thinking", data: "ZW5jcnlwdGVk" } },
      { type: "content_block_stop", index: 1 },
      { type: "content_block_start", index: 2, content_block: { type: "text", text: "", citations: null } },
      { type: "content_block_delta", index: 2, delta: { type: "text_delta", text: "Done." } },
      { type: "content_block_stop", index: 2 },
      { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 9 } } as any,
      { type: "message_stop" }
    ])
    assert.deepStrictEqual(Message.toParam(result.message).content, [
      { type: "thinking", thinking: "Let me look at the file.", signature: "c2lnLTE=" },
      { type: "redacted_thinking", data: "ZW5jcnlwdGVk" },
      { type: "text", text: "Done.", citations: null }
    ])
    assert.strictEqual(result.message.text, "Done.")
  })
})

describe("the session's setting", () => {
  const reply = (content: ReadonlyArray<Message.ContentBlock>) => TestModel.reply(content, { model: "claude-sonnet-4-6" })

  it.scoped("a tool round sends the thinking block back with its signature; setThinking changes later turns", () =>
    Effect.gen(function*() {
      const session = yield* Session.make({ model: "claude-sonnet-4-6", cwd: "/work", thinking: { effort: "low" } })
      const first = resultOf(yield* collect(session.submit("sleep")))
      assert.strictEqual(first.result, "Rested.")
      yield* session.setThinking(Thinking.withMaxThinkingTokens(yield* session.thinking, 0))
      yield* collect(session.submit("again"))
      const requests = yield* Effect.flatMap(TestModel.TestModel, (t) => t.requests)
      assert.deepStrictEqual(requests.map((r) => r.thinking), [{ effort: "low" }, { effort: "low" }, {
        effort: "low",
        budgetTokens: 0
      }])
      const second = AnthropicModel.toBody(requests[1]!) as any
      assert.deepStrictEqual(second.messages[1].content[0], {
        type: "thinking",
        thinking: "Let me look at the file.",
        signature: "c2lnLTE="
      })
      assert.deepStrictEqual([second.thinking, second.output_config], [{ type: "adaptive" }, { effort: "low" }])
      const third = AnthropicModel.toBody(requests[2]!) as any
      assert.deepStrictEqual([third.thinking, third.output_config], [{ type: "disabled" }, { effort: "low" }])
      // The thinking is not the answer's text.
      const state = yield* session.state
      assert.notInclude(JSON.stringify((yield* Ref.get(state.messages)).at(-1)), "Let me look")
    }).pipe(Effect.provide(layerFor([
      reply([thinking, TestModel.toolUse("Sleep", { ms: 0 }, "t1")]),
      reply([new Message.TextBlock({ text: "Rested." })]),
      reply([new Message.TextBlock({ text: "Again." })])
    ]))))

  it.scoped("without a setting, each model's default", () =>
    Effect.gen(function*() {
      const session = yield* Session.make({ model: "claude-sonnet-4-6", cwd: "/work" })
      assert.deepStrictEqual(yield* session.thinking, Thinking.modelDefault)
      yield* collect(session.submit("hi"))
      const [request] = yield* Effect.flatMap(TestModel.TestModel, (t) => t.requests)
      assert.deepStrictEqual(request!.thinking, {})
    }).pipe(Effect.provide(layerFor([reply([new Message.TextBlock({ text: "hello" })])]))))
})
