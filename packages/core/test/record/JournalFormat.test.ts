/** The journal's text format and the request diff: what a reader of a journal or a divergence sees. */
import { assert, describe, it } from "@effect/vitest"
import { JournalEntry, ModelError, RequestDiff } from "@keel/core"
import { Either } from "effect"

describe("JournalEntry", () => {
  it("round-trips every line type through text, typed errors included", () => {
    const entries: ReadonlyArray<JournalEntry.Entry> = [
      { type: "journal", version: JournalEntry.VERSION, startedAt: 0 },
      { type: "body", hash: "ab", body: "{\"model\":\"m\"}" },
      { type: "call", call: 1, at: 5, hash: "ab" },
      { type: "chunk", call: 1, at: 7, items: [{ type: "ping" }] },
      { type: "end", call: 1, at: 9, outcome: "failed", error: new ModelError.RateLimited({ message: "slow down", status: 429 }) }
    ]
    const text = entries.map(JournalEntry.encodeLine).join("\n")
    const back = Either.getOrThrow(JournalEntry.parse(text))
    assert.strictEqual(back.map(JournalEntry.encodeLine).join("\n"), text)
    const end = back[4]!
    assert.isTrue(end.type === "end" && end.error instanceof ModelError.RateLimited)
  })

  it("skips blank lines and line types it does not know (later versions may add some)", () => {
    const text = `{"type":"journal","version":1,"startedAt":0}\n\n{"type":"tool","id":"x"}\n{"type":"call","call":1,"at":0,"hash":"h"}\n`
    assert.deepStrictEqual(Either.getOrThrow(JournalEntry.parse(text)).map((e) => e.type), ["journal", "call"])
  })

  it("a line that is not JSON, or a known line that does not match, fails naming the line", () => {
    const notJson = JournalEntry.parse(`{"type":"journal","version":1,"startedAt":0}\n{"type":"call",`)
    assert.isTrue(Either.isLeft(notJson) && notJson.left.line === 2 && notJson.left.message.startsWith("not JSON"))
    const wrong = JournalEntry.parse(`{"type":"call","call":"one","at":0,"hash":"h"}`)
    assert.isTrue(Either.isLeft(wrong) && wrong.left.line === 1 && wrong.left.message.includes("call"))
  })
})

describe("RequestDiff", () => {
  it("names the first differing path: nested keys, array items, absent and extra keys", () => {
    assert.strictEqual(RequestDiff.first({ a: 1 }, { a: 1 }), undefined)
    assert.strictEqual(RequestDiff.first({ m: [{ t: "x" }, { t: "y" }] }, { m: [{ t: "x" }, { t: "z" }] })?.path, "$.m[1].t")
    assert.deepStrictEqual(RequestDiff.first({ m: [1] }, { m: [1, 2] }), { path: "$.m[1]", expected: undefined, actual: 2 })
    assert.deepStrictEqual(RequestDiff.first({ a: 1 }, { a: 1, "b-c": 2 }), { path: "$[\"b-c\"]", expected: undefined, actual: 2 })
    assert.strictEqual(RequestDiff.first({ a: 1, b: 2 }, { b: 2 })?.path, "$.a")
  })

  it("renders text as the differing lines with context, and cuts long values", () => {
    const expected = "one\ntwo\nthree\nfour\nfive"
    const actual = "one\ntwo\nthree\nFOUR\nfive"
    assert.strictEqual(RequestDiff.render({ path: "$", expected, actual }), "  two\n  three\n- four\n+ FOUR")
    const long = Array.from({ length: 30 }, (_, i) => `line ${i}`).join("\n")
    const rendered = RequestDiff.render({ path: "$", expected: undefined, actual: long }, 5)
    assert.include(rendered, "+ … 25 more lines")
    assert.include(rendered, "- (absent)")
  })
})
