import { assert, describe, it } from "@effect/vitest"
import * as Footer from "../../src/repl/Footer.js"
import * as Screen from "../../src/repl/Screen.js"
import * as Style from "../../src/repl/Style.js"

const input = (text: string, cursor = text.length): Footer.Input => ({ prompt: "› ", continuation: "… ", text, cursor })
const parts = (change: Partial<Footer.Parts>): Footer.Parts => ({ ...Footer.empty, ...change })

describe("Footer", () => {
  it("measures what a terminal shows: no escapes, wide characters take two columns, combining marks none", () => {
    assert.strictEqual(Footer.width("\x1b[1m\x1b[36m› \x1b[39m\x1b[22mhi"), 4)
    assert.strictEqual(Footer.width("日本"), 4)
    assert.strictEqual(Footer.width("e\u0301"), 1)
  })

  it("lays out status, input and queued rows top to bottom, the cursor on the input at its column", () => {
    const area = Footer.layout(parts({ status: "✻ working…", input: input("hello", 2), queued: ["  > next"], note: "note" }), 20, 24)
    assert.deepStrictEqual(area, { text: "✻ working…\n› hello\n  > next\nnote", rows: 4, cursorRow: 1, cursorColumn: 4 })
    // Drawing ends at the last row: up to the cursor's row, then to its column.
    assert.strictEqual(Footer.draw(area), `${area.text}\x1b[2A\r\x1b[4C`)
    assert.strictEqual(Footer.clear(area), "\x1b[1A\r\x1b[J")
  })

  it("counts wrapped rows: a multi-line input with its continuation prompt, a long line over several rows", () => {
    const area = Footer.layout(parts({ input: input("first\n0123456789abcdef", 17) }), 10, 24)
    // "› first" is one row; "… 0123456789abcdef" is 18 columns: two rows; the cursor after "a" (column 13 of the line: row 2, column 3).
    assert.deepStrictEqual([area.rows, area.cursorRow, area.cursorColumn], [3, 2, 3])
  })

  it("an input line that fills its last row exactly gets an empty row for the cursor", () => {
    const area = Footer.layout(parts({ input: input("12345678"), queued: ["q"] }), 10, 24)
    assert.deepStrictEqual(area, { text: "› 12345678\n\nq", rows: 3, cursorRow: 1, cursorColumn: 0 })
  })

  it("the answer's unfinished line goes first; only its end shows when it would not fit the screen", () => {
    const short = Footer.layout(parts({ partial: "Hello **wor", input: input("") }), 20, 24)
    assert.deepStrictEqual([short.text, short.rows, short.cursorRow], ["Hello **wor\n› ", 2, 1])
    const long = Footer.layout(parts({ partial: "x".repeat(95) + "END", input: input("") }), 10, 5)
    // 5 rows high, one for the input: the last three rows of text (at most) above it.
    assert.strictEqual(long.text, `${"x".repeat(27)}END\n› `)
    assert.deepStrictEqual([long.rows, long.cursorRow], [4, 3])
  })

  it("lists queued prompts one a row, cut to the width, the last saying ↑ edits it; past five, a count in the middle", () => {
    const style = Style.make(false)
    assert.deepStrictEqual(Footer.queuedRows(["short", "a much longer prompt than fits"], 30, style), [
      "  > short",
      "  > a much longe… (↑ to edit)"
    ])
    const many = Footer.queuedRows(["1", "2", "3", "4", "5", "6", "7"], 40, style)
    assert.deepStrictEqual(many, ["  > 1", "  > 2", "  > 3", "  … 3 more", "  > 7 (↑ to edit)"])
    assert.deepStrictEqual(Footer.queuedRows([], 40, style), [])
  })
})

describe("Screen", () => {
  const screen = () => {
    let out = ""
    const s = Screen.make({ write: (text) => (out += text), columns: () => 20, rows: () => 24 })
    return { s, out: () => out, take: () => ((text) => (out = "", text))(out) }
  }

  it("prints above the area: takes the area off, prints, draws it again, in one write per change or batch", () => {
    const { s, take } = screen()
    s.set({ input: input("ab") })
    assert.strictEqual(take(), "› ab\r\x1b[4C")
    s.write("answer line\n")
    assert.strictEqual(take(), "\r\x1b[J" + "answer line\n" + "› ab\r\x1b[4C")
    s.batch(() => {
      s.set({ status: "working" })
      s.write("more\n")
    })
    assert.strictEqual(take(), "\r\x1b[J" + "more\n" + "working\n› ab\r\x1b[4C")
  })

  it("a printed line not ended yet shows in the area until its end comes; closing prints it and stops drawing", () => {
    const { s, take } = screen()
    s.set({ input: input("") })
    take()
    s.write("half")
    assert.strictEqual(take(), "\r\x1b[J" + "half\n› \r\x1b[2C")
    s.write(" done\nnext")
    assert.strictEqual(take(), "\x1b[1A\r\x1b[J" + "half done\n" + "next\n› \r\x1b[2C")
    s.close()
    assert.strictEqual(take(), "\x1b[1A\r\x1b[J" + "next\n")
    s.write("after\n")
    s.set({ status: "ignored" })
    assert.strictEqual(take(), "after\n")
  })
})
