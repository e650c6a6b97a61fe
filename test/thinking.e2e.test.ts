/**
 * End to end: thinking and effort through the built `keel` binary (`-p`, and under the real Claude
 * Agent SDK's `query()`), and through Keel's own in-process `query()`, against the loopback fake of
 * the Messages API, which streams thinking blocks in the real wire format (`content_block_start`
 * type thinking, `thinking_delta`, `signature_delta`). The request bodies and headers are checked;
 * where practical the same SDK case runs against Claude Code's own binary to compare.
 */
import { query as sdkQuery } from "@anthropic-ai/claude-agent-sdk"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { query as keelQuery } from "@keel/cli"
import { Message } from "@keel/core"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, keel, run, runStreamJson, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const TIMEOUT = 90_000

const claudeCode = path.resolve(
  import.meta.dirname,
  "..",
  "node_modules",
  "@anthropic-ai",
  "claude-agent-sdk-linux-x64",
  "claude"
)

const CONTEXT_MANAGEMENT = { edits: [{ type: "clear_thinking_20251015", keep: "all" }] }

/** A reply in the request's own model (thinking blocks go back only to the model that wrote them). */
const reply = (content: ReadonlyArray<Message.ContentBlock | FakeAnthropic.ToolCall>, stop?: "tool_use"): FakeAnthropic.ScriptFunction =>
  (body) =>
    stop === "tool_use"
      ? FakeAnthropic.toolUseReply(content, { model: body.model })
      : FakeAnthropic.sseFromMessage(FakeAnthropic.message(content as ReadonlyArray<Message.ContentBlock>, { model: body.model }))

const thinking = new Message.ThinkingBlock({ thinking: "The README should say what this is.", signature: "c2lnbmF0dXJlLTE=" })
const text = (t: string) => new Message.TextBlock({ text: t })

/** The thinking fields of a recorded request. */
const fieldsOf = (request: FakeAnthropic.RecordedRequest) => ({
  thinking: request.body.thinking,
  output_config: request.body.output_config,
  context_management: request.body.context_management,
  max_tokens: request.body.max_tokens
})

const betasOf = (request: FakeAnthropic.RecordedRequest): Array<string> =>
  String(request.headers["anthropic-beta"] ?? "").split(",").filter((b) => b.length > 0)

