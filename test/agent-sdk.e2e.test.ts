/**
 * End to end: the real Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`) runs `keel` as its CLI
 * (`pathToClaudeCodeExecutable`), against the loopback fake of the Messages API. The SDK starts it
 * as `--output-format stream-json --verbose --input-format stream-json [--permission-prompt-tool=stdio]`
 * (no -p), sends `initialize`, then user messages, and answers `can_use_tool` requests with the
 * host's `canUseTool`. What the SDK can ask in `initialize` that Keel does not do yet is refused,
 * so the host sees an error instead of an option silently ignored. (The cases Claude Code's own
 * binary runs too are in agent-sdk-parity.e2e.test.ts.)
 */
import { query } from "@anthropic-ai/claude-agent-sdk"
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, keel, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const TIMEOUT = 60_000

/** Runs the SDK's `query()` on `keel` in `dir`, collecting every message (or the error it throws). */
const run = async (
  dir: string,
  server: FakeAnthropic.FakeAnthropic,
  options: Parameters<typeof query>[0]["options"] = {}
): Promise<{ messages: Array<any>; error: Error | undefined }> => {
  const messages: Array<any> = []
  let error: Error | undefined
  const q = query({
    prompt: "go",
    options: {
      pathToClaudeCodeExecutable: keel,
      cwd: dir,
      env: { ...process.env, ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home") },
      ...options
    }
  })
  try {
    for await (const message of q) messages.push(message)
  } catch (e) {
    error = e as Error
  }
  return { messages, error }
}

describe("keel under the Claude Agent SDK's query()", () => {
  it("streaming input: setModel between turns switches the next request's model; mcpServerStatus lists the servers", async () => {
    const dir = workdir()
    const server = await fake([FakeAnthropic.textReply("first"), FakeAnthropic.textReply("second")])
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    async function* input() {
      yield { type: "user" as const, message: { role: "user" as const, content: "one" }, parent_tool_use_id: null }
      await gate
      yield { type: "user" as const, message: { role: "user" as const, content: "two" }, parent_tool_use_id: null }
    }
    const q = query({
      prompt: input(),
      options: { pathToClaudeCodeExecutable: keel, cwd: dir, env: { ...process.env, ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home") } }
    })
    const results: Array<any> = []
    for await (const message of q) {
      if (message.type !== "result") continue
      results.push(message)
      if (results.length === 1) {
        await q.setModel("claude-haiku-4-5")
        assert.deepStrictEqual(await q.mcpServerStatus(), [])
        release()
      }
      if (results.length === 2) break
    }
    assert.deepStrictEqual(results.map((r) => r.result), ["first", "second"])
    assert.deepStrictEqual(server.requests.map((r) => r.body.model), ["claude-sonnet-4-6", "claude-haiku-4-5"])
  }, TIMEOUT)

  it("setPermissionMode: acceptEdits lets the next Write run; bypassPermissions is refused", async () => {
    const dir = workdir()
    const server = await fake([
      FakeAnthropic.toolUseReply([{ name: "Write", input: { file_path: "before.txt", content: "x" }, id: "toolu_w1" }]),
      FakeAnthropic.textReply("denied, fine"),
      FakeAnthropic.toolUseReply([{ name: "Write", input: { file_path: "after.txt", content: "y" }, id: "toolu_w2" }]),
      FakeAnthropic.textReply("written")
    ])
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    async function* input() {
      yield { type: "user" as const, message: { role: "user" as const, content: "write before" }, parent_tool_use_id: null }
      await gate
      yield { type: "user" as const, message: { role: "user" as const, content: "write after" }, parent_tool_use_id: null }
    }
    const q = query({
      prompt: input(),
      options: { pathToClaudeCodeExecutable: keel, cwd: dir, env: { ...process.env, ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home") } }
    })
    let refusal: string | undefined
    let results = 0
    for await (const message of q) {
      if (message.type !== "result") continue
      results++
      if (results === 1) {
        await q.setPermissionMode("bypassPermissions").catch((e: Error) => (refusal = e.message))
        await q.setPermissionMode("acceptEdits")
        release()
      }
      if (results === 2) break
    }
    assert.isFalse(fs.existsSync(path.join(dir, "before.txt")), "default mode: the Write is denied")
    assert.strictEqual(fs.readFileSync(path.join(dir, "after.txt"), "utf8"), "y")
    assert.include(refusal, "Switching to permission mode bypassPermissions was refused")
  }, TIMEOUT)

  it("initialize options Keel does not do are refused, naming them (a host hook is never silently skipped)", async () => {
    const dir = workdir()
    const server = await fake([FakeAnthropic.textReply("never")])
    const { error } = await run(dir, server, {
      hooks: { PostToolUseFailure: [{ hooks: [async () => ({ decision: "block", reason: "no" })] }] }
    })
    assert.isDefined(error)
    assert.include(error!.message, "Keel cannot run these hooks: hooks.PostToolUseFailure")
    assert.strictEqual(server.requests.length, 0, "nothing ran")
  }, TIMEOUT)
})
