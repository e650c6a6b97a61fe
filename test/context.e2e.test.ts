/**
 * End to end: what the real `keel` binary tells the model, against the loopback fake API: the
 * assembled system prompt in a git repository (base instructions, then the instruction files, git
 * and environment), `--system-prompt` / `--append-system-prompt`, and the prompt-cache breakpoints
 * (`DISABLE_PROMPT_CACHING` turns them off).
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, gitRepository, run, runStreamJson } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const MARK = `"cache_control":{"type":"ephemeral"}`

/** {@link gitRepository} with a KEEL.md. */
const repository = (): string => {
  const { dir } = gitRepository()
  fs.writeFileSync(path.join(dir, "KEEL.md"), "Count every sheep twice.\n")
  return dir
}

describe("keel: the system prompt and prompt caching", () => {
  it("in a git repository: base instructions (cached), instruction files, git and environment, then --append-system-prompt", async () => {
    const dir = repository()
    fs.mkdirSync(path.join(dir, ".keel-home"))
    fs.writeFileSync(path.join(dir, ".keel-home", "KEEL.md"), "The user prefers short answers.\n")
    const t = await runStreamJson(dir, [FakeAnthropic.textReply("ok")], ["--append-system-prompt", "Answer in haiku."])
    assert.strictEqual(t.code, 0)
    const body = t.server.requests[0]!.body
    const system: Array<any> = body.system
    assert.strictEqual(system.length, 4)
    assert.match(system[0].text, /^You are Keel/)
    assert.deepStrictEqual(system[0].cache_control, { type: "ephemeral" })
    assert.include(system[1].text, `Contents of ${path.join(dir, "KEEL.md")}`)
    assert.include(system[1].text, "Count every sheep twice.")
    assert.include(system[1].text, "The user prefers short answers.")
    assert.include(system[2].text, `Working directory: ${dir}`)
    assert.include(system[2].text, "Current branch: main")
    assert.include(system[2].text, "the README")
    assert.include(system[2].text, "?? KEEL.md")
    assert.deepStrictEqual(system[3], { type: "text", text: "Answer in haiku." })
    // Three breakpoints: the last tool, the stable system block, the prompt.
    assert.strictEqual(t.server.requests[0]!.raw.split(MARK).length - 1, 3)
    assert.deepStrictEqual(body.tools.at(-1).cache_control, { type: "ephemeral" })
    assert.deepStrictEqual(body.messages[0].content, [{ type: "text", text: "go", cache_control: { type: "ephemeral" } }])
  })

  it("--system-prompt with --append-system-prompt replaces the default, then extends it; DISABLE_PROMPT_CACHING=1 sends no breakpoint", async () => {
    const dir = repository()
    const server = await fake([FakeAnthropic.textReply("ok")])
    const r = await run(["-p", "go", "--system-prompt", "Be brief.", "--append-system-prompt", "Answer in haiku."], {
      env: { ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home"), DISABLE_PROMPT_CACHING: "1" },
      cwd: dir
    })
    assert.strictEqual(r.code, 0)
    const request = server.requests[0]!
    assert.deepStrictEqual(request.body.system, [{ type: "text", text: "Be brief." }, { type: "text", text: "Answer in haiku." }])
    assert.notInclude(request.raw, "cache_control")
    assert.deepStrictEqual(request.body.messages, [{ role: "user", content: "go" }])
  })
})
