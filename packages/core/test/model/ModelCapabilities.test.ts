/**
 * One table of what each model can do: context window, output limits (the default `max_tokens` and
 * the most a request may ask for), thinking (Thinking's column, overridable) and betas; extended by
 * a models file. A fallback model's request gets the fallback model's own `max_tokens`.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  AnthropicModel,
  Message,
  ModelCapabilities,
  ModelError,
  type ModelRequest,
  TestModel,
  Thinking,
  TokenEstimate
} from "@keel/core"
import { Effect } from "effect"
import { runFor, stack } from "../support/ResilienceStack.js"

describe("ModelCapabilities", () => {
  it("default max_tokens and upper limit per model, as Claude Code; a model the table does not know gets 32,000", () => {
    const limits = (model: string) => {
      const c = ModelCapabilities.of(model).maxOutputTokens
      return [c.default, c.upper]
    }
    assert.deepStrictEqual(limits("claude-opus-4-6"), [64_000, 128_000])
    assert.deepStrictEqual(limits("us.anthropic.claude-sonnet-4-6"), [32_000, 128_000])
    assert.deepStrictEqual(limits("claude-opus-4-5-20251101"), [32_000, 64_000])
    assert.deepStrictEqual(limits("claude-sonnet-4-20250514"), [32_000, 64_000])
    assert.deepStrictEqual(limits("claude-haiku-4-5"), [32_000, 64_000])
    assert.deepStrictEqual(limits("claude-opus-4-1-20250805"), [32_000, 32_000])
    assert.deepStrictEqual(limits("claude-opus-4-20250514"), [32_000, 32_000])
    assert.deepStrictEqual(limits("claude-3-5-haiku-20241022"), [8_192, 8_192])
    assert.deepStrictEqual(limits("claude-3-haiku-20240307"), [4_096, 4_096])
    assert.deepStrictEqual(limits("my-proxy-model"), [32_000, undefined])
  })

  it("the cap a user sets is kept up to the model's upper limit; unset, the model's default", () => {
    assert.strictEqual(ModelCapabilities.maxTokensFor("claude-opus-4-6", undefined), 64_000)
    assert.strictEqual(ModelCapabilities.maxTokensFor("claude-opus-4-6", 100_000), 100_000)
    assert.strictEqual(ModelCapabilities.maxTokensFor("claude-opus-4-6", 500_000), 128_000)
    assert.strictEqual(ModelCapabilities.maxTokensFor("claude-opus-4-1", 100_000), 32_000)
    assert.strictEqual(ModelCapabilities.maxTokensFor("claude-haiku-4-5", 8_000), 8_000)
    assert.strictEqual(ModelCapabilities.maxTokensFor("my-proxy-model", 300_000), 300_000)
  })

  it("context window: 200,000, 1,000,000 with the [1m] suffix, a row's own; TokenEstimate.windowFor reads the table", () => {
    assert.strictEqual(ModelCapabilities.of("claude-sonnet-4-6").contextWindow, 200_000)
    assert.strictEqual(ModelCapabilities.of("claude-sonnet-4-6[1m]").contextWindow, 1_000_000)
    const table = ModelCapabilities.merge(ModelCapabilities.defaultTable, { "big-model": { contextWindow: 400_000 } })
    assert.strictEqual(ModelCapabilities.of("big-model-v2", table).contextWindow, 400_000)
    assert.strictEqual(TokenEstimate.windowFor("big-model-v2", table), 400_000)
    assert.strictEqual(TokenEstimate.windowFor("claude-opus-4-6[1m]"), 1_000_000)
  })

  it("a model's capabilities are looked up once per table: a round's several asks get the same answer", () => {
    const a = ModelCapabilities.of("claude-opus-4-6")
    assert.strictEqual(ModelCapabilities.of("claude-opus-4-6"), a)
    assert.strictEqual(ModelCapabilities.of("claude-opus-4-6", ModelCapabilities.defaultTable), a)
    // Another table is looked up on its own.
    const table = ModelCapabilities.merge(ModelCapabilities.defaultTable, { "claude-opus-4-6": { contextWindow: 5_000 } })
    assert.strictEqual(ModelCapabilities.of("claude-opus-4-6", table).contextWindow, 5_000)
    assert.strictEqual(ModelCapabilities.of("claude-opus-4-6").contextWindow, 200_000)
  })

  it("thinking is Thinking's table, unless a row overrides it", () => {
    assert.strictEqual(ModelCapabilities.of("claude-opus-4-6").thinking, Thinking.capabilityFor("claude-opus-4-6"))
    assert.strictEqual(ModelCapabilities.of("claude-3-5-haiku").thinking?.style, "none")
    assert.strictEqual(ModelCapabilities.of("my-proxy-model").thinking, undefined)
    const table = { "my-proxy-model": { thinking: { style: "budget" as const, efforts: [] } } }
    assert.strictEqual(ModelCapabilities.of("my-proxy-model", table).thinking?.style, "budget")
    assert.strictEqual(ModelCapabilities.thinkingTable({}), Thinking.defaultTable)
  })

  it.effect("a models file adds rows; the betas of a row go in the anthropic-beta header with thinking's", () =>
    Effect.gen(function*() {
      const rows = yield* ModelCapabilities.parse(
        "models.json",
        JSON.stringify({
          "my-proxy-model": {
            contextWindow: 400_000,
            maxOutputTokens: { default: 16_000, upper: 32_000 },
            thinking: { style: "budget", efforts: [] },
            betas: ["proxy-beta-2025-01-01"]
          }
        })
      )
      const table = ModelCapabilities.merge(ModelCapabilities.defaultTable, rows)
      assert.strictEqual(ModelCapabilities.maxTokensFor("my-proxy-model", undefined, table), 16_000)
      assert.strictEqual(ModelCapabilities.maxTokensFor("my-proxy-model", 64_000, table), 32_000)
      const request: ModelRequest.ModelRequest = {
        model: "my-proxy-model",
        max_tokens: 16_000,
        messages: [Message.user("hi")],
        source: "foreground",
        thinking: Thinking.modelDefault
      }
      const thinking = ModelCapabilities.thinkingTable(table)
      assert.deepStrictEqual(AnthropicModel.toBody(request, thinking).thinking, { type: "enabled", budget_tokens: 15_999 })
      assert.strictEqual(
        AnthropicModel.toHeaders(request, thinking, table)["anthropic-beta"],
        `proxy-beta-2025-01-01,${Thinking.INTERLEAVED_THINKING_BETA},${Thinking.CONTEXT_MANAGEMENT_BETA}`
      )
    }))

  it.effect("an invalid models file is refused with a message that says what to write", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        ModelCapabilities.parse("models.json", JSON.stringify({ m: { maxOutputTokens: { default: 64_000, upper: 1_000 } } }))
      )
      assert.strictEqual(error._tag, "InvalidModels")
      assert.include(error.message, "models.json is not a valid models file")
      assert.include(error.message, "the default may not exceed the upper limit")
    }))
})

describe("a fallback model's max_tokens", () => {
  it.effect("after three 529s the fallback request carries the fallback model's default max_tokens", () =>
    Effect.gen(function*() {
      const maxTokensFor = (model: string) => ModelCapabilities.maxTokensFor(model, undefined)
      const { outcome, requests } = yield* runFor("1 minute", {
        model: "claude-opus-4-6",
        max_tokens: maxTokensFor("claude-opus-4-6"),
        maxTokensFor,
        messages: [Message.user("hi")],
        source: "foreground"
      })
      assert.strictEqual(outcome._tag, "Right")
      assert.deepStrictEqual(requests.map((r) => [r.model, r.max_tokens]), [
        ["claude-opus-4-6", 64_000],
        ["claude-opus-4-6", 64_000],
        ["claude-opus-4-6", 64_000],
        ["claude-haiku-4-5", 32_000]
      ])
    }).pipe(Effect.provide(stack([
      ...Array.from({ length: 3 }, () => TestModel.fail(new ModelError.Overloaded({ message: "Overloaded", status: 529 }))),
      TestModel.text("from the backup")
    ], { fallback: ["claude-haiku-4-5"] }))))
})
