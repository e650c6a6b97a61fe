/**
 * `/init`'s choice of file and instruction, and `Permissions.update` (what `/permissions` puts in
 * force): a rule added allows the next call, a rule removed stops allowing it, a rule that does not
 * parse is refused.
 */
import { assert, describe, it } from "@effect/vitest"
import { Permissions } from "@keel/core"
import { Effect } from "effect"
import * as InitCommand from "../src/input/InitCommand.js"

describe("InitCommand", () => {
  it("writes AGENTS.md where there is none, else improves the AGENTS.md or CLAUDE.md there", () => {
    assert.deepStrictEqual(InitCommand.targetOf([]), { file: "AGENTS.md", exists: false })
    assert.deepStrictEqual(InitCommand.targetOf(["CLAUDE.md"]), { file: "CLAUDE.md", exists: true })
    assert.deepStrictEqual(InitCommand.targetOf([".claude/CLAUDE.md"]), { file: ".claude/CLAUDE.md", exists: true })
    assert.deepStrictEqual(InitCommand.targetOf(["CLAUDE.md", "AGENTS.md"]), { file: "AGENTS.md", exists: true })
    assert.deepStrictEqual(InitCommand.targetOf(["../AGENTS.md"]), { file: "AGENTS.md", exists: false })
  })

  it("tells the model to read an existing file first and to create a new one with Write", () => {
    assert.include(InitCommand.instruction({ file: "CLAUDE.md", exists: true }), "CLAUDE.md already exists: Read it first")
    assert.include(InitCommand.instruction({ file: "AGENTS.md", exists: false }), "Create AGENTS.md at the root of the working directory with the Write tool")
  })
})

describe("Permissions.update", () => {
  const cwd = "/work/project"
  const bash = (command: string): Permissions.Request => ({
    toolName: "Bash",
    input: { command },
    isReadOnly: false,
    toolUseId: "toolu_1",
    cwd
  })

  it.effect("puts a rule in force for the next check, takes it out again, and refuses one that does not parse", () =>
    Effect.gen(function*() {
      const permissions = Permissions.make(Permissions.config({}).config)
      assert.strictEqual((yield* permissions.check(bash("npm test")))._tag, "Deny")
      const rule = { toolName: "Bash", ruleContent: "npm test:*" }
      assert.deepStrictEqual(
        yield* permissions.update([{ type: "addRules", rules: [rule], behavior: "allow", destination: "session" }], cwd),
        []
      )
      assert.strictEqual((yield* permissions.check(bash("npm test")))._tag, "Allow")
      yield* permissions.update([{ type: "removeRules", rules: [rule], behavior: "allow", destination: "session" }], cwd)
      assert.strictEqual((yield* permissions.check(bash("npm test")))._tag, "Deny")
      const refused = yield* permissions.update(
        [{ type: "addRules", rules: [{ toolName: "two words", ruleContent: "x" }], behavior: "allow", destination: "session" }],
        cwd
      )
      assert.strictEqual(refused.length, 1)
      assert.deepStrictEqual(permissions.config.allow, [])
    }))
})
