/**
 * Flag parsing: permission rules as Claude Code takes them, and usage errors.
 */
import { assert, describe, it } from "@effect/vitest"
import { Flags } from "@keel/cli"
import { BuiltinTools } from "@keel/tools"

const run = (argv: ReadonlyArray<string>) => {
  const parsed = Flags.parse(argv, "0.0.0")
  if (parsed._tag !== "Run") throw new Error(`expected flags, got exit ${parsed.code}: ${parsed.stderr}`)
  return parsed.flags
}

describe("Flags", () => {
  it("splits rule lists on commas and spaces, but not inside a rule's parentheses", () => {
    assert.deepStrictEqual(Flags.splitRules(["Read,Edit", "Bash(git commit -m x:*) Glob", "mcp__fs"]), [
      "Read",
      "Edit",
      "Bash(git commit -m x:*)",
      "Glob",
      "mcp__fs"
    ])
  })

  it("--allowedTools and --disallowedTools take several values; --dangerously-skip-permissions is bypassPermissions", () => {
    const flags = run(["-p", "hi", "--allowedTools", "Read,Bash(npm test:*)", "--disallowedTools", "Bash(rm:*)"])
    assert.deepStrictEqual([flags.allowedTools, flags.disallowedTools], [["Read", "Bash(npm test:*)"], ["Bash(rm:*)"]])
    assert.strictEqual(flags.prompt, "hi")
    assert.strictEqual(run(["-p", "x", "--dangerously-skip-permissions"]).permissionMode, "bypassPermissions")
    assert.strictEqual(run(["-p", "x", "--permission-mode", "plan"]).permissionMode, "plan")
  })

  it("an unknown permission mode is a usage error naming the choices", () => {
    const parsed = Flags.parse(["-p", "x", "--permission-mode", "yolo"], "0.0.0")
    assert.strictEqual(parsed._tag, "Exit")
    if (parsed._tag === "Exit") {
      assert.strictEqual(parsed.code, 2)
      assert.include(parsed.stderr, "acceptEdits")
    }
  })

  it("--tools picks built-in tools by name; an unknown name is a usage error listing the tools", () => {
    assert.deepStrictEqual(run(["-p", "x", "--tools", "Read,Grep"]).tools, ["Read", "Grep"])
    assert.deepStrictEqual(run(["-p", "x", "--tools", ""]).tools, [])
    assert.strictEqual(run(["-p", "x"]).tools, undefined)
    const parsed = Flags.parse(["-p", "x", "--tools", "Read,Teleport"], "0.0.0")
    assert.strictEqual(parsed._tag === "Exit" && parsed.code, 2)
    assert.include(parsed._tag === "Exit" ? parsed.stderr : "", "--tools names no built-in tool Teleport")
    // The names the parser knows are the tools that exist.
    assert.deepStrictEqual(Flags.builtinToolNames, BuiltinTools.names)
  })
})
