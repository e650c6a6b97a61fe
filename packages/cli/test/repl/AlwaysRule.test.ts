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

  it("what 'always' offers for an attacker's spellings: every command the call runs, each spelt as it runs, or only this exact call", async () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      // A comment runs nothing: the rm after # is no command, and no rule names it.
      ["echo hi # && rm -rf x", "Bash(echo hi)"],
      // A newline or ; separates commands: each needs its own rule, shown to the user.
      ["echo hi\nrm -rf x", "Bash(echo hi), Bash(rm -rf x)"],
      ["sleep 1; rm -rf /tmp/x", "Bash(sleep 1), Bash(rm -rf /tmp/x)"],
      // ANSI-C quoting is decoded: the rule is the word as bash passes it.
      ["echo $'\\x72m'", "Bash(echo rm)"],
      // A line continuation joins the words.
      ["ls \\\n -la", "Bash(ls -la)"],
      // A wrapper stays in the rule: `sudo rm x` is not `rm x`.
      ["sudo rm x", "Bash(sudo rm x)"],
      // Substitutions, heredocs, env prefixes and globs cannot be spelt as a rule.
      ["echo `rm x`", "this exact call"],
      ["cat <<EOF\nhi\nEOF", "this exact call"],
      ["FOO=1 rm x", "this exact call"],
      ["rm -rf *", "this exact call"]
    ]
    for (const [command, offered] of cases) {
      assert.strictEqual(AlwaysRule.describe(await AlwaysRule.alwaysFor("Bash", { command }, "/p")), offered, command)
    }
  })
})
