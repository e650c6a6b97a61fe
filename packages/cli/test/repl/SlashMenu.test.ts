import { assert, describe, it } from "@effect/vitest"
import * as SlashMenu from "../../src/repl/SlashMenu.js"
import * as Style from "../../src/repl/Style.js"

const items = SlashMenu.items([
  { name: "compact", argumentHint: "[instructions]", description: "Summarise the conversation" },
  { name: "cost", description: "Show the cost" },
  { name: "model", argumentHint: "[name]", description: "Switch the model" },
  { name: "discover", description: "Find things" },
  { name: "cost", description: "A second /cost, hidden by the first" }
])
const plain = Style.make(false)

describe("SlashMenu", () => {
  it("matches a single /word: names starting with it first, then names containing it; nothing once a space or a second word comes", () => {
    assert.deepStrictEqual(SlashMenu.matching(items, "/").map((i) => i.name), ["/compact", "/cost", "/model", "/discover"])
    assert.deepStrictEqual(SlashMenu.matching(items, "/co").map((i) => i.name), ["/compact", "/cost", "/discover"])
    assert.deepStrictEqual(SlashMenu.matching(items, "/CO").map((i) => i.name), ["/compact", "/cost", "/discover"])
    assert.deepStrictEqual(SlashMenu.matching(items, "/cost "), [])
    assert.deepStrictEqual(SlashMenu.matching(items, "/zz"), [])
    assert.deepStrictEqual(SlashMenu.matching(items, "hello /co"), [])
    assert.deepStrictEqual(SlashMenu.matching(items, "/src/main.ts"), [])
  })

  it("lays out names (with argument hints) in a column, then descriptions cut to the width; the chosen row is marked", () => {
    const rows = SlashMenu.rows(SlashMenu.matching(items, "/co"), 1, 50, plain)
    assert.deepStrictEqual(rows, [
      "    /compact [instructions]  Summarise the conve…",
      "  › /cost                    Show the cost",
      "    /discover                Find things"
    ])
  })

  it("shows at most MAX_ROWS rows, scrolled so the chosen one is among them", () => {
    const many = SlashMenu.items(Array.from({ length: 20 }, (_, i) => ({ name: `c${i}`, description: `d${i}` })))
    const rows = SlashMenu.rows(many, 15, 80, plain)
    assert.strictEqual(rows.length, SlashMenu.MAX_ROWS)
    assert.include(rows.at(-1)!, "› /c15")
    assert.include(SlashMenu.rows(many, 0, 80, plain)[0]!, "› /c0")
  })
})
