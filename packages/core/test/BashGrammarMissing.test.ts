/**
 * When the bash grammar cannot be loaded, Bash rules fail closed: no allow rule matches any
 * command (it asks), and a deny rule still matches when its command's name appears in the text.
 */
import { assert, describe, it } from "@effect/vitest"
import { BashGrammar, Permissions } from "@keel/core"
import { Effect } from "effect"
import { vi } from "vitest"

vi.mock("web-tree-sitter", () => ({
  Parser: { init: () => Promise.reject(new Error("no wasm here")) },
  Language: { load: () => Promise.reject(new Error("no wasm here")) }
}))

const check = (rules: Parameters<typeof Permissions.config>[0], command: string) =>
  Effect.runPromise(
    Permissions.make(Permissions.config(rules).config).check({
      toolName: "Bash",
      input: { command },
      isReadOnly: false,
      toolUseId: "toolu_1",
      cwd: "/work/project"
    })
  )

describe("a bash grammar that fails to load", () => {
  it("leaves every Bash call unanalysable: allow rules never match, deny rules match on the text", async () => {
    await Effect.runPromise(BashGrammar.ready)
    assert.include(BashGrammar.loadFailure() ?? "", "no wasm here")
    assert.strictEqual((await check({ allow: ["Bash(echo:*)"] }, "echo hi"))._tag, "Deny")
    const denied = await check({ allow: ["Bash"], deny: ["Bash(rm:*)"] }, "echo x; r'm' -rf y")
    assert.strictEqual(denied._tag, "Deny")
    assert.include(denied._tag === "Deny" ? denied.message : "", "the rule Bash(rm:*) denies it")
    assert.strictEqual((await check({ allow: ["Bash"], deny: ["Bash(rm:*)"] }, "ls"))._tag, "Allow")
  })
})
