/**
 * End to end: memory files as Claude Code loads them, through the real `keel -p` against the
 * loopback fake API. The user's `~/.claude/CLAUDE.md` (a fresh HOME), the project's `CLAUDE.md`
 * with an `@docs/extra.md` import (and one in a code span, not followed) and its `CLAUDE.local.md`
 * reach the request in Claude Code's order; a `Read` of `sub/file.txt` brings `sub/CLAUDE.md` into
 * the next request once, after the tool result, and neither a second Read nor a resumed session
 * sends it again.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Message } from "@keel/core"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, lines, run, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

/** A git repository with memory files, and a HOME of its own holding the user's `~/.claude/CLAUDE.md`. */
const setup = () => {
  const dir = fs.realpathSync(workdir())
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: dir, env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null" } })
  const home = path.join(dir, ".home")
  write(path.join(home, ".claude", "CLAUDE.md"), "USER MEMORY: answer briefly.\n")
  write(path.join(dir, "CLAUDE.md"), "PROJECT MEMORY: see @docs/extra.md and not `@docs/span.md`.\n")
  write(path.join(dir, "docs", "extra.md"), "IMPORTED EXTRA: run npm test.\n")
  write(path.join(dir, "docs", "span.md"), "NEVER IMPORTED\n")
  write(path.join(dir, "CLAUDE.local.md"), "LOCAL MEMORY: my sandbox is at /tmp/x.\n")
  write(path.join(dir, "sub", "CLAUDE.md"), "SUB MEMORY: files here are generated.\n")
  write(path.join(dir, "sub", "file.txt"), "sub file\n")
  write(path.join(dir, "sub", "other.txt"), "other file\n")
  return { dir, env: (server: FakeAnthropic.FakeAnthropic) => ({ ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home"), HOME: home }) }
}

const read = (file: string, id: string) =>
  FakeAnthropic.toolUseReply([new Message.ToolUseBlock({ id, name: "Read", input: { file_path: file } })])

/** How many times `text` occurs in the request's messages. */
const countIn = (request: FakeAnthropic.RecordedRequest, text: string) => JSON.stringify(request.body.messages).split(text).length - 1

describe("keel: memory files", () => {
  it("the user's CLAUDE.md, the project's with its @import, then CLAUDE.local.md reach the system prompt in that order; a code span is not an import", async () => {
    const { dir, env } = setup()
    const server = await fake([FakeAnthropic.textReply("ok")])
    const r = await run(["-p", "go", "--output-format", "stream-json"], { env: env(server), cwd: dir })
    assert.strictEqual(r.code, 0, r.stderr)
    const system = server.requests[0]!.body.system.map((b: { text: string }) => b.text).join("\n")
    const at = [
      `Contents of ${path.join(dir, ".home", ".claude", "CLAUDE.md")} (the user's own instructions`,
      "USER MEMORY: answer briefly.",
      `Contents of ${path.join(dir, "CLAUDE.md")} (project instructions`,
      "PROJECT MEMORY: see @docs/extra.md",
      `Contents of ${path.join(dir, "docs", "extra.md")} (project instructions, checked into the codebase; imported by ${path.join(dir, "CLAUDE.md")})`,
      "IMPORTED EXTRA: run npm test.",
      `Contents of ${path.join(dir, "CLAUDE.local.md")} (the user's private instructions for this project`,
      "LOCAL MEMORY: my sandbox is at /tmp/x."
    ].map((part) => system.indexOf(part))
    assert.isTrue(at.every((i) => i >= 0), `missing: ${JSON.stringify(at)}`)
    assert.deepStrictEqual(at, [...at].sort((a, b) => a - b))
    assert.include(system, "the one listed later wins")
    assert.notInclude(system, "NEVER IMPORTED")
    // sub/CLAUDE.md is below the working directory: not at start.
    assert.notInclude(system, "SUB MEMORY")
  })

  it("a Read of sub/file.txt brings sub/CLAUDE.md after its tool result, once; a second Read and a resumed session do not send it again", async () => {
    const { dir, env } = setup()
    const server = await fake([
      read("sub/file.txt", "toolu_1"),
      read(path.join(dir, "sub", "other.txt"), "toolu_2"),
      FakeAnthropic.textReply("done")
    ])
    const r = await run(["-p", "go", "--output-format", "stream-json"], { env: env(server), cwd: dir })
    assert.strictEqual(r.code, 0, r.stderr)
    const [first, second, third] = server.requests
    assert.strictEqual(countIn(first!, "SUB MEMORY"), 0)
    // The request after the Read: its user message holds the tool result, then the memory block.
    const last = second!.body.messages.at(-1)
    assert.strictEqual(last.role, "user")
    assert.deepStrictEqual(last.content.map((b: { type: string }) => b.type), ["tool_result", "text"])
    assert.strictEqual(last.content[0].tool_use_id, "toolu_1")
    assert.include(last.content[1].text, `<system-reminder>\nInstructions from ${path.join(dir, "sub", "CLAUDE.md")}\n`)
    assert.include(last.content[1].text, "SUB MEMORY: files here are generated.")
    // The second Read in the same folder: its result alone; the memory is in the conversation once.
    assert.deepStrictEqual(third!.body.messages.at(-1).content.map((b: { type: string }) => b.type), ["tool_result"])
    assert.strictEqual(countIn(third!, "SUB MEMORY"), 1)

    // Resumed: the transcript knows sub/CLAUDE.md was sent.
    const sessionId = lines(r.stdout).find((m) => m.type === "system" && m.subtype === "init").session_id
    const again = await fake([read("sub/file.txt", "toolu_3"), FakeAnthropic.textReply("done again")])
    const resumed = await run(["-p", "go on", "--output-format", "stream-json", "--resume", sessionId], { env: env(again), cwd: dir })
    assert.strictEqual(resumed.code, 0, resumed.stderr)
    const after = again.requests[1]!
    assert.deepStrictEqual(after.body.messages.at(-1).content.map((b: { type: string }) => b.type), ["tool_result"])
    assert.strictEqual(countIn(after, "SUB MEMORY"), 1)
  }, 120_000)
})
