/**
 * End to end: the system prompt and tool definitions the real `keel` binary sends to the fake API,
 * and the stable prefix that lets the prompt cache hold. In a git repository: a session of two user
 * turns (the first with a Read round, so three requests), a commit that changes what git says, then
 * `--resume`. Every request's body, as raw bytes, is the same from its start through the end of the
 * system prompt (thinking, model, max_tokens, tools, system), within the session and across the
 * resume: the resumed session sends the recorded prompt (`TurnEnvelope`), not one assembled again.
 * The stable block is the base instructions of `packages/core/src/prompt/text` verbatim, and the
 * tools are the definitions `packages/tools/test/__snapshots__/tool-definitions.json` pins.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { BaseInstructions, SessionStore } from "@keel/core"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, gitRepository, lines, run, userLine } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const model = "claude-sonnet-4-6"
const text = (value: string) => FakeAnthropic.textReply(value, { model })
const readme = FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "README.md" }, id: "toolu_read" }], { model })

/** The raw request body from its start through the end of the system prompt (`messages` comes next). */
const prefixOf = (raw: string): string => {
  const end = raw.indexOf(",\"messages\":")
  assert.isAbove(end, 0, "the body has messages after its system prompt")
  return raw.slice(0, end)
}

const withoutBreakpoints = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value, (k, v) => (k === "cache_control" ? undefined : v)))

describe("keel's system prompt and tools, as sent", { timeout: 120_000 }, () => {
  it("byte-identical through the end of the system prompt: every turn of a session, and after --resume", async () => {
    const { dir, git } = gitRepository()
    const home = fs.mkdtempSync(path.join(os.tmpdir(), "keel-home-"))
    fs.writeFileSync(path.join(dir, "AGENTS.md"), "Answer in one sentence.\n")

    // One session, two user turns (the first reads a file): three requests.
    const first = await fake([readme, text("It counts sheep."), text("Three lines.")])
    const streamJson = ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--model", model]
    const one = await run(streamJson, {
      env: { ...envFor(first), KEEL_HOME: home },
      cwd: dir,
      stdin: [userLine("what does it count?"), userLine("how long is it?")].map((l) => JSON.stringify(l)).join("\n") + "\n"
    })
    assert.strictEqual(one.code, 0, one.stderr)
    const sessionId = lines(one.stdout)[0].session_id as string
    assert.strictEqual(first.requests.length, 3)

    // git now says something else; the resumed session still sends what it sent.
    git("add", "AGENTS.md")
    git("commit", "-q", "-m", "the rules")
    const second = await fake([text("Nothing else.")])
    const two = await run(["-p", "and then?", "--resume", sessionId, "--output-format", "stream-json", "--verbose", "--model", model], {
      env: { ...envFor(second), KEEL_HOME: home },
      cwd: dir
    })
    assert.strictEqual(two.code, 0, two.stderr)
    assert.isTrue(fs.existsSync(path.join(home, "projects", SessionStore.slug(dir), `${sessionId}.jsonl`)))

    const requests = [...first.requests, ...second.requests]
    const prefix = prefixOf(requests[0]!.raw)
    for (const [i, request] of requests.entries()) {
      assert.strictEqual(prefixOf(request.raw), prefix, `request ${i}: the bytes through the end of the system prompt`)
    }
    // The messages grew behind that prefix: the resumed request carries the whole conversation.
    assert.strictEqual(requests[3]!.body.messages.length, requests[2]!.body.messages.length + 2)

    const body = requests[0]!.body
    // The stable block: the base instructions verbatim, closed by a breakpoint; then this session's part.
    assert.strictEqual(body.system[0].text, BaseInstructions.text)
    assert.deepStrictEqual(body.system[0].cache_control, { type: "ephemeral" })
    const dynamic = body.system.slice(1).map((b: any) => b.text).join("\n\n")
    assert.include(dynamic, "Answer in one sentence.")
    assert.include(dynamic, `- Working directory: ${dir}`)
    assert.include(dynamic, "- Git repository: yes")
    assert.include(dynamic, "- Shell (Bash tool): bash")
    assert.include(dynamic, "- Model: you run on Sonnet 4.6 (model id `claude-sonnet-4-6`)")
    assert.include(dynamic, "- Knowledge cutoff: August 2025.")
    assert.include(dynamic, "?? AGENTS.md")
    // The tools: the pinned definitions (the last one carries the tools' breakpoint).
    const pinned = JSON.parse(
      fs.readFileSync(path.join(import.meta.dirname, "..", "packages", "tools", "test", "__snapshots__", "tool-definitions.json"), "utf8")
    )
    assert.deepStrictEqual(withoutBreakpoints(body.tools), pinned)
  })
})
