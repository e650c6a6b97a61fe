/**
 * The session flags as parsed: `--resume`/`-r`, `--continue`/`-c`, `--fork-session`,
 * `--resume-session-at`, `--session-id`, `--no-session-persistence`, and the combinations that are
 * usage errors.
 */
import { assert, describe, it } from "@effect/vitest"
import { parse } from "../src/Flags.js"

const flags = (...argv: Array<string>) => {
  const parsed = parse(["-p", "x", ...argv], "0.0.0")
  if (parsed._tag !== "Run") throw new Error(`expected flags, got exit ${parsed.code}: ${parsed.stderr}`)
  return parsed.flags
}

const usage = (...argv: Array<string>) => {
  const parsed = parse(["-p", "x", ...argv], "0.0.0")
  if (parsed._tag !== "Exit") throw new Error("expected a usage error")
  assert.strictEqual(parsed.code, 2)
  const lines = parsed.stderr.split("\n")
  assert.strictEqual(lines[1], "Run keel --help for usage.")
  return lines[0]!
}

describe("session flags", () => {
  it("default: a new saved session; -r/-c and the rest as given", () => {
    const none = flags()
    assert.deepStrictEqual(
      [none.resume, none.continue, none.forkSession, none.sessionId, none.sessionPersistence],
      [undefined, false, false, undefined, true]
    )
    assert.strictEqual(flags("-r", "abc").resume, "abc")
    assert.isTrue(flags("-c").continue)
    const fork = flags("--continue", "--fork-session", "--session-id", "123e4567-e89b-12d3-a456-426614174000")
    assert.deepStrictEqual([fork.continue, fork.forkSession, fork.sessionId], [true, true, "123e4567-e89b-12d3-a456-426614174000"])
    assert.isFalse(flags("--no-session-persistence").sessionPersistence)
    assert.strictEqual(none.resumeSessionAt, undefined)
    const at = flags("-r", "abc", "--fork-session", "--resume-session-at", "m-1")
    assert.deepStrictEqual([at.resume, at.forkSession, at.resumeSessionAt], ["abc", true, "m-1"])
    assert.strictEqual(flags("-c", "--fork-session", "--resume-session-at", "m-1").resumeSessionAt, "m-1")
  })

  it("combinations that cannot work are usage errors, each one line", () => {
    assert.match(usage("--resume", "a", "--continue"), /^keel: --resume and --continue cannot be used together/)
    assert.match(usage("-r", "a", "-c"), /^keel: --resume and --continue cannot be used together/)
    assert.match(usage("--fork-session"), /^keel: --fork-session needs --resume <id> or --continue/)
    assert.match(usage("--session-id", "42"), /^keel: --session-id must be a UUID/)
    assert.match(usage("--resume", "a", "--session-id", "123e4567-e89b-12d3-a456-426614174000"), /needs --fork-session/)
    assert.match(usage("--resume", "a/b"), /^keel: --resume needs a session id/)
    assert.match(usage("--resume-session-at", "m-1", "--fork-session"), /^keel: --resume-session-at needs --resume <id> \(or --continue\)/)
    assert.match(usage("-r", "a", "--resume-session-at", "m-1"), /^keel: --resume-session-at needs --fork-session: .*\(add --fork-session\)\.$/)
    assert.match(usage("-r", "a", "--fork-session", "--resume-session-at", " "), /^keel: --resume-session-at needs the uuid of a user or assistant message/)
  })
})
