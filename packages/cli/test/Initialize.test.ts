import { assert, describe, it } from "@effect/vitest"
import * as Initialize from "../src/Initialize.js"

describe("Initialize", () => {
  it("promptOptions: the SDK's shapes of systemPrompt and appendSystemPrompt", () => {
    assert.deepStrictEqual(Initialize.promptOptions({}), {})
    assert.deepStrictEqual(Initialize.promptOptions({ systemPrompt: [""] }), {}, "the SDK's default keeps Keel's prompt")
    assert.deepStrictEqual(Initialize.promptOptions({ systemPrompt: ["Be terse."] }), { systemPrompt: "Be terse." })
    assert.deepStrictEqual(Initialize.promptOptions({ systemPrompt: ["One.", "Two."] }), { systemPrompt: "One.\n\nTwo." })
    assert.deepStrictEqual(Initialize.promptOptions({ systemPrompt: "As a string." }), { systemPrompt: "As a string." })
    assert.deepStrictEqual(Initialize.promptOptions({ appendSystemPrompt: "More." }), { appendSystemPrompt: "More." })
    assert.isUndefined(Initialize.promptOptions({ systemPrompt: [1] }))
    assert.isUndefined(Initialize.promptOptions({ systemPrompt: { type: "preset" } }))
    assert.isUndefined(Initialize.promptOptions({ appendSystemPrompt: 3 }))
  })

  it("unsupported: a system prompt only in the first line's initialize; malformed prompts and shaping options by name", () => {
    assert.deepStrictEqual(Initialize.unsupported({ systemPrompt: ["Be terse."] }, { first: true }), [])
    assert.deepStrictEqual(Initialize.unsupported({ systemPrompt: [""] }, { first: false }), [])
    assert.deepStrictEqual(
      Initialize.unsupported({ systemPrompt: ["Be terse."], appendSystemPrompt: "x" }, { first: false }),
      ["systemPrompt (only in the first line's initialize)", "appendSystemPrompt (only in the first line's initialize)"]
    )
    assert.deepStrictEqual(Initialize.unsupported({ systemPrompt: [2] }, { first: true }), ["systemPrompt (not a string or an array of strings)"])
    assert.deepStrictEqual(
      Initialize.unsupported({ planModeInstructions: "p", excludeDynamicSections: true, title: "t" }, { first: true }),
      ["planModeInstructions", "excludeDynamicSections"]
    )
  })
})
