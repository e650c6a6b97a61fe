/**
 * End to end: folder trust with the real `keel` binary. The REPL in a folder the user has not
 * trusted asks first, and on "no" exits before anything of the folder runs (its hooks, its MCP
 * servers, git under its configuration, a request to the API); "yes" is remembered in
 * `$KEEL_HOME/trusted-folders.json` and covers subfolders. Headless runs trust their folder.
 * (From a pipe, the first line answers; the terminal's one-key answer has unit tests.)
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, run, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

/** A folder whose settings, MCP servers and git configuration all leave a marker when they run. */
const hostileFolder = () => {
  const dir = fs.realpathSync(workdir())
  const marker = (name: string) => path.join(path.dirname(dir), `${path.basename(dir)}-${name}`)
  fs.mkdirSync(path.join(dir, ".keel"))
  fs.writeFileSync(
    path.join(dir, ".keel", "settings.json"),
    JSON.stringify({
      hooks: {
        SessionStart: [{ hooks: [{ type: "command", command: `touch ${marker("hook-session")}` }] }],
        UserPromptSubmit: [{ hooks: [{ type: "command", command: `touch ${marker("hook-prompt")}` }] }]
      }
    })
  )
  fs.writeFileSync(
    path.join(dir, ".mcp.json"),
    JSON.stringify({ mcpServers: { evil: { command: "sh", args: ["-c", `touch ${marker("mcp")}`] } } })
  )
  execFileSync("git", ["init", "-q"], { cwd: dir })
  execFileSync("git", ["config", "core.fsmonitor", `touch ${marker("git")}; false`], { cwd: dir })
  const markers = () => ["hook-session", "hook-prompt", "mcp", "git"].filter((m) => fs.existsSync(marker(m)))
  return { dir, home: marker("keel-home"), markers }
}

const QUESTION = "Do you trust the files in this folder?"

describe("keel folder trust", () => {
  it("the REPL in a new folder asks; no exits with 1 before any of the folder's code runs or the API is called", async () => {
    const { dir, home, markers } = hostileFolder()
    const server = await fake([FakeAnthropic.textReply("hello")])
    const r = await run([], { env: { ...envFor(server), KEEL_HOME: home }, cwd: dir, stdin: "n\nhi\n", trust: false })
    assert.strictEqual(r.code, 1, r.stderr)
    assert.include(r.stdout, QUESTION)
    assert.include(r.stdout, dir)
    assert.strictEqual(server.requests.length, 0)
    assert.deepStrictEqual(markers(), [])
    assert.isFalse(fs.existsSync(path.join(home, "trusted-folders.json")))
  })

  it("yes is remembered: the next run, and a run in a subfolder, do not ask", async () => {
    const { dir, home, markers } = hostileFolder()
    const server = await fake([FakeAnthropic.textReply("first answer"), FakeAnthropic.textReply("second answer"), FakeAnthropic.textReply("third")])
    const env = { ...envFor(server), KEEL_HOME: home }
    const first = await run([], { env, cwd: dir, stdin: "y\nhi\n", trust: false })
    assert.strictEqual(first.code, 0, first.stderr)
    assert.include(first.stdout, QUESTION)
    assert.include(first.stdout, "first answer")
    assert.deepStrictEqual(JSON.parse(fs.readFileSync(path.join(home, "trusted-folders.json"), "utf8")).folders, [dir])
    // Trusted, the folder's hooks run (so the markers above do detect them).
    assert.include(markers(), "hook-prompt")

    const again = await run([], { env, cwd: dir, stdin: "hi\n", trust: false })
    assert.strictEqual(again.code, 0, again.stderr)
    assert.notInclude(again.stdout, QUESTION)
    assert.include(again.stdout, "second answer")

    fs.mkdirSync(path.join(dir, "sub"))
    const sub = await run([], { env, cwd: path.join(dir, "sub"), stdin: "hi\n", trust: false })
    assert.notInclude(sub.stdout, QUESTION)
  })

  it("a folder beside a trusted one is not covered by it", async () => {
    const trusted = hostileFolder()
    const other = hostileFolder()
    fs.mkdirSync(other.home, { recursive: true })
    fs.writeFileSync(path.join(other.home, "trusted-folders.json"), JSON.stringify({ folders: [trusted.dir] }))
    const server = await fake([FakeAnthropic.textReply("hello")])
    const r = await run([], { env: { ...envFor(server), KEEL_HOME: other.home }, cwd: other.dir, stdin: "\n", trust: false })
    assert.strictEqual(r.code, 1)
    assert.include(r.stdout, QUESTION)
    assert.deepStrictEqual(other.markers(), [])
  })

  it("headless (-p) trusts its folder, as Claude Code's -p does: no question", async () => {
    const { dir, home } = hostileFolder()
    const server = await fake([FakeAnthropic.textReply("headless answer")])
    const r = await run(["-p", "hi"], { env: { ...envFor(server), KEEL_HOME: home }, cwd: dir, trust: false })
    assert.strictEqual(r.code, 0, r.stderr)
    assert.notInclude(r.stdout, QUESTION)
    assert.include(r.stdout, "headless answer")
  })
})
