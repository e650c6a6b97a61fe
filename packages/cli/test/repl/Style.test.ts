import { assert, describe, it } from "@effect/vitest"
import * as Style from "../../src/repl/Style.js"

describe("Style", () => {
  it("colours a terminal, not a pipe, never with NO_COLOR or TERM=dumb; FORCE_COLOR forces", () => {
    assert.isTrue(Style.colorEnabled(true, {}))
    assert.isFalse(Style.colorEnabled(false, {}))
    assert.isFalse(Style.colorEnabled(undefined, {}))
    assert.isFalse(Style.colorEnabled(true, { NO_COLOR: "1" }))
    assert.isTrue(Style.colorEnabled(true, { NO_COLOR: "" }))
    assert.isFalse(Style.colorEnabled(true, { TERM: "dumb" }))
    assert.isTrue(Style.colorEnabled(false, { FORCE_COLOR: "1" }))
    assert.isFalse(Style.colorEnabled(true, { FORCE_COLOR: "1", NO_COLOR: "1" }))
  })

  it("paints with SGR escapes, or not at all", () => {
    assert.strictEqual(Style.make(true).red("x"), "\x1b[31mx\x1b[39m")
    assert.strictEqual(Style.make(false).red("x"), "x")
  })
})
