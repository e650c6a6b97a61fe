/**
 * End to end: in-process MCP servers of a Claude Agent SDK host (`createSdkMcpServer`), with the
 * real SDK's `query()` running the built `keel` (and, where it is installed, Claude Code's own
 * binary, to show both behave the same) against the loopback fake Messages API. The server's tool
 * runs in this (the host's) process, reached over the control channel (`mcp_message`); its result
 * reaches the model; `mcpServerStatus()` and `system`/`init` list the server connected; the tool
 * is governed by permissions like any MCP tool. And the host's `control_cancel_request`, and a
 * control request Keel does not know, through the raw stream-json protocol.
 */
import { createSdkMcpServer, query, tool } from "@anthropic-ai/claude-agent-sdk"
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { z } from "zod"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, keel, live, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const TIMEOUT = 90_000

const claudeCode = path.resolve(import.meta.dirname, "..", "node_modules", "@anthropic-ai", "claude-agent-sdk-linux-x64", "claude")

/** The CLIs the SDK runs: keel always, Claude Code's binary when it is installed (else skipped, saying why). */
const clis: ReadonlyArray<{ readonly name: string; readonly path: string }> = [
  { name: "keel", path: keel },
  ...(fs.existsSync(claudeCode) ? [{ name: "Claude Code", path: claudeCode }] : [])
]
if (clis.length === 1) console.log(`Claude Code's binary is not installed at ${claudeCode}: its comparison runs are skipped`)

/** A host's calculator server: `add` runs here, in the test's process, and records its calls. */
const calculator = () => {
  const calls: Array<{ a: number; b: number }> = []
  const server = createSdkMcpServer({
    name: "calc",
    version: "1.2.3",
    tools: [
      tool("add", "Adds two numbers", { a: z.number(), b: z.number() }, async ({ a, b }) => {
        calls.push({ a, b })
        return { content: [{ type: "text", text: `${a} + ${b} = ${a + b}` }] }
      })
    ]
  })
  return { server, calls }
}

/** The environment of a run of `cli` in `dir` against `server` (a fresh HOME for Claude Code). */
const envOf = (cli: string, dir: string, server: FakeAnthropic.FakeAnthropic) => {
  const home = path.join(dir, ".home")
  fs.mkdirSync(home, { recursive: true })
  return {
    ...process.env,
    ...envFor(server),
    KEEL_HOME: path.join(dir, ".keel-home"),
    ...(cli === keel ? {} : { HOME: home, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" })
  }
}

/** The text of the tool_result for `toolUseId` in the API request `body` (string or text blocks). */
const toolResultText = (body: any, toolUseId: string): { text: string; isError: boolean } => {
  const block = body.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : []))
    .find((b: any) => b.type === "tool_result" && b.tool_use_id === toolUseId)
  assert.isDefined(block, `a tool_result for ${toolUseId}`)
  const text = typeof block.content === "string" ? block.content : block.content.map((c: any) => c.text ?? "").join("")
  return { text, isError: block.is_error === true }
}

describe("in-process SDK MCP servers (createSdkMcpServer) under the Agent SDK's query()", () => {
  for (const cli of clis) {
    it(`${cli.name}: the model calls mcp__calc__add, it runs in the host, its result reaches the model; the server is listed connected`, async () => {
      const dir = workdir()
      const api = await fake([
        FakeAnthropic.toolUseReply([{ name: "mcp__calc__add", input: { a: 2, b: 3 }, id: "toolu_add" }]),
        FakeAnthropic.textReply("it is 5")
      ])
      const { calls, server } = calculator()
      const q = query({
        prompt: "what is 2 + 3?",
        options: {
          pathToClaudeCodeExecutable: cli.path,
          cwd: dir,
          env: envOf(cli.path, dir, api),
          mcpServers: { calc: server },
          allowedTools: ["mcp__calc__add"]
        }
      })
      const messages: Array<any> = []
      let status: Array<any> = []
      for await (const message of q) {
        messages.push(message)
        if (message.type === "system" && message.subtype === "init") status = await q.mcpServerStatus()
      }
      const init = messages.find((m) => m.type === "system" && m.subtype === "init")
      assert.include(init.tools, "mcp__calc__add")
      assert.deepInclude(init.mcp_servers.map((s: any) => ({ name: s.name, status: s.status })), { name: "calc", status: "connected" })
      assert.deepStrictEqual(
        status.map((s) => ({ name: s.name, status: s.status, serverInfo: s.serverInfo })),
        [{ name: "calc", status: "connected", serverInfo: { name: "calc", version: "1.2.3" } }]
      )
      assert.deepStrictEqual(calls, [{ a: 2, b: 3 }], "the tool ran once, in the host's process")
      assert.strictEqual(api.requests.length, 2)
      // (Claude Code defers MCP tools behind its ToolSearch; Keel offers them in every request.)
      if (cli.path === keel) assert.include(api.requests[0]!.body.tools.map((t: any) => t.name), "mcp__calc__add")
      assert.deepStrictEqual(toolResultText(api.requests[1]!.body, "toolu_add"), { text: "2 + 3 = 5", isError: false })
      const result = messages.find((m) => m.type === "result")
      assert.strictEqual(result.subtype, "success")
      assert.strictEqual(result.result, "it is 5")
    }, TIMEOUT)

    it(`${cli.name}: without an allow rule the call is the host's canUseTool to decide; a denial never reaches the tool`, async () => {
      const dir = workdir()
      const api = await fake([
        FakeAnthropic.toolUseReply([{ name: "mcp__calc__add", input: { a: 1, b: 1 }, id: "toolu_no" }]),
        FakeAnthropic.textReply("denied, fine")
      ])
      const { calls, server } = calculator()
      const asked: Array<string> = []
      const q = query({
        prompt: "add",
        options: {
          pathToClaudeCodeExecutable: cli.path,
          cwd: dir,
          env: envOf(cli.path, dir, api),
          mcpServers: { calc: server },
          canUseTool: async (toolName) => {
            asked.push(toolName)
            return { behavior: "deny", message: "the host says no sums today" }
          }
        }
      })
      for await (const _ of q) {
        // run to the end
      }
      assert.deepStrictEqual(asked, ["mcp__calc__add"])
      assert.deepStrictEqual(calls, [])
      const denied = toolResultText(api.requests[1]!.body, "toolu_no")
      assert.include(denied.text, "the host says no sums today")
      assert.isTrue(denied.isError)
    }, TIMEOUT)
  }
})

