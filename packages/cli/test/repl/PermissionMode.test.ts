import { assert, describe, it } from "@effect/vitest"
import type { Permissions } from "@keel/core"
import * as PermissionMode from "../../src/repl/PermissionMode.js"
import * as Style from "../../src/repl/Style.js"

describe("PermissionMode", () => {
  it("cycles default → acceptEdits → plan → default; through bypassPermissions only when the session may use it", () => {
    const cycle = (bypass: boolean) => {
      const seen: Array<Permissions.Mode> = ["default"]
      for (let i = 0; i < 4; i++) seen.push(PermissionMode.next(seen.at(-1)!, bypass))
      return seen
    }
    assert.deepStrictEqual(cycle(false), ["default", "acceptEdits", "plan", "default", "acceptEdits"])
    assert.deepStrictEqual(cycle(true), ["default", "acceptEdits", "plan", "bypassPermissions", "default"])
    assert.strictEqual(PermissionMode.next("dontAsk", false), "default")
  })

  it("shows a row for every mode but the default", () => {
    const plain = Style.make(false)
    assert.isUndefined(PermissionMode.indicator("default", plain))
    assert.strictEqual(PermissionMode.indicator("acceptEdits", plain), "⏵⏵ accept edits on (shift+tab to cycle)")
    assert.strictEqual(PermissionMode.indicator("plan", plain), "⏸ plan mode on (shift+tab to cycle)")
  })
})
