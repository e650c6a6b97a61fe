import { assert, describe, it } from "@effect/vitest"
import * as ToolLine from "../../src/repl/ToolLine.js"

describe("ToolLine", () => {
  it("shows the field that says what a call does, paths relative to the working directory", () => {
    assert.strictEqual(ToolLine.describeCall("Read", { file_path: "/p/src/main.ts", offset: 3 }, "/p"), "Read(src/main.ts)")
    assert.strictEqual(ToolLine.describeCall("Read", { file_path: "/etc/hosts" }, "/p"), "Read(/etc/hosts)")
    assert.strictEqual(ToolLine.describeCall("Bash", { command: "npm   test\n-- --watch", timeout: 5 }, "/p"), "Bash(npm test -- --watch)")
    assert.strictEqual(ToolLine.describeCall("Grep", { pattern: "TODO", path: "src" }, "/p"), "Grep(TODO)")
    assert.strictEqual(ToolLine.describeCall("TodoWrite", { todos: [{}, {}] }, "/p"), "TodoWrite(2 tasks)")
    assert.strictEqual(ToolLine.describeCall("mcp__x__search", { query: "cats" }, "/p"), "mcp__x__search(cats)")
    assert.strictEqual(ToolLine.describeCall("Odd", 42, "/p"), "Odd")
  })

  it("cuts long inputs to one short line", () => {
    const line = ToolLine.describeCall("Bash", { command: "x".repeat(500) }, "/p")
    assert.strictEqual(line.length, "Bash()".length + 72)
    assert.isTrue(line.endsWith("…)"))
  })

  it("an outcome is the error's first line, one short line, or a line count; then the time", () => {
    assert.deepStrictEqual(ToolLine.describeOutcome({ content: "\nboom: no such file\nmore", is_error: true }, 1234), {
      error: true,
      interrupted: false,
      text: "boom: no such file · 1.2 s"
    })
    assert.deepStrictEqual(ToolLine.describeOutcome({ content: "a\nb\nc\n" }, 15_400), { error: false, interrupted: false, text: "3 lines · 15 s" })
    assert.deepStrictEqual(ToolLine.describeOutcome({ content: [{ type: "text", text: "ok" }] }, undefined), {
      error: false,
      interrupted: false,
      text: "ok"
    })
    assert.deepStrictEqual(ToolLine.describeOutcome({ content: "" }, 100), { error: false, interrupted: false, text: "done · 0.1 s" })
  })

  it("an error's tags are not shown; an interrupted call is `Interrupted`, without a time", () => {
    assert.deepStrictEqual(
      ToolLine.describeOutcome({ content: "<tool_use_error>Exit code 2\nls: cannot access</tool_use_error>", is_error: true }, 300),
      { error: true, interrupted: false, text: "Exit code 2 · 0.3 s" }
    )
    assert.deepStrictEqual(
      ToolLine.describeOutcome({ content: "<tool_use_error>Interrupted by user</tool_use_error>", is_error: true }, 300),
      { error: false, interrupted: true, text: "Interrupted" }
    )
  })
})
