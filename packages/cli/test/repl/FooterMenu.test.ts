import { assert, describe, it } from "@effect/vitest"
import * as Footer from "../../src/repl/Footer.js"

const input: Footer.Input = { prompt: "› ", continuation: "… ", text: "/co", cursor: 3 }

describe("Footer's menu and mode rows", () => {
  it("puts the / menu right under the input line, the queued prompts after it and the mode row last; the cursor stays on the line", () => {
    const area = Footer.layout(
      { ...Footer.empty, input, menu: ["  › /compact", "    /cost"], queued: ["  > next"], mode: "⏸ plan mode on" },
      80,
      24
    )
    assert.deepStrictEqual(area.text.split("\n"), ["› /co", "  › /compact", "    /cost", "  > next", "⏸ plan mode on"])
    assert.deepStrictEqual([area.rows, area.cursorRow, area.cursorColumn], [5, 0, 5])
  })

  it("shows no mode row while the input line is hidden", () => {
    assert.strictEqual(Footer.layout({ ...Footer.empty, status: "working", mode: "⏸ plan mode on" }, 80, 24).text, "working")
  })
})
