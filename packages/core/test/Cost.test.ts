/**
 * Cost accounting: the pricing table (five prices per model, overridable), usage per model with the
 * cache tokens split by TTL, `total_cost_usd` and `modelUsage` in every result (cumulative), and the
 * one-time warning for a model without a price.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Cost, Message, Pricing, Session, StreamEvent, TestModel } from "@keel/core"
import type { SdkMessage } from "@keel/core"
import { ConfigProvider, Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { collect, layerFor, resultOf } from "./support/Sessions.js"

/** A scripted answer from `model` with exactly this usage (cache fields included). */
const answer = (
  content: ReadonlyArray<Message.ContentBlock>,
  model: string,
  usage: ConstructorParameters<typeof Message.Usage>[0]
): TestModel.Reply => ({
  events: StreamEvent.fromMessage(
    new Message.AssistantMessage({
      content,
      id: `msg_${model}_${usage.input_tokens}`,
      model,
      stop_reason: content.some((b) => b instanceof Message.ToolUseBlock) ? "tool_use" : "end_turn",
      stop_sequence: null,
      usage: new Message.Usage(usage)
    })
  )
})

const warningsOf = (messages: ReadonlyArray<SdkMessage.SdkMessage>) =>
  messages.filter((m): m is SdkMessage.Informational => m.type === "system" && m.subtype === "informational")

