/**
 * End to end: ask → respond over Claude Code's stream-json control protocol, with the real `keel`
 * binary (`--permission-prompt-tool stdio`) against the loopback fake of the Messages API.
 *
 * - A permission ask goes out as a `control_request` (`can_use_tool`), the host's
 *   `control_response` answers it (allow runs the call, deny refuses it).
 * - A process killed while an ask waits (and while input is queued behind it) leaves both in the
 *   transcript: `--resume` asks again with the same request id, and once answered the turn runs on
 *   from its tool call, then the queued input runs.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, live, userLine, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const TIMEOUT = 60_000

const asking = [
  "-p",
  "--input-format",
  "stream-json",
  "--output-format",
  "stream-json",
  "--verbose",
  "--permission-prompt-tool",
  "stdio"
]

const controlRequests = (messages: ReadonlyArray<any>) => messages.filter((m) => m.type === "control_request")
const results = (messages: ReadonlyArray<any>) => messages.filter((m) => m.type === "result")
const allow = (requestId: string) => ({
  type: "control_response",
  response: { subtype: "success", request_id: requestId, response: { behavior: "allow" } }
})

/** The text of the tool results in the requests the fake received. */
const toolResultsSent = (server: FakeAnthropic.FakeAnthropic) =>
  server.requests.flatMap((r: any) =>
    r.body.messages.flatMap((m: any) =>
      Array.isArray(m.content) ? m.content.filter((b: any) => b.type === "tool_result") : []
    )
  )

/** A session asking through stdio, its first prompt sent, once its first control request is out. */
const firstAsk = async (script: ReadonlyArray<FakeAnthropic.ScriptItem>) => {
  const dir = workdir()
  const server = await fake(script)
  const keel = live(asking, { env: { ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home") }, cwd: dir })
  keel.send(userLine("go"))
  const [ask] = controlRequests(await keel.waitFor((ms) => controlRequests(ms).length === 1))
  return { dir, server, keel, ask }
}

describe("ask → respond over stream-json control messages", () => {
  it("a permission ask is a can_use_tool control request; allow runs the call, deny refuses the next", async () => {
    const dir = workdir()
    const server = await fake([
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "echo yes > made.txt" }, id: "toolu_1" }]),
      FakeAnthropic.textReply("made it"),
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "echo no > refused.txt" }, id: "toolu_2" }]),
      FakeAnthropic.textReply("refused, fine")
    ])
    const keel = live(asking, { env: { ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home") }, cwd: dir })
    keel.send(userLine("make a file"))
    const [ask] = controlRequests(await keel.waitFor((ms) => controlRequests(ms).length === 1))
    assert.strictEqual(ask.request.subtype, "can_use_tool")
    assert.strictEqual(ask.request.tool_name, "Bash")
    assert.deepStrictEqual(ask.request.input, { command: "echo yes > made.txt" })
    assert.strictEqual(ask.request.tool_use_id, "toolu_1")
    assert.isString(ask.request_id)
    assert.isFalse(fs.existsSync(path.join(dir, "made.txt")), "nothing runs before the answer")
    keel.send(allow(ask.request_id))
    await keel.waitFor((ms) => results(ms).length === 1)
    assert.strictEqual(fs.readFileSync(path.join(dir, "made.txt"), "utf8"), "yes\n")

    keel.send(userLine("and another"))
    const second = controlRequests(await keel.waitFor((ms) => controlRequests(ms).length === 2))[1]
    keel.send({
      type: "control_response",
      response: { subtype: "success", request_id: second.request_id, response: { behavior: "deny", message: "not that one" } }
    })
    const messages = await keel.waitFor((ms) => results(ms).length === 2)
    keel.end()
    const r = await keel.done
    assert.strictEqual(r.code, 0)
    assert.isFalse(fs.existsSync(path.join(dir, "refused.txt")))
    const denied = toolResultsSent(server).find((b: any) => b.tool_use_id === "toolu_2")
    assert.include(JSON.stringify(denied.content), "not that one")
    assert.deepStrictEqual(results(messages)[1].permission_denials.map((d: any) => d.tool_use_id), ["toolu_2"])
  }, TIMEOUT)

  it("an answer for no pending action, or of the wrong shape, is reported on stderr and changes nothing", async () => {
    const { ask, dir, keel } = await firstAsk([
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "echo x > x.txt" }, id: "toolu_1" }]),
      FakeAnthropic.textReply("ok")
    ])
    keel.send(allow("no-such-request"))
    keel.send({ type: "control_response", response: { subtype: "success", request_id: ask.request_id, response: { behavior: "maybe" } } })
    keel.send(allow(ask.request_id))
    await keel.waitFor((ms) => results(ms).length === 1)
    keel.end()
    const r = await keel.done
    assert.strictEqual(r.code, 0)
    assert.include(r.stderr, "No action no-such-request is pending")
    assert.include(r.stderr, `The answer to permission action ${ask.request_id} is not valid`)
    assert.isTrue(fs.existsSync(path.join(dir, "x.txt")))
  }, TIMEOUT)

  it("a host error answer denies the call with its message", async () => {
    const { ask, dir, keel, server } = await firstAsk([
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "echo x > x.txt" }, id: "toolu_1" }]),
      FakeAnthropic.textReply("ok")
    ])
    keel.send({ type: "control_response", response: { subtype: "error", request_id: ask.request_id, error: "host gave up" } })
    await keel.waitFor((ms) => results(ms).length === 1)
    keel.end()
    await keel.done
    assert.isFalse(fs.existsSync(path.join(dir, "x.txt")))
    assert.include(JSON.stringify(toolResultsSent(server)), "host gave up")
  }, TIMEOUT)
})