describe("keel -p: the thinking flags in the request", () => {
  it("--effort high on claude-sonnet-4-6: adaptive thinking, output_config.effort, context management and their betas", async () => {
    const dir = workdir()
    const r = await runStreamJson(dir, [reply([text("ok")])], ["--model", "claude-sonnet-4-6", "--effort", "high"])
    assert.strictEqual(r.code, 0, r.stderr)
    assert.deepStrictEqual(fieldsOf(r.server.requests[0]!), {
      thinking: { type: "adaptive" },
      output_config: { effort: "high" },
      context_management: CONTEXT_MANAGEMENT,
      max_tokens: 32000
    })
    assert.includeMembers(betasOf(r.server.requests[0]!), [
      "interleaved-thinking-2025-05-14",
      "context-management-2025-06-27",
      "effort-2025-11-24"
    ])
  }, TIMEOUT)

  it("--max-thinking-tokens 4096: the budget on claude-sonnet-4-5, on/off on claude-sonnet-4-6", async () => {
    const older = await runStreamJson(workdir(), [reply([text("ok")])], ["--model", "claude-sonnet-4-5", "--max-thinking-tokens", "4096"])
    assert.strictEqual(older.code, 0, older.stderr)
    assert.deepStrictEqual(fieldsOf(older.server.requests[0]!), {
      thinking: { type: "enabled", budget_tokens: 4096 },
      output_config: undefined,
      context_management: CONTEXT_MANAGEMENT,
      max_tokens: 32000
    })
    const adaptive = await runStreamJson(workdir(), [reply([text("ok")])], ["--model", "claude-sonnet-4-6", "--max-thinking-tokens", "4096"])
    assert.deepStrictEqual(adaptive.server.requests[0]!.body.thinking, { type: "adaptive" })
  }, TIMEOUT)

  it("--thinking disabled (and --max-thinking-tokens 0): thinking off, the effort still sent, no context management", async () => {
    for (const flags of [["--thinking", "disabled"], ["--max-thinking-tokens", "0"]]) {
      const r = await runStreamJson(workdir(), [reply([text("ok")])], ["--model", "claude-sonnet-4-6", ...flags])
      assert.strictEqual(r.code, 0, r.stderr)
      assert.deepStrictEqual(fieldsOf(r.server.requests[0]!), {
        thinking: { type: "disabled" },
        output_config: { effort: "high" },
        context_management: undefined,
        max_tokens: 32000
      }, flags.join(" "))
      assert.notInclude(betasOf(r.server.requests[0]!), "context-management-2025-06-27")
    }
  }, TIMEOUT)

  it("MAX_THINKING_TOKENS is the budget when no flag gives one; an invalid value stops with exit 2 naming it", async () => {
    const dir = workdir()
    const server = await fake([reply([text("ok")]), reply([text("ok")])])
    const env = { ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home"), MAX_THINKING_TOKENS: "2048" }
    const args = ["-p", "go", "--output-format", "stream-json", "--verbose", "--model", "claude-sonnet-4-5"]
    const fromEnv = await run(args, { env, cwd: dir })
    assert.strictEqual(fromEnv.code, 0, fromEnv.stderr)
    assert.deepStrictEqual(server.requests[0]!.body.thinking, { type: "enabled", budget_tokens: 2048 })
    const flagWins = await run([...args, "--max-thinking-tokens", "3000"], { env, cwd: dir })
    assert.strictEqual(flagWins.code, 0, flagWins.stderr)
    assert.deepStrictEqual(server.requests[1]!.body.thinking, { type: "enabled", budget_tokens: 3000 })
    const bad = await run(args, { env: { ...env, MAX_THINKING_TOKENS: "lots" }, cwd: dir })
    assert.strictEqual(bad.code, 2)
    assert.include(bad.stderr, "MAX_THINKING_TOKENS")
    assert.strictEqual(server.requests.length, 2)
  }, TIMEOUT)

  it("bad values are refused with exit 2, nothing sent", async () => {
    const dir = workdir()
    for (const flags of [["--max-thinking-tokens", "-5"], ["--effort", "extreme"], ["--thinking", "sometimes"]]) {
      const r = await runStreamJson(dir, [], ["--model", "claude-sonnet-4-6", ...flags])
      assert.strictEqual(r.code, 2, flags.join(" "))
      assert.include(r.stderr, flags[0]!)
      assert.strictEqual(r.server.requests.length, 0)
    }
  }, TIMEOUT)
})

describe("keel -p: thinking blocks", () => {
  it("a tool round: the thinking block is shown in the assistant message, sent back with its signature, not in the result", async () => {
    const dir = workdir()
    const r = await runStreamJson(dir, [
      reply([thinking, { name: "Read", input: { file_path: "README.md" }, id: "toolu_read_1" }], "tool_use"),
      reply([text("It counts sheep.")])
    ], ["--model", "claude-sonnet-4-6"])
    assert.strictEqual(r.code, 0, r.stderr)
    const second = r.server.requests[1]!.body
    assert.deepStrictEqual(second.messages[1].content[0], {
      type: "thinking",
      thinking: "The README should say what this is.",
      signature: "c2lnbmF0dXJlLTE="
    })
    assert.strictEqual(second.messages[1].content[1].type, "tool_use")
    const assistant = r.messages.find((m) => m.type === "assistant")
    assert.deepStrictEqual(assistant.message.content[0], {
      type: "thinking",
      thinking: "The README should say what this is.",
      signature: "c2lnbmF0dXJlLTE="
    })
    const result = r.messages.find((m) => m.type === "result")
    assert.strictEqual(result.result, "It counts sheep.")
  }, TIMEOUT)

  it("a fallback model gets its own form of thinking and none of the primary model's thinking blocks", async () => {
    const dir = workdir()
    const overloaded = FakeAnthropic.errorReply(529, "overloaded_error", "Overloaded", { "retry-after": "0" })
    const r = await runStreamJson(dir, [
      reply([thinking, { name: "Read", input: { file_path: "README.md" }, id: "toolu_read_1" }], "tool_use"),
      overloaded,
      overloaded,
      overloaded,
      reply([text("It counts sheep.")])
    ], ["--model", "claude-opus-4-6", "--fallback-model", "claude-sonnet-4-5", "--effort", "max"])
    assert.strictEqual(r.code, 0, r.stderr)
    const requests = r.server.requests
    assert.deepStrictEqual(requests.map((q) => q.body.model), [
      "claude-opus-4-6",
      "claude-opus-4-6",
      "claude-opus-4-6",
      "claude-opus-4-6",
      "claude-sonnet-4-5"
    ])
    assert.deepStrictEqual(fieldsOf(requests[1]!).thinking, { type: "adaptive" })
    assert.deepStrictEqual(fieldsOf(requests[1]!).output_config, { effort: "max" })
    assert.strictEqual(requests[1]!.body.messages[1].content[0].type, "thinking")
    assert.deepStrictEqual(fieldsOf(requests[4]!), {
      thinking: { type: "enabled", budget_tokens: 31999 },
      output_config: undefined,
      context_management: CONTEXT_MANAGEMENT,
      max_tokens: 32000
    })
    assert.deepStrictEqual(requests[4]!.body.messages[1].content.map((b: any) => b.type), ["tool_use"])
  }, TIMEOUT)
})

/** Streaming input for the SDK: `first`, then (once `gate` opens) `second`. */
const twoPrompts = (gate: Promise<void>) =>
  async function*() {
    yield { type: "user" as const, message: { role: "user" as const, content: "one" }, parent_tool_use_id: null }
    await gate
    yield { type: "user" as const, message: { role: "user" as const, content: "two" }, parent_tool_use_id: null }
  }

/**
 * Runs two turns through the Agent SDK on `executable` with `options`, calling
 * `setMaxThinkingTokens(between)` between them; the fake's requests.
 */
const sdkTwoTurns = async (
  executable: string,
  env: Record<string, string | undefined>,
  dir: string,
  server: FakeAnthropic.FakeAnthropic,
  options: Record<string, unknown>,
  between: number | null
) => {
  let release: () => void = () => {}
  const gate = new Promise<void>((resolve) => (release = resolve))
  const q = sdkQuery({
    prompt: twoPrompts(gate)(),
    options: { pathToClaudeCodeExecutable: executable, cwd: dir, env: { ...process.env, ...env }, ...options } as any
  })
  const results: Array<any> = []
  for await (const message of q) {
    if (message.type !== "result") continue
    results.push(message)
    if (results.length === 1) {
      await q.setMaxThinkingTokens(between)
      release()
    }
    if (results.length === 2) break
  }
  return { results, requests: server.requests.filter((r) => Array.isArray(r.body.messages)) }
}

describe("keel under the Claude Agent SDK's query(): thinking", () => {
  it("maxThinkingTokens is the first turn's budget; setMaxThinkingTokens(0) turns thinking off for the next", async () => {
    const dir = workdir()
    const server = await fake([reply([thinking, text("first")]), reply([text("second")])])
    const env = { ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home") }
    const { requests, results } = await sdkTwoTurns(keel, env, dir, server, {
      model: "claude-sonnet-4-5",
      maxThinkingTokens: 4096
    }, 0)
    assert.deepStrictEqual(results.map((r) => r.result), ["first", "second"])
    assert.deepStrictEqual(requests.map((r) => r.body.thinking), [{ type: "enabled", budget_tokens: 4096 }, { type: "disabled" }])
    // The first answer's thinking block is in the second request, unchanged.
    assert.deepStrictEqual(requests[1]!.body.messages[1].content[0], {
      type: "thinking",
      thinking: "The README should say what this is.",
      signature: "c2lnbmF0dXJlLTE="
    })
  }, TIMEOUT)

  it("thinking {type: enabled, budgetTokens} and effort; setMaxThinkingTokens(null) goes back to the model's default", async () => {
    const dir = workdir()
    const server = await fake([reply([text("first")]), reply([text("second")])])
    const env = { ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home") }
    const { requests } = await sdkTwoTurns(keel, env, dir, server, {
      model: "claude-opus-4-5",
      thinking: { type: "enabled", budgetTokens: 2048 },
      effort: "low"
    }, null)
    assert.deepStrictEqual(requests.map(fieldsOf), [
      {
        thinking: { type: "enabled", budget_tokens: 2048 },
        output_config: { effort: "low" },
        context_management: CONTEXT_MANAGEMENT,
        max_tokens: 32000
      },
      {
        thinking: { type: "enabled", budget_tokens: 31999 },
        output_config: { effort: "low" },
        context_management: CONTEXT_MANAGEMENT,
        max_tokens: 32000
      }
    ])
  }, TIMEOUT)

  it.skipIf(!fs.existsSync(claudeCode))(
    "the same case against Claude Code's own binary sends the same thinking fields",
    async () => {
      const fields = async (executable: string, env: (server: FakeAnthropic.FakeAnthropic, dir: string) => Record<string, string>) => {
        const dir = workdir()
        const server = await fake([reply([text("first")]), reply([text("second")])])
        const { requests } = await sdkTwoTurns(executable, env(server, dir), dir, server, {
          model: "claude-sonnet-4-5",
          maxThinkingTokens: 4096
        }, 0)
        return requests.map((r) => ({ model: r.body.model, thinking: r.body.thinking, context: r.body.context_management }))
      }
      const ours = await fields(keel, (server, dir) => ({ ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home") }))
      const theirs = await fields(claudeCode, (server) => ({
        ...envFor(server),
        HOME: fs.mkdtempSync(path.join(os.tmpdir(), "claude-home-")),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"
      }))
      assert.deepStrictEqual(ours, theirs.map((t) => ({ ...t, thinking: withoutDisplay(t.thinking) })))
    },
    TIMEOUT * 2
  )
})

/** Claude Code's thinking config without its `display` (a newer beta Keel does not send). */
const withoutDisplay = (thinking: any) => {
  if (thinking === undefined || thinking === null) return thinking
  const { display: _, ...rest } = thinking
  return rest
}

describe("Keel's own query(): thinking", () => {
  it("thinking, effort and setMaxThinkingTokens() between turns, as through the CLI", async () => {
    const dir = workdir()
    const server = await fake([reply([text("first")]), reply([text("second")])])
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    const q = keelQuery({
      prompt: twoPrompts(gate)(),
      options: {
        cwd: dir,
        model: "claude-sonnet-4-6",
        thinking: { type: "adaptive" },
        effort: "medium",
        env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test-key", KEEL_HOME: path.join(dir, ".keel-home") }
      }
    })
    let results = 0
    for await (const message of q) {
      if (message.type !== "result") continue
      results++
      if (results === 1) {
        await q.setMaxThinkingTokens(0)
        release()
      }
      if (results === 2) break
    }
    assert.deepStrictEqual(server.requests.map((r) => [r.body.thinking, r.body.output_config]), [
      [{ type: "adaptive" }, { effort: "medium" }],
      [{ type: "disabled" }, { effort: "medium" }]
    ])
  }, TIMEOUT)

  it("a thinking display or a bad budget is refused by name", async () => {
    const collect = async (options: Record<string, unknown>) => {
      try {
        for await (const _ of keelQuery({ prompt: "go", options: { cwd: workdir(), ...options } })) {
          // nothing should come
        }
        return undefined
      } catch (e) {
        return (e as Error).message
      }
    }
    assert.include(await collect({ thinking: { type: "adaptive", display: "omitted" } }), "thinking.display")
    assert.include(await collect({ maxThinkingTokens: -1 }), "maxThinkingTokens")
    assert.include(await collect({ effort: "extreme" }), "effort")
  }, TIMEOUT)
})
