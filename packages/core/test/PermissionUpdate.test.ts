import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as PermissionRule from "../src/permission/PermissionRule.js"
import * as Permissions from "../src/permission/Permissions.js"
import * as PermissionUpdate from "../src/permission/PermissionUpdate.js"

const base = Permissions.config({ allow: ["Read"], deny: ["Bash(rm:*)"], additionalDirectories: ["/srv/a"] }).config
const texts = (rules: ReadonlyArray<PermissionRule.Rule>) => rules.map(PermissionRule.format)

describe("PermissionUpdate.apply", () => {
  it("adds (without duplicates), replaces and removes rules of one behaviour", () => {
    const added = PermissionUpdate.apply(base, [
      { type: "addRules", behavior: "allow", destination: "session", rules: [{ toolName: "Bash", ruleContent: "npm test" }, { toolName: "Read" }] }
    ], { cwd: "/w", bypassAllowed: false })
    assert.deepStrictEqual(texts(added.config.allow), ["Read", "Bash(npm test)"])
    const replaced = PermissionUpdate.apply(added.config, [
      { type: "replaceRules", behavior: "deny", destination: "session", rules: [{ toolName: "Write" }] }
    ], { cwd: "/w", bypassAllowed: false })
    assert.deepStrictEqual(texts(replaced.config.deny), ["Write"])
    const removed = PermissionUpdate.apply(replaced.config, [
      { type: "removeRules", behavior: "allow", destination: "session", rules: [{ toolName: "Read" }] }
    ], { cwd: "/w", bypassAllowed: false })
    assert.deepStrictEqual(texts(removed.config.allow), ["Bash(npm test)"])
    assert.deepStrictEqual(removed.refused, [])
  })

  it("refuses a switch into bypassPermissions unless allowed, and rules that do not parse", () => {
    const refused = PermissionUpdate.apply(base, [
      { type: "setMode", mode: "bypassPermissions", destination: "session" },
      { type: "addRules", behavior: "allow", destination: "session", rules: [{ toolName: "not a tool name!" }] },
      { type: "setMode", mode: "acceptEdits", destination: "session" }
    ], { cwd: "/w", bypassAllowed: false })
    assert.strictEqual(refused.config.mode, "acceptEdits")
    assert.deepStrictEqual(texts(refused.config.allow), ["Read"])
    assert.strictEqual(refused.refused.length, 2)
    const allowed = PermissionUpdate.apply(base, [{ type: "setMode", mode: "bypassPermissions", destination: "session" }], {
      cwd: "/w",
      bypassAllowed: true
    })
    assert.strictEqual(allowed.config.mode, "bypassPermissions")
  })

  it("adds and removes directories, resolved against the working directory", () => {
    const added = PermissionUpdate.apply(base, [
      { type: "addDirectories", directories: ["../b", "/srv/a"], destination: "session" }
    ], { cwd: "/w/x", bypassAllowed: false })
    assert.deepStrictEqual(added.config.additionalDirectories, ["/srv/a", "/w/b"])
    const removed = PermissionUpdate.apply(added.config, [
      { type: "removeDirectories", directories: ["/srv/a"], destination: "session" }
    ], { cwd: "/w/x", bypassAllowed: false })
    assert.deepStrictEqual(removed.config.additionalDirectories, ["/w/b"])
  })
})

describe("PermissionUpdate.suggestionsFor", () => {
  it("edits suggest acceptEdits for the session; Bash suggests exactly its command; others the tool", () => {
    assert.deepStrictEqual(PermissionUpdate.suggestionsFor("Write", { file_path: "a" }), [
      { type: "setMode", mode: "acceptEdits", destination: "session" }
    ])
    assert.deepStrictEqual(PermissionUpdate.suggestionsFor("Bash", { command: " npm test " }), [
      { type: "addRules", rules: [{ toolName: "Bash", ruleContent: "npm test" }], behavior: "allow", destination: "localSettings" }
    ])
    assert.deepStrictEqual(PermissionUpdate.suggestionsFor("Bash", { command: "echo $(id)" }), [], "a rule cannot hold parentheses")
    assert.deepStrictEqual(PermissionUpdate.suggestionsFor("mcp__s__t", {}), [
      { type: "addRules", rules: [{ toolName: "mcp__s__t" }], behavior: "allow", destination: "localSettings" }
    ])
    assert.deepStrictEqual(PermissionUpdate.suggestionsFor("AskUserQuestion", {}), [])
  })
})

describe("Permissions with updatedPermissions", () => {
  const request = (command: string): Permissions.Request => ({
    toolName: "Bash",
    input: { command },
    isReadOnly: false,
    toolUseId: "t",
    cwd: "/w"
  })

  it.effect("an allow's updates apply before later checks; those for settings files go to persist", () =>
    Effect.gen(function*() {
      const asked: Array<string> = []
      const persisted: Array<unknown> = []
      const policy = Permissions.makeAsking(
        Permissions.config({}).config,
        (r) =>
          Effect.sync(() => {
            asked.push((r.input as { command: string }).command)
            return Permissions.decisionOf({
              behavior: "allow",
              updatedPermissions: PermissionUpdate.suggestionsFor(r.toolName, r.input)
            })
          }),
        { persist: (updates, cwd) => Effect.sync(() => void persisted.push({ updates, cwd })) }
      )
      assert.strictEqual((yield* policy.check(request("make build")))._tag, "Allow")
      assert.strictEqual((yield* policy.check(request("make build")))._tag, "Allow")
      assert.strictEqual((yield* policy.check(request("make build; rm -rf x")))._tag, "Allow", "asked again, and allowed")
      assert.deepStrictEqual(asked, ["make build", "make build; rm -rf x"], "the remembered rule covers exactly its command")
      assert.deepStrictEqual(texts(policy.config.allow), ["Bash(make build)", "Bash(make build; rm -rf x)"])
      assert.strictEqual(persisted.length, 2)
    }))

  it("an allow with updates that are not valid denies the call", () => {
    const decision = Permissions.decisionOf({ behavior: "allow", updatedPermissions: [{ type: "setMode", mode: "auto", destination: "session" }] })
    assert.strictEqual(decision._tag, "Deny")
    assert.include((decision as { message: string }).message, "updatedPermissions are not valid")
    const garbage = Permissions.decisionOf({ behavior: "allow", updatedPermissions: [42] })
    assert.strictEqual(garbage._tag, "Deny")
  })
})