describe("Cost", () => {
  it.scoped("cost against hand-computed figures for a scripted usage, cache tokens included", () =>
    Effect.gen(function*() {
      const session = yield* Session.make({ model: "claude-sonnet-4-6", cwd: "/work" })
      const first = yield* collect(session.submit("sleep, then answer"))
      const one = resultOf(first)
      // Sonnet ($ per million): input 3, output 15, 5-minute writes 3.75, 1-hour writes 6, reads 0.30.
      // Input 1,200 + 50; output 300 + 80; writes 5m 2,000 + 400 (unsplit: the API's default TTL), 1h 3,000;
      // reads 10,000 + 15,000.
      const sonnet = (1_250 * 3 + 380 * 15 + 2_400 * 3.75 + 3_000 * 6 + 25_000 * 0.3) / 1e6
      assert.closeTo(sonnet, 0.04395, 1e-12)
      assert.closeTo(one.total_cost_usd, 0.04395, 1e-12)
      assert.deepStrictEqual(one.modelUsage, {
        "claude-sonnet-4-6": {
          inputTokens: 1_250,
          outputTokens: 380,
          cacheReadInputTokens: 25_000,
          cacheCreationInputTokens: 5_400,
          cacheCreationEphemeral5mInputTokens: 2_400,
          cacheCreationEphemeral1hInputTokens: 3_000,
          webSearchRequests: 0,
          costUSD: one.modelUsage["claude-sonnet-4-6"]!.costUSD,
          contextWindow: 200_000,
          maxOutputTokens: Session.DEFAULT_MAX_TOKENS
        }
      })
      assert.closeTo(one.modelUsage["claude-sonnet-4-6"]!.costUSD, 0.04395, 1e-12)
      // The turn's own usage, with the TTL split.
      assert.deepStrictEqual(
        [one.usage.input_tokens, one.usage.output_tokens, one.usage.cache_read_input_tokens, one.usage.cache_creation_input_tokens],
        [1_250, 380, 25_000, 5_400]
      )
      assert.deepStrictEqual(one.usage.cache_creation, { ephemeral_5m_input_tokens: 2_400, ephemeral_1h_input_tokens: 3_000 })
      assert.deepStrictEqual(warningsOf(first), [])

      // A second turn on Haiku ($1 in, $5 out, $2 per million 1-hour writes): cumulative totals.
      const two = resultOf(yield* collect(session.submit("and now?")))
      const haiku = (1_000 * 1 + 200 * 5 + 1_000 * 2) / 1e6
      assert.closeTo(haiku, 0.004, 1e-12)
      assert.closeTo(two.total_cost_usd, 0.04795, 1e-12)
      assert.closeTo(two.modelUsage["claude-sonnet-4-6"]!.costUSD, 0.04395, 1e-12)
      assert.closeTo(two.modelUsage["claude-haiku-4-5-20251001"]!.costUSD, 0.004, 1e-12)
      assert.strictEqual(two.modelUsage["claude-haiku-4-5-20251001"]!.cacheCreationEphemeral1hInputTokens, 1_000)
      assert.strictEqual(two.modelUsage["claude-haiku-4-5-20251001"]!.cacheCreationEphemeral5mInputTokens, 0)
      assert.strictEqual(two.usage.input_tokens, 1_000)
    }).pipe(Effect.provide(layerFor([
      answer([TestModel.toolUse("Sleep", { ms: 0 }, "t1")], "claude-sonnet-4-6", {
        input_tokens: 1_200,
        output_tokens: 300,
        cache_creation_input_tokens: 5_000,
        cache_read_input_tokens: 10_000,
        cache_creation: { ephemeral_5m_input_tokens: 2_000, ephemeral_1h_input_tokens: 3_000 }
      }),
      answer([Message.text("Done.")], "claude-sonnet-4-6", {
        input_tokens: 50,
        output_tokens: 80,
        cache_creation_input_tokens: 400,
        cache_read_input_tokens: 15_000
      }),
      answer([Message.text("Still done.")], "claude-haiku-4-5-20251001", {
        input_tokens: 1_000,
        output_tokens: 200,
        cache_creation_input_tokens: 1_000,
        cache_read_input_tokens: 0,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 1_000 }
      })
    ]))))

  it.scoped("a model without a price counts as $0, with a warning shown once per session", () =>
    Effect.gen(function*() {
      const session = yield* Session.make({ model: "claude-mystery-1", cwd: "/work" })
      const first = yield* collect(session.submit("one"))
      const warnings = warningsOf(first)
      assert.strictEqual(warnings.length, 1)
      assert.strictEqual(warnings[0]!.level, "warning")
      assert.include(warnings[0]!.content, "No price is known for model claude-mystery-1")
      assert.include(warnings[0]!.content, "KEEL_PRICING_FILE")
      // Shown before the result, which stays last.
      assert.deepStrictEqual(first.slice(-2).map((m) => m.type), ["system", "result"])
      const one = resultOf(first)
      assert.strictEqual(one.total_cost_usd, 0)
      assert.strictEqual(one.modelUsage["claude-mystery-1"]!.costUSD, 0)
      assert.strictEqual(one.modelUsage["claude-mystery-1"]!.inputTokens, 10)

      const second = yield* collect(session.submit("two"))
      assert.deepStrictEqual(warningsOf(second), [])
      assert.deepStrictEqual(second.map((m) => m.type), ["assistant", "result"])
      // /cost says so too, without warning again.
      const cost = yield* collect(session.submit("/cost"))
      assert.deepStrictEqual(warningsOf(cost), [])
      assert.include(resultOf(cost).result!, "claude-mystery-1: 20 input, 10 output")
      assert.include(resultOf(cost).result!, "no price known, counted as $0")
    }).pipe(Effect.provide(layerFor([
      TestModel.text("first", { model: "claude-mystery-1" }),
      TestModel.text("second", { model: "claude-mystery-1" })
    ]))))

  it.scoped("the session's pricing option prices a model the defaults do not know", () =>
    Effect.gen(function*() {
      const pricing = Pricing.merge(Pricing.defaultTable, {
        "claude-mystery": { input: 2, output: 10, cacheWrite5m: 2.5, cacheWrite1h: 4, cacheRead: 0.2 }
      })
      const session = yield* Session.make({ model: "claude-mystery-1", cwd: "/work", pricing })
      const messages = yield* collect(session.submit("one"))
      assert.deepStrictEqual(warningsOf(messages), [])
      assert.closeTo(resultOf(messages).total_cost_usd, (10 * 2 + 5 * 10) / 1e6, 1e-12)
    }).pipe(Effect.provide(layerFor([TestModel.text("first", { model: "claude-mystery-1" })]))))
})

