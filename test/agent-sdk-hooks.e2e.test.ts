/**
 * End to end: the real Claude Agent SDK's callback hooks, with `keel` as its CLI
 * (`pathToClaudeCodeExecutable`) against the loopback fake of the Messages API. The SDK registers
 * them in `initialize`; `keel` asks the host with `hook_callback` control requests and acts on the
 * answers: a PreToolUse callback that denies a Bash call (the reason reaches the model), one that
 * never answers (reported after its timeout; the turn goes on), and hook inputs as Claude Code's.
 */
import { query } from "@anthropic-ai/claude-agent-sdk"
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, keel, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const TIMEOUT = 60_000

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
      allowedTools: ["Bash"],
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

const toolResult = (server: FakeAnthropic.FakeAnthropic, index: number): any =>
  server.requests[index]!.body.messages.flatMap((m: any) =>
    Array.isArray(m.content) ? m.content.filter((b: any) => b.type === "tool_result") : []
  )[0]

const textOf = (content: unknown): string =>
  typeof content === "string" ? content : (content as Array<any>).map((b) => b.text ?? "").join("\n")

describe("keel runs the Agent SDK's callback hooks", () => {
  it("a PreToolUse callback that denies blocks the Bash call; its reason reaches the model", async () => {
    const dir = workdir()
    const server = await fake([
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "echo no > denied.txt" }, id: "toolu_d" }]),
      FakeAnthropic.textReply("understood")
    ])
    const inputs: Array<any> = []
    const { error, messages } = await run(dir, server, {
      hooks: {
        PreToolUse: [{
          matcher: "Bash",
          hooks: [async (input, toolUseId) => {
            inputs.push({ input, toolUseId })
            return {
              hookSpecificOutput: {
                hookEventName: "PreToolUse",
                permissionDecision: "deny",
                permissionDecisionReason: "the host's hook forbids shell commands"
              }
            }
          }]
        }]
      }
    })
    assert.isUndefined(error)
    assert.isFalse(fs.existsSync(path.join(dir, "denied.txt")))
    const result = toolResult(server, 1)
    assert.isTrue(result.is_error)
    assert.include(textOf(result.content), "the host's hook forbids shell commands")
    assert.strictEqual(messages.find((m) => m.type === "result").result, "understood")
    assert.strictEqual(inputs.length, 1)
    assert.strictEqual(inputs[0].toolUseId, "toolu_d")
    assert.deepInclude(inputs[0].input, {
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "echo no > denied.txt" },
      tool_use_id: "toolu_d",
      cwd: fs.realpathSync(dir)
    })
    assert.strictEqual(inputs[0].input.session_id, messages[0].session_id)
  }, TIMEOUT)

  it("a callback that does not answer within its timeout is reported; the call and the turn go on", async () => {
    const dir = workdir()
    const server = await fake([
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "echo yes > ran.txt" }, id: "toolu_r" }]),
      FakeAnthropic.textReply("finished")
    ])
    const started = Date.now()
    const { error, messages } = await run(dir, server, {
      hooks: { PreToolUse: [{ matcher: "Bash", timeout: 1, hooks: [() => new Promise(() => {})] }] }
    })
    assert.isUndefined(error)
    assert.isBelow(Date.now() - started, 30_000)
    assert.strictEqual(fs.readFileSync(path.join(dir, "ran.txt"), "utf8"), "yes\n")
    assert.strictEqual(messages.find((m) => m.type === "result").result, "finished")
  }, TIMEOUT)

  it("hooks for an event Keel does not fire are refused by name at initialize", async () => {
    const dir = workdir()
    const server = await fake([FakeAnthropic.textReply("never")])
    const { error } = await run(dir, server, {
      hooks: { PostToolUseFailure: [{ hooks: [async () => ({})] }] }
    })
    assert.isDefined(error)
    assert.include(String(error), "PostToolUseFailure")
    assert.strictEqual(server.requests.length, 0)
  }, TIMEOUT)
})
