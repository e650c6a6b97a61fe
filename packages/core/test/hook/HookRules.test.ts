import { assert, describe, it } from "@effect/vitest"
import { HookMatcher, HookOutcome, HookOutput } from "@keel/core"

describe("HookMatcher", () => {
  it("empty, absent and * match everything", () => {
    for (const m of [undefined, "", "*"]) assert.isTrue(HookMatcher.matches(m, "Bash"))
  })
  it("names and | lists match exactly", () => {
    assert.isTrue(HookMatcher.matches("Bash", "Bash"))
    assert.isFalse(HookMatcher.matches("Bash", "BashOutput"))
    assert.isTrue(HookMatcher.matches("Edit|Write", "Write"))
    assert.isFalse(HookMatcher.matches("Edit|Write", "Read"))
  })
  it("anything else is a regular expression: MCP tools by server, prefixes", () => {
    assert.isTrue(HookMatcher.matches("mcp__memory__.*", "mcp__memory__create_entities"))
    assert.isFalse(HookMatcher.matches("mcp__memory__.*", "mcp__github__search"))
    assert.isTrue(HookMatcher.matches("Notebook.*", "NotebookEdit"))
    assert.isTrue(HookMatcher.matches("^(Edit|Write)$", "Edit"))
  })
  it("an event without a matcher query matches every matcher", () => {
    assert.isTrue(HookMatcher.matches("Bash", undefined))
  })
  it("an invalid regular expression is a problem; names and lists are not", () => {
    assert.isUndefined(HookMatcher.problem("Edit|Write"))
    assert.isUndefined(HookMatcher.problem("mcp__.*"))
    assert.include(HookMatcher.problem("Bash(")!, "not a valid regular expression")
  })
})

describe("HookOutput.read", () => {
  const exited = (exitCode: number, stdout = "", stderr = "") => HookOutput.read("h", { _tag: "Exited", exitCode, stdout, stderr })
  it("exit 0 with JSON stdout is its output; plain stdout is text", () => {
    assert.deepStrictEqual(exited(0, `{"decision":"block","reason":"r"}\n`), {
      _tag: "Success",
      output: { decision: "block", reason: "r" },
      text: ""
    })
    assert.deepStrictEqual(exited(0, "some context\n"), { _tag: "Success", output: undefined, text: "some context" })
  })
  it("exit 2 blocks with stderr as the reason; other codes are non-blocking errors", () => {
    assert.deepStrictEqual(exited(2, "", "nope\n"), { _tag: "Blocking", reason: "nope" })
    assert.deepStrictEqual(exited(1, "", "oops"), { _tag: "NonBlocking", message: "The hook h exited with code 1: oops" })
  })
  it("JSON that is not a hook output, and async outputs, are reported", () => {
    const bad = exited(0, `{"decision":"maybe"}`)
    assert.strictEqual(bad._tag, "NonBlocking")
    const async = HookOutput.read("h", { _tag: "Answered", output: { async: true } })
    assert.include((async as { message: string }).message, "background")
  })
})

const success = (output: HookOutput.SyncOutput | undefined, text = ""): HookOutput.Result => ({ _tag: "Success", output, text })
const pre = (decision: "allow" | "ask" | "deny", reason: string) =>
  success({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: decision, permissionDecisionReason: reason } })

describe("HookOutcome.merge", () => {
  it("deny beats ask beats allow, whatever the order", () => {
    assert.deepStrictEqual(HookOutcome.merge("PreToolUse", [pre("allow", "a"), pre("deny", "d"), pre("ask", "q")]).permission, {
      decision: "deny",
      reason: "d"
    })
    assert.deepStrictEqual(HookOutcome.merge("PreToolUse", [pre("allow", "a"), pre("ask", "q")]).permission, {
      decision: "ask",
      reason: "q"
    })
  })
  it("exit 2 and decision block deny a tool call; they block the events that can block", () => {
    assert.strictEqual(HookOutcome.merge("PreToolUse", [{ _tag: "Blocking", reason: "x" }]).permission?.decision, "deny")
    const stop = HookOutcome.merge("Stop", [{ _tag: "Blocking", reason: "one" }, success({ decision: "block", reason: "two" })])
    assert.strictEqual(stop.blocked, "one\ntwo")
    // SessionStart cannot block: its exit 2 is only shown to the user.
    const start = HookOutcome.merge("SessionStart", [{ _tag: "Blocking", reason: "x" }])
    assert.isUndefined(start.blocked)
    assert.deepStrictEqual(start.notices, ["x"])
  })
  it("additional context is concatenated in order; plain stdout is context for UserPromptSubmit only among these", () => {
    const ctx = (event: "UserPromptSubmit" | "PostToolUse", text: string) =>
      success({ hookSpecificOutput: { hookEventName: event, additionalContext: text } })
    assert.deepStrictEqual(
      HookOutcome.merge("UserPromptSubmit", [ctx("UserPromptSubmit", "a"), success(undefined, "b"), ctx("UserPromptSubmit", "c")]).context,
      ["a", "b", "c"]
    )
    assert.deepStrictEqual(HookOutcome.merge("PostToolUse", [ctx("PostToolUse", "a"), success(undefined, "ignored")]).context, ["a"])
    // Another event's hookSpecificOutput is not read.
    assert.deepStrictEqual(HookOutcome.merge("PostToolUse", [ctx("UserPromptSubmit", "x")]).context, [])
  })
  it("continue false stops; system messages and failures are notices; updatedInput is kept", () => {
    const outcome = HookOutcome.merge("PreToolUse", [
      success({ continue: false, stopReason: "enough", systemMessage: "hello user" }),
      { _tag: "NonBlocking", message: "hook 2 failed" },
      success({ hookSpecificOutput: { hookEventName: "PreToolUse", updatedInput: { command: "ls" } } })
    ])
    assert.strictEqual(outcome.stopped, "enough")
    assert.deepStrictEqual(outcome.notices, ["hello user", "hook 2 failed"])
    assert.deepStrictEqual(outcome.updatedInput, { command: "ls" })
  })
})
