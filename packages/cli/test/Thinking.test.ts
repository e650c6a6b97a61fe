/**
 * The thinking flags, `query()`'s thinking options (mapped as the Agent SDK maps them onto Claude
 * Code's flags) and a host's `set_max_thinking_tokens` request.
 */
import { assert, describe, it } from "@effect/vitest"
import { Flags } from "@keel/cli"
import { Session, Thinking } from "@keel/core"
import { Effect, Either, Ref } from "effect"
import * as ThinkingOptions from "../src/query/ThinkingOptions.js"
import * as ThinkingRequest from "../src/ThinkingRequest.js"

const parse = (argv: ReadonlyArray<string>) => Flags.parse(["-p", "x", ...argv], "0.0.0")

describe("the thinking flags", () => {
  it("--effort, --thinking and --max-thinking-tokens (0 included) are taken", () => {
    const parsed = parse(["--effort", "max", "--thinking", "adaptive", "--max-thinking-tokens", "0"])
    assert.strictEqual(parsed._tag, "Run")
    if (parsed._tag !== "Run") return
    assert.deepStrictEqual([parsed.flags.effort, parsed.flags.thinking, parsed.flags.maxThinkingTokens], ["max", "adaptive", 0])
    assert.deepStrictEqual(Thinking.fromFlags(parsed.flags), { mode: "adaptive", budgetTokens: 0, effort: "max" })
  })

  it("a negative or fractional budget, and --thinking disabled with a budget, are usage errors naming the flag", () => {
    for (const argv of [["--max-thinking-tokens", "-1"], ["--max-thinking-tokens", "1.5"], ["--max-thinking-tokens", ""]]) {
      const parsed = parse(argv)
      assert.strictEqual(parsed._tag, "Exit", argv.join(" "))
      if (parsed._tag === "Exit") {
        assert.strictEqual(parsed.code, 2)
        assert.include(parsed.stderr, "--max-thinking-tokens")
      }
    }
    const both = parse(["--thinking", "disabled", "--max-thinking-tokens", "4096"])
    assert.strictEqual(both._tag === "Exit" && both.code, 2)
  })
})

describe("query()'s thinking options", () => {
  const mapped = (options: ThinkingOptions.ThinkingOptions) => Effect.runSync(ThinkingOptions.resolve(options))
  const refusal = (options: unknown) =>
    Either.match(Effect.runSync(Effect.either(ThinkingOptions.resolve(options as ThinkingOptions.ThinkingOptions))), {
      onLeft: (e) => e.message,
      onRight: () => "accepted"
    })

  it("map as the Agent SDK maps them onto Claude Code's flags; thinking wins over maxThinkingTokens", () => {
    const none = { thinking: undefined, maxThinkingTokens: undefined, effort: undefined }
    assert.deepStrictEqual(mapped({}), none)
    assert.deepStrictEqual(mapped({ maxThinkingTokens: 4096 }), { ...none, maxThinkingTokens: 4096 })
    assert.deepStrictEqual(mapped({ maxThinkingTokens: 0 }), { ...none, thinking: "disabled" })
    assert.deepStrictEqual(mapped({ thinking: { type: "enabled", budgetTokens: 2048 }, maxThinkingTokens: 9999 }), {
      ...none,
      maxThinkingTokens: 2048
    })
    assert.deepStrictEqual(mapped({ thinking: { type: "enabled" } }), { ...none, thinking: "adaptive" })
    assert.deepStrictEqual(mapped({ thinking: { type: "adaptive" }, effort: "low" }), { ...none, thinking: "adaptive", effort: "low" })
    assert.deepStrictEqual(mapped({ thinking: { type: "disabled" } }), { ...none, thinking: "disabled" })
  })

  it("refuse what Keel cannot honour or what is not valid, naming the option", () => {
    assert.include(refusal({ thinking: { type: "adaptive", display: "omitted" } }), "thinking.display")
    assert.include(refusal({ thinking: { type: "sometimes" } }), "thinking.type")
    assert.include(refusal({ thinking: { type: "enabled", budgetTokens: -3 } }), "thinking.budgetTokens")
    assert.include(refusal({ maxThinkingTokens: 1.5 }), "maxThinkingTokens")
    assert.include(refusal({ effort: "extreme" }), "effort")
  })
})

describe("set_max_thinking_tokens", () => {
  /** The part of a session the request uses, over a `Ref`. */
  const sessionOver = (ref: Ref.Ref<Thinking.Setting>) =>
    ({ thinking: Ref.get(ref), setThinking: (s: Thinking.Setting) => Ref.set(ref, s) }) as unknown as Session.Service

  it.effect("a number is the budget, 0 off, null the model's default; the effort is kept", () =>
    Effect.gen(function*() {
      const ref = yield* Ref.make<Thinking.Setting>({ mode: "disabled", effort: "low" })
      const session = sessionOver(ref)
      assert.isUndefined(yield* ThinkingRequest.setMaxThinkingTokens(session, { max_thinking_tokens: 8192 }))
      assert.deepStrictEqual(yield* Ref.get(ref), { effort: "low", budgetTokens: 8192 })
      yield* ThinkingRequest.setMaxThinkingTokens(session, { max_thinking_tokens: null })
      assert.deepStrictEqual(yield* Ref.get(ref), { effort: "low" })
    }))

  it.effect("a missing or bad value, or a thinking_display, is refused and changes nothing", () =>
    Effect.gen(function*() {
      const ref = yield* Ref.make<Thinking.Setting>({ budgetTokens: 2048 })
      const session = sessionOver(ref)
      assert.include(yield* ThinkingRequest.setMaxThinkingTokens(session, {}), "max_thinking_tokens")
      assert.include(yield* ThinkingRequest.setMaxThinkingTokens(session, { max_thinking_tokens: "lots" }), "max_thinking_tokens")
      assert.include(
        yield* ThinkingRequest.setMaxThinkingTokens(session, { max_thinking_tokens: 0, thinking_display: "omitted" }),
        "thinking_display"
      )
      assert.deepStrictEqual(yield* Ref.get(ref), { budgetTokens: 2048 })
    }))
})
