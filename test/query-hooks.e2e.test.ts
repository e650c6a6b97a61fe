/**
 * `query()`'s `hooks` option, in process against the loopback fake of the Messages API: the same
 * callback hooks as an Agent SDK host's, with the same behaviour as through the CLI (a PreToolUse
 * deny reaches the model; hooks for an event Keel does not fire are refused by name).
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { type Query, query } from "@keel/cli"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, fake, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const TIMEOUT = 60_000

const envFor = (server: FakeAnthropic.FakeAnthropic, dir: string): Record<string, string> => ({
  ANTHROPIC_BASE_URL: server.url,
  ANTHROPIC_API_KEY: "test-key",
  KEEL_HOME: path.join(dir, ".keel-home")
})

const collect = async (q: AsyncIterable<Query.SDKMessage>): Promise<Array<Query.SDKMessage>> => {
  const out: Array<Query.SDKMessage> = []
  for await (const m of q) out.push(m)
  return out
}

describe("query() hooks", () => {
  it("a PreToolUse callback's deny blocks the Bash call; the reason reaches the model; the input is Claude Code's", async () => {
    const dir = workdir()
    const server = await fake([
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "echo no > denied.txt" }, id: "toolu_q" }]),
      FakeAnthropic.textReply("ok then")
    ])
    const inputs: Array<any> = []
    const messages = await collect(query({
      prompt: "go",
      options: {
        cwd: dir,
        env: envFor(server, dir),
        allowedTools: ["Bash"],
        hooks: {
          PreToolUse: [{
            matcher: "Bash",
            hooks: [async (input) => {
              inputs.push(input)
              return {
                hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "embedder says no" }
              }
            }]
          }]
        }
      }
    }))
    assert.isFalse(fs.existsSync(path.join(dir, "denied.txt")))
    const result = server.requests[1]!.body.messages.at(-1).content[0]
    assert.isTrue(result.is_error)
    assert.include(JSON.stringify(result.content), "embedder says no")
    assert.strictEqual((messages.at(-1) as any).result, "ok then")
    assert.deepInclude(inputs[0], { hook_event_name: "PreToolUse", tool_name: "Bash", tool_use_id: "toolu_q" })
  }, TIMEOUT)

  it("hooks for an event Keel does not fire reject the query, naming it", async () => {
    const dir = workdir()
    const server = await fake([FakeAnthropic.textReply("never")])
    let error: unknown
    try {
      await collect(query({
        prompt: "go",
        options: { cwd: dir, env: envFor(server, dir), hooks: { WorktreeCreate: [{ hooks: [async () => ({})] }] } }
      }))
    } catch (e) {
      error = e
    }
    assert.include(String(error), "hooks.WorktreeCreate: Keel does not fire WorktreeCreate hooks")
    assert.strictEqual(server.requests.length, 0)
  }, TIMEOUT)
})
