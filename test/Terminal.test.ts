/**
 * The terminal of the REPL tests (test/support/Terminal.ts) without keel: tmux key names as the
 * bytes a terminal sends, and a headless xterm's buffer as the text tmux's capture-pane gave.
 */
import { assert, describe, it } from "@effect/vitest"
import xterm from "@xterm/headless"
import * as ScreenText from "./support/ScreenText.js"
import * as TerminalKeys from "./support/TerminalKeys.js"

const normal = { applicationCursorKeys: false }

/** A 20-column emulator that has processed `data`. */
const emulator = async (data: string) => {
  const term = new xterm.Terminal({ cols: 20, rows: 5, scrollback: 100, allowProposedApi: true })
  await new Promise<void>((resolve) => term.write(data, resolve))
  return term
}

describe("TerminalKeys", () => {
  it("maps tmux key names to a terminal's bytes, and other strings to themselves", () => {
    const keys = ["Enter", "Tab", "BTab", "Escape", "BSpace", "DC", "C-c", "C-d", "C-a", "M-b", "Space", "hello", "C-"]
    assert.deepStrictEqual(keys.map((k) => TerminalKeys.bytes(k, normal)), [
      "\r", "\t", "\x1b[Z", "\x1b", "\x7f", "\x1b[3~", "\x03", "\x04", "\x01", "\x1bb", " ", "hello", "C-"
    ])
  })

  it("cursor keys follow the mode the program set (DECCKM)", () => {
    assert.strictEqual(TerminalKeys.bytes("Up", normal), "\x1b[A")
    assert.strictEqual(TerminalKeys.bytes("Left", normal), "\x1b[D")
    assert.strictEqual(TerminalKeys.bytes("Up", { applicationCursorKeys: true }), "\x1bOA")
    assert.strictEqual(TerminalKeys.bytes("End", { applicationCursorKeys: true }), "\x1bOF")
  })
})

describe("ScreenText", () => {
  it("gives every row, joins a wrapped row with the next, and keeps written spaces only", async () => {
    const term = await emulator(`first\r\n${"x".repeat(25)}\r\n› `)
    assert.strictEqual(ScreenText.capture(term.buffer.active), `first\n${"x".repeat(25)}\n› \n\n`)
  })

  it("scrollback comes first, then the screen", async () => {
    const term = await emulator(["1", "2", "3", "4", "5", "6", "7"].join("\r\n"))
    assert.strictEqual(ScreenText.capture(term.buffer.active), "1\n2\n3\n4\n5\n6\n7\n")
  })

  it("with escapes: colours and styles as SGR, reset where they end; none for plain text", async () => {
    const term = await emulator("plain \x1b[1;31mbold red\x1b[0m \x1b[38;5;200mpink\x1b[0m\r\n\x1b[38;2;1;2;3mrgb")
    const [first, second] = ScreenText.capture(term.buffer.active, { escapes: true }).split("\n")
    assert.strictEqual(first, "plain \x1b[0;1;31mbold red\x1b[0m \x1b[0;38;5;200mpink\x1b[0m")
    assert.strictEqual(second, "\x1b[0;38;2;1;2;3mrgb\x1b[0m")
    const plain = await emulator("no colour here")
    assert.notInclude(ScreenText.capture(plain.buffer.active, { escapes: true }), "\x1b[")
  })
})