describe("the control channel, raw: control_cancel_request from the host, and requests Keel does not know", () => {
  const streamJson = ["--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]

  it("the host cancels its initialize while Keel connects its server: the start stops, the server's request is withdrawn, exit 1", async () => {
    const api = await fake([FakeAnthropic.textReply("never")])
    const keelRun = live(streamJson, { env: envFor(api) })
    // No captured handshake: Keel's MCP client asks the host's server to initialize, through the host.
    keelRun.send({ type: "control_request", request_id: "init_1", request: { subtype: "initialize", sdkMcpServers: ["slow"] } })
    const [asked] = (await keelRun.waitFor((ms) => ms.some((m) => m.type === "control_request"))).filter((m) =>
      m.type === "control_request"
    )
    assert.strictEqual(asked.request.subtype, "mcp_message")
    assert.strictEqual(asked.request.server_name, "slow")
    assert.strictEqual(asked.request.message.method, "initialize")
    keelRun.send({ type: "control_cancel_request", request_id: "init_1" })
    const r = await keelRun.done
    assert.strictEqual(r.code, 1)
    const out = keelRun.messages()
    assert.deepInclude(out, { type: "control_cancel_request", request_id: asked.request_id })
    const answer = out.find((m) => m.type === "control_response")
    assert.deepStrictEqual(answer.response, {
      subtype: "error",
      request_id: "init_1",
      error: "cancelled by the host (control_cancel_request) before it was answered"
    })
    assert.include(r.stderr, "the host cancelled its initialize while the session started; nothing ran")
    assert.strictEqual(api.requests.length, 0)
  }, TIMEOUT)

  it("the host's server answers through the channel (no captured handshake); a cancel for nothing in flight is said on stderr; an unknown subtype gets an error response", async () => {
    const api = await fake([FakeAnthropic.textReply("hello")])
    const keelRun = live(streamJson, { env: envFor(api) })
    keelRun.send({ type: "control_request", request_id: "init_1", request: { subtype: "initialize", sdkMcpServers: ["calc"] } })
    // Play the host's server by hand, as the SDK does: a request's answer is the server's response
    // with its id; a notification is acknowledged with an empty result.
    const answer = async (method: string, result: unknown) => {
      const request = (await keelRun.waitFor((ms) =>
        ms.some((m) => m.type === "control_request" && m.request.message?.method === method)
      )).find((m) => m.type === "control_request" && m.request.message?.method === method)
      const id = request.request.message.id ?? 0
      keelRun.send({
        type: "control_response",
        response: { subtype: "success", request_id: request.request_id, response: { mcp_response: { jsonrpc: "2.0", id, result } } }
      })
    }
    await answer("initialize", { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "calc", version: "0.1.0" } })
    await answer("notifications/initialized", {})
    await answer("tools/list", { tools: [{ name: "add", inputSchema: { type: "object" } }] })
    await keelRun.waitFor((ms) => ms.some((m) => m.type === "control_response" && m.response.request_id === "init_1"))
    keelRun.send({ type: "control_request", request_id: "status_1", request: { subtype: "mcp_status" } })
    keelRun.send({ type: "control_cancel_request", request_id: "status_1" })
    keelRun.send({ type: "control_request", request_id: "odd_1", request: { subtype: "no_such_request" } })
    keelRun.send({ type: "control_cancel_request", request_id: "never_sent" })
    keelRun.send({ type: "user", message: { role: "user", content: "hi" }, parent_tool_use_id: null })
    await keelRun.waitFor((ms) => ms.some((m) => m.type === "result"))
    keelRun.end()
    const r = await keelRun.done
    assert.strictEqual(r.code, 0)
    const out = keelRun.messages()
    const init = out.find((m) => m.type === "system" && m.subtype === "init")
    assert.deepStrictEqual(init.mcp_servers, [{ name: "calc", status: "connected" }])
    assert.include(init.tools, "mcp__calc__add")
    const responses = new Map(out.filter((m) => m.type === "control_response").map((m) => [m.response.request_id, m.response]))
    assert.strictEqual(responses.get("init_1").subtype, "success")
    // mcp_status was read ahead and cancelled before its turn (or answered first, when the reader was quicker).
    const status = responses.get("status_1")
    assert.isDefined(status, "exactly one answer for status_1")
    if (status.subtype === "error") assert.include(status.error, "cancelled by the host")
    const odd = responses.get("odd_1")
    assert.deepInclude(odd, { subtype: "error", request_id: "odd_1" })
    assert.include(odd.error, "Keel does not support the control request \"no_such_request\" (only initialize, interrupt")
    assert.strictEqual(out.filter((m) => m.type === "control_response" && m.response.request_id === "status_1").length, 1)
    assert.include(r.stderr, "control_cancel_request for never_sent: no request of that id waits or runs; nothing to cancel")
    assert.strictEqual(api.requests.length, 1)
  }, TIMEOUT)
})
