import { assert, describe, it } from "@effect/vitest"
import * as InputLine from "../../src/repl/InputLine.js"

/** A line holding `text` with the cursor where `|` is. */
const at = (marked: string, history: ReadonlyArray<string> = []): InputLine.InputLine => {
  const cursor = marked.indexOf("|")
  return { ...InputLine.set(InputLine.make(history), marked.replace("|", "")), cursor }
}

/** The line's text with `|` at the cursor. */
const shown = (line: InputLine.InputLine) => `${line.text.slice(0, line.cursor)}|${line.text.slice(line.cursor)}`

describe("InputLine", () => {
  it("edits at the cursor: characters, words, to either end of the cursor's line", () => {
    assert.strictEqual(shown(InputLine.insert(at("ab|cd"), "XY")), "abXY|cd")
    assert.strictEqual(shown(InputLine.backspace(at("ab|cd"))), "a|cd")
    assert.strictEqual(shown(InputLine.backspace(at("|cd"))), "|cd")
    assert.strictEqual(shown(InputLine.deleteForward(at("ab|cd"))), "ab|d")
    assert.strictEqual(shown(InputLine.backspace(at("a😀|b"))), "a|b", "a character outside the BMP is one character")
    assert.strictEqual(shown(InputLine.left(at("a😀|b"))), "a|😀b")
    assert.strictEqual(shown(InputLine.right(at("a|😀b"))), "a😀|b")
    assert.strictEqual(shown(InputLine.wordLeft(at("git  commit  |-m"))), "git  |commit  -m")
    assert.strictEqual(shown(InputLine.wordRight(at("git|  commit -m"))), "git  commit| -m")
    assert.strictEqual(shown(InputLine.deleteWordBack(at("git commit |-m"))), "git |-m")
    assert.strictEqual(shown(InputLine.deleteWordForward(at("git| commit -m"))), "git| -m")
    assert.strictEqual(shown(InputLine.killToEnd(at("one\ntw|o\nthree"))), "one\ntw|\nthree")
    assert.strictEqual(shown(InputLine.killToStart(at("one\ntw|o\nthree"))), "one\n|o\nthree")
    assert.strictEqual(shown(InputLine.home(at("one\ntw|o"))), "one\n|two")
    assert.strictEqual(shown(InputLine.end(at("o|ne\ntwo"))), "one|\ntwo")
    assert.strictEqual(shown(InputLine.replaceBefore(at("/he|"), 3, "/help ")), "/help |")
    assert.strictEqual(InputLine.beforeCursor(at("one\n/mo|del")), "/mo")
  })

  it("↑/↓ move between the lines of a multi-line text first, then browse history, keeping the text being written", () => {
    const line = at("first line\nsec|ond", ["older", "newest"])
    const up = InputLine.up(line)
    assert.strictEqual(shown(up), "fir|st line\nsecond", "the same column, a line up")
    const browsed = InputLine.up(up)
    assert.strictEqual(shown(browsed), "newest|")
    assert.strictEqual(shown(InputLine.up(browsed)), "older|")
    assert.strictEqual(InputLine.up(InputLine.up(browsed)).text, "older", "the oldest entry stays")
    assert.strictEqual(InputLine.down(InputLine.up(browsed)).text, "newest")
    assert.strictEqual(InputLine.down(browsed).text, "first line\nsecond", "↓ past the newest entry brings the draft back")
  })

  it("a pulled-back prompt stays marked through history browsing and back; a submission is the newest entry, once", () => {
    const pulled = InputLine.set(InputLine.make(["a"]), "queued text", true)
    assert.isTrue(pulled.pulledBack)
    const browsing = InputLine.up(pulled)
    assert.deepStrictEqual([browsing.text, browsing.pulledBack], ["a", false])
    const back = InputLine.down(browsing)
    assert.deepStrictEqual([back.text, back.pulledBack], ["queued text", true])
    const after = InputLine.submitted(InputLine.submitted(back, "x"), "a")
    assert.deepStrictEqual([after.text, after.cursor, after.pulledBack, after.history], ["", 0, false, ["a", "x"]])
    assert.isTrue(InputLine.isBlank(InputLine.insert(after, "  \n ")))
  })
})
