import { assert, describe, it } from "@effect/vitest"
import * as Initialize from "../src/Initialize.js"

const linesOf = async function*(lines: ReadonlyArray<string>) {
  for (const line of lines) yield line
}

const all = async (lines: AsyncIterable<string>) => {
  const out: Array<string> = []
  for await (const line of lines) out.push(line)
  return out
}

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
    assert.deepStrictEqual(Initialize.unsupported({ systemPrompt: ["Be terse."] }, true), [])
    assert.deepStrictEqual(Initialize.unsupported({ systemPrompt: [""] }, false), [])
    assert.deepStrictEqual(
      Initialize.unsupported({ systemPrompt: ["Be terse."], appendSystemPrompt: "x" }, false),
      ["systemPrompt (only in the first line's initialize)", "appendSystemPrompt (only in the first line's initialize)"]
    )
    assert.deepStrictEqual(Initialize.unsupported({ systemPrompt: [2] }, true), ["systemPrompt (not a string or an array of strings)"])
    assert.deepStrictEqual(
      Initialize.unsupported({ planModeInstructions: "p", excludeDynamicSections: true, title: "t" }, true),
      ["planModeInstructions", "excludeDynamicSections"]
    )
  })

  it("readFirst: a first-line initialize is read, and every line still comes through in order", async () => {
    const init = JSON.stringify({ type: "control_request", request_id: "r1", request: { subtype: "initialize", systemPrompt: ["S"] } })
    const user = JSON.stringify({ type: "user", message: { role: "user", content: "hi" } })
    const read = await Initialize.readFirst(linesOf(["", init, user]))
    assert.deepStrictEqual(read.initialize, { requestId: "r1", request: { subtype: "initialize", systemPrompt: ["S"] } })
    assert.deepStrictEqual(await all(read.lines), ["", init, user])
  })

  it("readFirst: no initialize when the first line is a user message, or not JSON, or there is no input", async () => {
    const user = JSON.stringify({ type: "user", message: { role: "user", content: "hi" } })
    const init = JSON.stringify({ type: "control_request", request_id: "r1", request: { subtype: "initialize" } })
    const first = await Initialize.readFirst(linesOf([user, init]))
    assert.isUndefined(first.initialize)
    assert.deepStrictEqual(await all(first.lines), [user, init])
    const junk = await Initialize.readFirst(linesOf(["{not json", init]))
    assert.isUndefined(junk.initialize)
    assert.deepStrictEqual(await all(junk.lines), ["{not json", init])
    const empty = await Initialize.readFirst(linesOf([]))
    assert.isUndefined(empty.initialize)
    assert.deepStrictEqual(await all(empty.lines), [])
  })
})