describe("AskUserQuestion and cancelled asks", () => {
  it("AskUserQuestion asks through can_use_tool even in bypassPermissions; the answers come back in updatedInput", async () => {
    const dir = workdir()
    const questions = [{
      question: "Which colour should the logo be?",
      header: "Colour",
      options: [{ label: "Teal", description: "calm" }, { label: "Orange", description: "loud" }],
      multiSelect: false
    }]
    const server = await fake([
      FakeAnthropic.toolUseReply([{ name: "AskUserQuestion", input: { questions }, id: "toolu_q" }]),
      FakeAnthropic.textReply("teal it is")
    ])
    const keel = live([...asking, "--permission-mode", "bypassPermissions"], {
      env: { ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home") },
      cwd: dir
    })
    keel.send(userLine("design a logo"))
    const [ask] = controlRequests(await keel.waitFor((ms) => controlRequests(ms).length === 1))
    assert.strictEqual(ask.request.tool_name, "AskUserQuestion")
    assert.deepStrictEqual(ask.request.input.questions, questions)
    keel.send({
      type: "control_response",
      response: {
        subtype: "success",
        request_id: ask.request_id,
        response: { behavior: "allow", updatedInput: { questions, answers: { "Which colour should the logo be?": "Teal" } } }
      }
    })
    await keel.waitFor((ms) => results(ms).length === 1)
    keel.end()
    await keel.done
    const answer = toolResultsSent(server).find((b: any) => b.tool_use_id === "toolu_q")
    assert.include(JSON.stringify(answer.content), "\\\"Which colour should the logo be?\\\"=\\\"Teal\\\"")
    assert.notStrictEqual(answer.is_error, true)
  }, TIMEOUT)

  it("interrupting the turn withdraws its ask (control_cancel_request) and the transcript records it cancelled", async () => {
    const { ask, dir, keel } = await firstAsk([
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "echo x > x.txt" }, id: "toolu_1" }])
    ])
    keel.send({ type: "control_request", request_id: "int_1", request: { subtype: "interrupt" } })
    const messages = await keel.waitFor((ms) => ms.some((m) => m.type === "control_cancel_request") && results(ms).length === 1)
    assert.deepStrictEqual(messages.find((m) => m.type === "control_cancel_request"), { type: "control_cancel_request", request_id: ask.request_id })
    keel.end()
    const r = await keel.done
    assert.notInclude(r.stderr, "waited for an answer")
    assert.isFalse(fs.existsSync(path.join(dir, "x.txt")))
    const projects = path.join(dir, ".keel-home", "projects")
    const file = fs.readdirSync(projects, { recursive: true }).map(String).find((f) => f.endsWith(".jsonl"))!
    const actions = fs.readFileSync(path.join(projects, file), "utf8").trim().split("\n").map((l) => JSON.parse(l))
      .filter((e) => e.type === "action").map((e) => e.action)
    assert.deepStrictEqual(actions.map((a: any) => a.event), ["opened", "cancelled"])
    assert.strictEqual(actions[1].id, ask.request_id)
    assert.strictEqual(actions[1].reason, "its turn was interrupted")
  }, TIMEOUT)
})

