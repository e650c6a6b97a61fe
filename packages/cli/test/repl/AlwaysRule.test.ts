import { assert, describe, it } from "@effect/vitest"
import * as AlwaysRule from "../../src/repl/AlwaysRule.js"

describe("AlwaysRule", () => {
  it("a Bash command gives one rule per simple command, added for the session", async () => {
    const always = await AlwaysRule.alwaysFor("Bash", { command: "sleep 3 && touch x" }, "/p")
    assert.deepStrictEqual(always, {
      _tag: "Rules",
      rules: ["Bash(sleep 3)", "Bash(touch x)"],
      update: {
        type: "addRules",
        rules: [{ toolName: "Bash", ruleContent: "sleep 3" }, { toolName: "Bash", ruleContent: "touch x" }],
        behavior: "allow",
        destination: "session"
      }
    })
    assert.strictEqual(AlwaysRule.describe(always), "Bash(sleep 3), Bash(touch x)")
  })

  it("a file edit gives a rule for that file; another tool, the tool", async () => {
    const edit = await AlwaysRule.alwaysFor("Edit", { file_path: "/p/src/main.ts", old_string: "a", new_string: "b" }, "/p")
    assert.strictEqual(AlwaysRule.describe(edit), "Edit(./src/main.ts)")
    const outside = await AlwaysRule.alwaysFor("Write", { file_path: "/etc/x.conf", content: "" }, "/p")
    assert.strictEqual(AlwaysRule.describe(outside), "Write(//etc/x.conf)")
    assert.strictEqual(AlwaysRule.describe(await AlwaysRule.alwaysFor("WebFetch", { url: "https://x" }, "/p")), "WebFetch")
  })

  it("a call no rule can spell is allowed again only as written", async () => {
    for (const command of ["echo $(whoami)", "echo 'a b'", "echo hi > out.txt"]) {
      const always = await AlwaysRule.alwaysFor("Bash", { command }, "/p")
      assert.deepStrictEqual(always, { _tag: "ExactCall", key: AlwaysRule.exactKey("Bash", { command }) }, command)
      assert.strictEqual(AlwaysRule.describe(always), "this exact call")
    }
    const glob = await AlwaysRule.alwaysFor("Edit", { file_path: "/p/src/[id].ts", old_string: "a", new_string: "b" }, "/p")
    assert.strictEqual(glob._tag, "ExactCall")
  })
})
