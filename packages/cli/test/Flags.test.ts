/**
 * Flag parsing: permission rules as Claude Code takes them, and usage errors.
 */
import { assert, describe, it } from "@effect/vitest"
import { Flags } from "@keel/cli"

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
})