describe("a restart with a pending ask and queued input", () => {
  it("kill -9 while an ask waits and input is queued: --resume asks again (same id), runs on from the call, then the queued input", async () => {
    const dir = workdir()
    const home = path.join(dir, ".keel-home")
    const first = await fake([
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "echo resumed > after.txt" }, id: "toolu_cut" }])
    ])
    const keel = live(asking, { env: { ...envFor(first), KEEL_HOME: home }, cwd: dir })
    keel.send(userLine("start the work"))
    const [ask] = controlRequests(await keel.waitFor((ms) => controlRequests(ms).length === 1))
    keel.send(userLine("the queued one"))
    // The queued input is saved with the session as it is queued: wait for it to be in the file.
    const init = keel.messages().find((m) => m.type === "system" && m.subtype === "init")
    const file = path.join(home, "projects")
    const transcript = () => {
      const found = fs.readdirSync(file, { recursive: true }).map(String).find((f) => f.endsWith(`${init.session_id}.jsonl`))
      return found === undefined ? "" : fs.readFileSync(path.join(file, found), "utf8")
    }
    const deadline = Date.now() + 10_000
    while (!transcript().includes("the queued one") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    assert.include(transcript(), "\"type\":\"queue\"")
    keel.child.kill("SIGKILL")
    await keel.done

    const second = await fake([FakeAnthropic.textReply("finished the cut turn"), FakeAnthropic.textReply("queued one done")])
    const resumed = live([...asking, "--resume", init.session_id], { env: { ...envFor(second), KEEL_HOME: home }, cwd: dir })
    const [again] = controlRequests(await resumed.waitFor((ms) => controlRequests(ms).length === 1))
    assert.strictEqual(again.request_id, ask.request_id, "the restored action keeps its id")
    assert.strictEqual(again.request.tool_use_id, "toolu_cut")
    assert.isFalse(fs.existsSync(path.join(dir, "after.txt")))
    resumed.send(allow(again.request_id))
    const messages = await resumed.waitFor((ms) => results(ms).length === 2)
    resumed.end()
    const r = await resumed.done
    assert.strictEqual(r.code, 0, r.stderr)
    assert.strictEqual(fs.readFileSync(path.join(dir, "after.txt"), "utf8"), "resumed\n")
    assert.deepStrictEqual(results(messages).map((m) => m.result), ["finished the cut turn", "queued one done"])
    // The first request after the restart carries the call's real result, not "interrupted".
    const firstBody = second.requests[0]!.body
    const last = firstBody.messages.at(-1)
    assert.strictEqual(last.role, "user")
    assert.deepStrictEqual(last.content.map((b: any) => [b.type, b.tool_use_id, b.is_error ?? false]), [["tool_result", "toolu_cut", false]])
    const texts = second.requests[1]!.body.messages.flatMap((m: any) =>
      m.role !== "user" ? [] : typeof m.content === "string" ? [m.content] : m.content.flatMap((b: any) => b.type === "text" ? [b.text] : [])
    )
    assert.deepStrictEqual(texts, ["start the work", "the queued one"])
  }, TIMEOUT)

  it("input that ends while an ask waits: the process exits and the ask stays pending for --resume", async () => {
    const dir = workdir()
    const home = path.join(dir, ".keel-home")
    const first = await fake([
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "echo later > later.txt" }, id: "toolu_wait" }])
    ])
    const keel = live(asking, { env: { ...envFor(first), KEEL_HOME: home }, cwd: dir })
    keel.send(userLine("start"))
    const [ask] = controlRequests(await keel.waitFor((ms) => controlRequests(ms).length === 1))
    const init = keel.messages().find((m) => m.type === "system" && m.subtype === "init")
    keel.end()
    const r = await keel.done
    assert.include(r.stderr, "waited for an answer")
    assert.include(r.stderr, `--resume ${init.session_id}`)

    const second = await fake([FakeAnthropic.textReply("done after all")])
    const resumed = live([...asking, "--resume", init.session_id], { env: { ...envFor(second), KEEL_HOME: home }, cwd: dir })
    const [again] = controlRequests(await resumed.waitFor((ms) => controlRequests(ms).length === 1))
    assert.strictEqual(again.request_id, ask.request_id)
    resumed.send(allow(again.request_id))
    await resumed.waitFor((ms) => results(ms).length === 1)
    resumed.end()
    await resumed.done
    assert.strictEqual(fs.readFileSync(path.join(dir, "later.txt"), "utf8"), "later\n")
    const last = second.requests[0]!.body.messages.at(-1)
    assert.deepStrictEqual(last.content.map((b: any) => [b.tool_use_id, b.is_error ?? false]), [["toolu_wait", false]])
  }, TIMEOUT)
})

describe("an MCP server's elicitation is a pending action too", () => {
  it("the server's question goes out as an elicitation control request; the host's answer goes back to the server", async () => {
    const dir = workdir()
    const servers = path.join(dir, "servers.json")
    const testServer = path.resolve(import.meta.dirname, "support", "mcp-test-server.mjs")
    fs.writeFileSync(servers, JSON.stringify({ mcpServers: { quiz: { command: process.execPath, args: [testServer] } } }))
    const server = await fake([
      FakeAnthropic.toolUseReply([{ name: "mcp__quiz__ask", input: { question: "Which colour?" }, id: "toolu_ask" }]),
      FakeAnthropic.textReply("noted")
    ])
    const keel = live([...asking, "--mcp-config", servers, "--allowedTools", "mcp__quiz__ask"], {
      env: { ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home") },
      cwd: dir
    })
    keel.send(userLine("ask me"))
    const [ask] = controlRequests(await keel.waitFor((ms) => controlRequests(ms).length === 1))
    assert.strictEqual(ask.request.subtype, "elicitation")
    assert.strictEqual(ask.request.mcp_server_name, "quiz")
    assert.strictEqual(ask.request.message, "Which colour?")
    assert.deepStrictEqual(ask.request.requested_schema.required, ["answer"])
    keel.send({
      type: "control_response",
      response: { subtype: "success", request_id: ask.request_id, response: { action: "accept", content: { answer: "teal" } } }
    })
    await keel.waitFor((ms) => results(ms).length === 1)
    keel.end()
    await keel.done
    const result = toolResultsSent(server).find((b: any) => b.tool_use_id === "toolu_ask")
    assert.include(JSON.stringify(result.content), "accept: {\\\"answer\\\":\\\"teal\\\"}")
  }, TIMEOUT)
})
