import { assert, describe, it } from "@effect/vitest"
import * as InputKeys from "../../src/repl/InputKeys.js"
import * as InputLine from "../../src/repl/InputLine.js"

const idle: InputKeys.Situation = { running: false, queued: 0, exitArmed: false }
const busy: InputKeys.Situation = { running: true, queued: 2, exitArmed: false }
const empty = InputLine.make(["earlier"])
const typed = (text: string, pulledBack = false) => InputLine.set(empty, text, pulledBack)

/** The command for a named key (with its modifiers). */
const press = (line: InputLine.InputLine, name: string, situation: InputKeys.Situation, mods: Partial<InputKeys.Key> = {}) =>
  InputKeys.decide(line, undefined, { name, ...mods }, situation)

const textOf = (command: InputKeys.Command) => (command._tag === "Edit" || command._tag === "Drop" ? command.line.text : undefined)

describe("InputKeys", () => {
  it("↑ on an empty line pulls the last queued prompt back; with text, or with nothing queued, it browses history", () => {
    assert.deepStrictEqual(press(empty, "up", busy), { _tag: "PullBack" })
    assert.strictEqual(textOf(press(empty, "up", idle)), "earlier")
    assert.strictEqual(textOf(press(empty, "up", { ...busy, queued: 0 })), "earlier")
    assert.strictEqual(textOf(press(typed("draft"), "up", busy)), "earlier")
  })

  it("Esc drops a pulled-back prompt (edited or not); otherwise it interrupts the running turn, and does nothing when none runs", () => {
    const pulled = InputLine.insert(typed("queued prompt", true), " edited")
    const dropped = press(pulled, "escape", busy)
    assert.strictEqual(dropped._tag, "Drop")
    assert.deepStrictEqual([textOf(dropped), (dropped as { line: InputLine.InputLine }).line.pulledBack], ["", false])
    assert.strictEqual(press(typed("queued", true), "escape", idle)._tag, "Drop")
    assert.deepStrictEqual(press(empty, "escape", busy), { _tag: "Interrupt" })
    assert.deepStrictEqual(press(typed("typing ahead"), "escape", busy), { _tag: "Interrupt" }, "what is typed stays")
    assert.deepStrictEqual(press(empty, "escape", idle), { _tag: "Ignore" })
    assert.deepStrictEqual(press(empty, "escape", busy, { meta: true }), { _tag: "Interrupt" }, "Esc Esc reads as Alt+Esc")
  })

  it("Ctrl+C clears the line, then interrupts the running turn; idle, it warns, and a second one in a row exits", () => {
    assert.deepStrictEqual(press(typed("half a prompt"), "c", busy, { ctrl: true }), { _tag: "Edit", line: InputLine.clear(typed("x")) })
    assert.strictEqual(press(typed("pulled", true), "c", busy, { ctrl: true })._tag, "Drop")
    assert.deepStrictEqual(press(empty, "c", busy, { ctrl: true }), { _tag: "Interrupt" })
    assert.deepStrictEqual(press(empty, "c", idle, { ctrl: true }), { _tag: "ArmExit" })
    assert.deepStrictEqual(press(empty, "c", { ...idle, exitArmed: true }, { ctrl: true }), { _tag: "Exit" })
    assert.deepStrictEqual(press(empty, "d", busy, { ctrl: true }), { _tag: "Exit" })
    assert.strictEqual(textOf(press({ ...typed("abc"), cursor: 1 }, "d", idle, { ctrl: true })), "ac")
  })

  it("Enter submits (queued or not, the runtime decides); a trailing backslash or Alt+Enter goes on to a new line; blank is nothing", () => {
    assert.deepStrictEqual(press(typed("next question"), "return", busy), { _tag: "Submit", text: "next question" })
    assert.strictEqual(textOf(press(typed("line one\\"), "return", idle)), "line one\n")
    assert.strictEqual(textOf(press(typed("line one"), "return", idle, { meta: true })), "line one\n")
    assert.strictEqual(textOf(press(typed("   "), "return", idle)), "")
  })

  it("printable text goes in as typed (a paste's chunk too); control characters and unknown keys do nothing", () => {
    assert.strictEqual(textOf(InputKeys.decide(typed("a"), "é", { name: undefined }, idle)), "aé")
    assert.strictEqual(textOf(InputKeys.decide(typed("a"), " ", { name: "space" }, idle)), "a ")
    assert.deepStrictEqual(InputKeys.decide(typed("a"), "\x1b[15~", { name: "f5" }, idle), { _tag: "Ignore" })
    assert.deepStrictEqual(press(empty, "tab", idle), { _tag: "Complete" })
    assert.deepStrictEqual(press(empty, "l", idle, { ctrl: true }), { _tag: "Redraw" })
  })

  it("Shift+Tab cycles the permission mode and Ctrl+O expands the last output, whatever the line holds", () => {
    assert.deepStrictEqual(press(typed("half"), "tab", busy, { shift: true }), { _tag: "CycleMode" })
    assert.deepStrictEqual(press(empty, "tab", { ...idle, menu: true }, { shift: true }), { _tag: "CycleMode" })
    assert.deepStrictEqual(press(empty, "o", idle, { ctrl: true }), { _tag: "Expand" })
  })

  it("while the / menu is open, ↑/↓ choose, Tab and Enter complete, Esc closes it; closed, they do what they always do", () => {
    const menu = { ...idle, menu: true }
    assert.deepStrictEqual(press(typed("/co"), "up", menu), { _tag: "MenuMove", by: -1 })
    assert.deepStrictEqual(press(typed("/co"), "down", menu), { _tag: "MenuMove", by: 1 })
    assert.deepStrictEqual(press(typed("/co"), "tab", menu), { _tag: "MenuAccept", enter: false })
    assert.deepStrictEqual(press(typed("/co"), "return", menu), { _tag: "MenuAccept", enter: true })
    assert.deepStrictEqual(press(typed("/co"), "escape", { ...busy, menu: true }), { _tag: "MenuClose" })
    assert.deepStrictEqual(press(typed("/co"), "tab", idle), { _tag: "Complete" })
    assert.deepStrictEqual(press(typed("/co"), "return", idle), { _tag: "Submit", text: "/co" })
    assert.deepStrictEqual(press(typed("/co"), "c", menu, { ctrl: true })._tag, "Edit")
  })
})
