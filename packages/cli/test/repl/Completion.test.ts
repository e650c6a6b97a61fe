import { assert, describe, it } from "@effect/vitest"
import { BuiltinCommands } from "@keel/core"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Completion from "../../src/repl/Completion.js"
import * as InputLine from "../../src/repl/InputLine.js"

describe("Completion", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keel-complete-"))
  fs.mkdirSync(path.join(dir, "src"))
  fs.writeFileSync(path.join(dir, "src", "main.ts"), "")
  fs.writeFileSync(path.join(dir, "README.md"), "")
  fs.writeFileSync(path.join(dir, ".env"), "")
  // The session's commands: the built-in ones.
  const commands = BuiltinCommands.all
  const complete = Completion.completer(dir, commands)

  it("completes slash commands, the session's and the REPL's", () => {
    assert.deepStrictEqual(complete("/co"), [["/compact ", "/context ", "/cost "], "/co"])
    assert.deepStrictEqual(complete("/re"), [["/resume "], "/re"])
    assert.deepStrictEqual(complete("/")[0].length, Completion.commandNames(commands).length)
  })

  it("completes /model names", () => {
    assert.deepStrictEqual(complete("/model so"), [["sonnet"], "so"])
  })

  it("completes @paths, folders with a slash, hidden files only when asked", () => {
    assert.deepStrictEqual(complete("explain @"), [["@README.md", "@src/"], "@"])
    assert.deepStrictEqual(complete("explain @src/m"), [["@src/main.ts"], "@src/m"])
    assert.deepStrictEqual(complete("@."), [["@.env"], "@."])
    assert.deepStrictEqual(complete("plain words"), [[], "plain words"])
  })

  it("Tab: one candidate replaces the word, several complete to what they share, a second Tab in a row lists them", () => {
    const line = (text: string) => InputLine.set(InputLine.make([]), text)
    assert.strictEqual(Completion.tab(line("/he"), complete, false).line.text, "/help ")
    assert.strictEqual(Completion.tab(line("explain @src/m"), complete, false).line.text, "explain @src/main.ts")
    const notes = fs.mkdtempSync(path.join(os.tmpdir(), "keel-complete-"))
    for (const name of ["notes-one.md", "notes-two.md"]) fs.writeFileSync(path.join(notes, name), "")
    assert.strictEqual(Completion.tab(line("see @no"), Completion.completer(notes, commands), false).line.text, "see @notes-")
    const co = Completion.tab(line("/co"), complete, false)
    assert.deepStrictEqual([co.line.text, co.listed], ["/co", undefined])
    assert.deepStrictEqual(Completion.tab(line("/co"), complete, true).listed, ["/compact", "/context", "/cost"])
    assert.strictEqual(Completion.tab(line("plain words"), complete, true).line.text, "plain words")
  })
})