describe("Pricing", () => {
  const tokens = {
    inputTokens: 1_000_000,
    outputTokens: 1_000_000,
    cacheReadInputTokens: 1_000_000,
    cacheCreationInputTokens: 3_000_000,
    cacheCreationEphemeral5mInputTokens: 1_000_000,
    cacheCreationEphemeral1hInputTokens: 2_000_000
  }

  it("prices 5-minute and 1-hour cache writes apart; writes the API did not split are 5-minute ones", () => {
    assert.closeTo(Pricing.costOf("claude-opus-4-6", tokens), 5 + 25 + 0.5 + 6.25 + 2 * 10, 1e-9)
    assert.closeTo(Pricing.costOf("claude-haiku-4-5", tokens), 1 + 5 + 0.1 + 1.25 + 2 * 2, 1e-9)
    const { cacheCreationEphemeral1hInputTokens: _1h, cacheCreationEphemeral5mInputTokens: _5m, ...unsplit } = tokens
    assert.closeTo(Pricing.costOf("claude-sonnet-4-6", unsplit), 3 + 15 + 0.3 + 3 * 3.75, 1e-9)
  })

  it("the longest prefix wins; a dated id takes its family's price", () => {
    const table = { "claude-x": Pricing.defaultTable["claude-haiku-4-5"]!, "claude-x-2": Pricing.defaultTable["claude-opus-4-6"]! }
    assert.strictEqual(Pricing.priceOf("claude-x-2-20260101", table)!.input, 5)
    assert.strictEqual(Pricing.priceOf("claude-x-1", table)!.input, 1)
    assert.strictEqual(Pricing.priceOf("claude-sonnet-4-5-20250929")!.cacheWrite1h, 6)
    assert.strictEqual(Pricing.priceOf("claude-opus-4-9"), undefined)
  })

  it.effect("a pricing file: cache prices default to Anthropic's multipliers; a bad file names itself and what is wrong", () =>
    Effect.gen(function*() {
      const table = yield* Pricing.parse("prices.json", JSON.stringify({ "my-model": { input: 2, output: 8 } }))
      assert.deepStrictEqual(table["my-model"], { input: 2, output: 8, cacheWrite5m: 2.5, cacheWrite1h: 4, cacheRead: 0.2 })

      const negative = yield* Effect.flip(Pricing.parse("prices.json", JSON.stringify({ "my-model": { input: -1, output: 8 } })))
      assert.strictEqual(negative._tag, "InvalidPricing")
      assert.include(negative.message, "prices.json is not a valid pricing file")
      assert.include(negative.message, "a price in USD per million tokens, 0 or more")
      const missing = yield* Effect.flip(Pricing.parse("prices.json", JSON.stringify({ "my-model": { input: 1 } })))
      assert.include(missing.message, "output")
      const notJson = yield* Effect.flip(Pricing.parse("prices.json", "{ \"my-model\": "))
      assert.include(notJson.message, "prices.json is not a valid pricing file")
    }))

  it.effect("KEEL_PRICING_FILE adds its entries over the defaults; a missing file is an error naming it", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keel-pricing-"))
      const file = path.join(dir, "prices.json")
      fs.writeFileSync(file, JSON.stringify({ "claude-sonnet-4-6": { input: 30, output: 150 }, "local-llm": { input: 0, output: 0 } }))
      const withFile = (value: string) =>
        Pricing.tableConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["KEEL_PRICING_FILE", value]]))))
      const table = yield* withFile(file)
      assert.strictEqual(Pricing.priceOf("claude-sonnet-4-6", table)!.input, 30)
      assert.strictEqual(Pricing.priceOf("local-llm-7b", table)!.output, 0)
      assert.strictEqual(Pricing.priceOf("claude-haiku-4-5", table)!.input, 1)
      const unset = yield* Pricing.tableConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map())))
      assert.strictEqual(unset, Pricing.defaultTable)
      const missing = yield* Effect.flip(withFile(path.join(dir, "nope.json")))
      assert.strictEqual(missing._tag, "InvalidPricing")
      assert.include((missing as Pricing.InvalidPricing).message, `Cannot read the pricing file ${path.join(dir, "nope.json")}`)
    }).pipe(Effect.provide(NodeContext.layer)))

  it("a report gives each model its own context window and lists the models without a price", () => {
    const usage = new Map([
      ["claude-sonnet-4-6[1m]", { ...tokens, requests: 1 }],
      ["mystery", { ...tokens, requests: 1 }]
    ])
    const report = Cost.report(usage, { pricing: Pricing.defaultTable, maxOutputTokens: 8_000 })
    assert.strictEqual(report.modelUsage["claude-sonnet-4-6[1m]"]!.contextWindow, 1_000_000)
    assert.strictEqual(report.modelUsage["mystery"]!.contextWindow, 200_000)
    assert.strictEqual(report.modelUsage["mystery"]!.maxOutputTokens, 8_000)
    assert.deepStrictEqual(report.unpriced, ["mystery"])
    assert.closeTo(report.totalCostUsd, Pricing.costOf("claude-sonnet-4-6", tokens), 1e-12)
  })
})
