import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as SavedPermissions from "../../src/settings/SavedPermissions.js"

describe("SavedPermissions", () => {
  it("applyTo keeps the file's other keys and adds rules, mode and directories", () => {
    const out = SavedPermissions.applyTo({ model: "m", permissions: { allow: ["Read"], deny: ["Write"] } }, [
      { type: "addRules", behavior: "allow", destination: "localSettings", rules: [{ toolName: "Bash", ruleContent: "ls" }, { toolName: "Read" }] },
      { type: "removeRules", behavior: "deny", destination: "localSettings", rules: [{ toolName: "Write" }] },
      { type: "setMode", mode: "acceptEdits", destination: "localSettings" },
      { type: "addDirectories", directories: ["/d"], destination: "localSettings" }
    ])
    assert.deepStrictEqual(out, {
      model: "m",
      permissions: { allow: ["Read", "Bash(ls)"], deny: [], defaultMode: "acceptEdits", additionalDirectories: ["/d"] }
    })
  })

  it.effect("save writes each destination's file (session ones nowhere), and never overwrites a file that is not an object", () =>
    Effect.gen(function*() {
      const home = fs.mkdtempSync(path.join(os.tmpdir(), "saved-home-"))
      const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "saved-cwd-"))
      const rule = (destination: "localSettings" | "userSettings" | "session") =>
        ({ type: "addRules", behavior: "allow", destination, rules: [{ toolName: "Bash", ruleContent: "ls" }] }) as const
      yield* SavedPermissions.save(home)([rule("localSettings"), rule("userSettings"), rule("session")], cwd)
      const local = JSON.parse(fs.readFileSync(path.join(cwd, ".keel", "settings.local.json"), "utf8"))
      assert.deepStrictEqual(local, { permissions: { allow: ["Bash(ls)"] } })
      const user = JSON.parse(fs.readFileSync(path.join(home, "settings.json"), "utf8"))
      assert.deepStrictEqual(user, { permissions: { allow: ["Bash(ls)"] } })
      assert.isFalse(fs.existsSync(path.join(cwd, ".keel", "settings.json")))
      fs.writeFileSync(path.join(cwd, ".keel", "settings.json"), "[1, 2]")
      const failed = yield* Effect.flip(SavedPermissions.save(home)([{ ...rule("session"), destination: "projectSettings" }], cwd))
      assert.include(failed.message, "is not a JSON object; not overwritten")
      assert.strictEqual(fs.readFileSync(path.join(cwd, ".keel", "settings.json"), "utf8"), "[1, 2]")
    }))
})
