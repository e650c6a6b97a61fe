/**
 * End to end: Bash permission rules of the real `keel` binary cannot be smuggled past. Under
 * `--allowedTools 'Bash(echo:*)'` the fake model asks for commands that hide a second command or a
 * file write (ANSI-C quoting, a comment swallowing a quote, redirect targets, substitutions, ...):
 * each is denied and nothing it hid runs, while a plain `echo` runs. A deny rule catches its command
 * however it is spelled or wrapped.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, runStreamJson, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

/** Smuggling attempts; each would create a file named `pwned*` (or `1file`) if it ran. */
const SMUGGLED: ReadonlyArray<string> = [
  "echo $'\\''; touch pwned1; echo ''",
  "echo hi #'\ntouch pwned2 #'",
  "echo hi >/dev/null/../../tmp/../dev/nullx; touch pwned3",
  "echo hi >./pwned4",
  "echo hi >&1file",
  "echo hi > /dev/nullfoo 2>pwned5",
  "echo $(touch pwned6)",
  "echo `touch pwned7`",
  "echo <(touch pwned8)",
  "echo hi; $'\\x74ouch' pwned9",
  "echo hi && (touch pwned10)",
  "echo() { touch pwned11; }; echo hi",
  "PATH=. echo hi; touch pwned12",
  "echo hi\\\n;touch pwned13",
  "echo \"$(touch pwned14)\""
]

const results = (request: { body: any }): ReadonlyArray<any> => request.body.messages.at(-1).content

describe("keel Bash rules on the shell syntax tree", () => {
  it("Bash(echo:*) denies every smuggling attempt (nothing hidden runs) and runs a plain echo", async () => {
    const dir = workdir()
    const calls = [...SMUGGLED, "echo hi from echo"].map((command, i) => ({ name: "Bash", input: { command }, id: `toolu_${i}` }))
    const t = await runStreamJson(dir, [FakeAnthropic.toolUseReply(calls), FakeAnthropic.textReply("done")], [
      "--allowedTools",
      "Bash(echo:*)"
    ])
    assert.strictEqual(t.code, 0)
    assert.deepStrictEqual(fs.readdirSync(dir).filter((f) => f.includes("pwned") || f === "1file"), [])
    const byId = new Map(results(t.server.requests[1]!).map((r: any) => [r.tool_use_id, r]))
    SMUGGLED.forEach((command, i) => {
      const r = byId.get(`toolu_${i}`)
      assert.isTrue(r?.is_error, `${JSON.stringify(command)} must be denied`)
      assert.include(String(r?.content), "Permission to use Bash was denied")
    })
    const echoed = byId.get(`toolu_${SMUGGLED.length}`)
    assert.notStrictEqual(echoed?.is_error, true)
    assert.include(JSON.stringify(echoed?.content), "hi from echo")
    assert.deepStrictEqual(
      t.messages.at(-1).permission_denials.map((d: any) => d.tool_use_id).sort(),
      SMUGGLED.map((_, i) => `toolu_${i}`).sort()
    )
  })

  it("a deny rule catches its command spelled in quotes, behind a wrapper or inside a substitution", async () => {
    const dir = workdir()
    const attempts = ["$'\\x72m' README.md", "r\\m README.md", "env rm README.md", "echo $(rm README.md)", "bash -c 'rm README.md'"]
    const calls = attempts.map((command, i) => ({ name: "Bash", input: { command }, id: `toolu_${i}` }))
    const t = await runStreamJson(dir, [FakeAnthropic.toolUseReply(calls), FakeAnthropic.textReply("done")], [
      "--allowedTools",
      "Bash",
      "--disallowedTools",
      "Bash(rm:*)"
    ])
    assert.strictEqual(t.code, 0)
    assert.isTrue(fs.existsSync(path.join(dir, "README.md")))
    assert.strictEqual(t.messages.at(-1).permission_denials.length, attempts.length)
  })
})
