/**
 * The settings flags as the Agent SDK passes them (`--setting-sources=project`, `--setting-sources=`
 * for none, `--settings <json or path>`, `--allow-dangerously-skip-permissions`): parsed and
 * honoured, not refused; a source that does not exist is a usage error naming the sources.
 */
import { assert, describe, it } from "@effect/vitest"
import { Flags } from "@keel/cli"

const run = (argv: ReadonlyArray<string>) => {
  const parsed = Flags.parse(argv, "0.0.0")
  if (parsed._tag !== "Run") throw new Error(`expected flags, got exit ${parsed.code}: ${parsed.stderr}`)
  return parsed.flags
}

describe("settings flags", () => {
  it("--setting-sources in both forms, empty for none; absent means all", () => {
    assert.deepStrictEqual(run(["-p", "x", "--setting-sources=project"]).settingSources, ["project"])
    assert.deepStrictEqual(run(["-p", "x", "--setting-sources", "user,local"]).settingSources, ["user", "local"])
    assert.deepStrictEqual(run(["-p", "x", "--setting-sources="]).settingSources, [])
    assert.deepStrictEqual(run(["-p", "x", "--setting-sources", ""]).settingSources, [])
    assert.isUndefined(run(["-p", "x"]).settingSources)
  })

  it("--settings takes JSON text or a path; --allow-dangerously-skip-permissions keeps the mode given", () => {
    assert.strictEqual(run(["-p", "x", "--settings", "{\"model\":\"m\"}"]).settings, "{\"model\":\"m\"}")
    assert.strictEqual(run(["-p", "x", "--settings", "conf/settings.json"]).settings, "conf/settings.json")
    const flags = run(["-p", "x", "--allow-dangerously-skip-permissions", "--permission-mode", "plan"])
    assert.isTrue(flags.allowDangerouslySkipPermissions)
    assert.strictEqual(flags.permissionMode, "plan")
    assert.isFalse(run(["-p", "x"]).allowDangerouslySkipPermissions)
  })

  it("a source that does not exist is a usage error naming the sources", () => {
    const parsed = Flags.parse(["-p", "x", "--setting-sources", "user,policy"], "0.0.0")
    assert.strictEqual(parsed._tag === "Exit" && parsed.code, 2)
    assert.include(parsed._tag === "Exit" ? parsed.stderr : "", "--setting-sources names no settings source policy; the sources are user, project, local.")
  })
})
