/**
 * End to end: the real `keel` binary against answers the Messages API does not document or a proxy
 * sends instead of it: stop reasons and block types newer than Keel, a 200 that is not an event
 * stream (a whole JSON `Message`, an HTML page), a 413, an HTML error page, and base URLs `fetch`
 * refuses. Each test counts the requests the fake received and checks what Keel printed.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, lines, run, workdir } from "./support/KeelProcess.js"

afterAll(() => closeServers())

const model = "claude-sonnet-4-6"
const usage = { input_tokens: 10, output_tokens: 5 }

/** Runs `keel -p <prompt> --output-format stream-json` against `server` (or `baseUrl`) with `KEEL_HOME` = `home`. */
const keel = async (
  target: FakeAnthropic.FakeAnthropic | string,
  options: { readonly args?: ReadonlyArray<string>; readonly env?: Record<string, string>; readonly home?: string; readonly cwd?: string } = {}
) => {
  const home = options.home ?? fs.mkdtempSync(path.join(os.tmpdir(), "keel-home-"))
  const cwd = options.cwd ?? workdir()
  const env = typeof target === "string" ? { ANTHROPIC_BASE_URL: target, ANTHROPIC_API_KEY: "test-key" } : envFor(target)
  const started = Date.now()
  const r = await run(["-p", "hi", "--output-format", "stream-json", ...(options.args ?? [])], {
    env: { ...env, KEEL_HOME: home, ...options.env },
    cwd
  })
  assert.notStrictEqual(r.stdout.trim(), "", r.stderr)
  const messages = lines(r.stdout)
  const result = messages.at(-1)
  assert.strictEqual(result.type, "result", r.stdout + r.stderr)
  return { ...r, messages, result, home, cwd, ms: Date.now() - started }
}

/** A text answer's events with `stop_reason`, and a block of a type Keel has never heard of before it. */
const futureEvents = (stopReason: string) => [
  {
    type: "message_start",
    message: {
      id: "msg_future",
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1 },
      future_field: { nested: true }
    }
  },
  { type: "content_block_start", index: 0, content_block: { type: "future_block", payload: "opaque", n: 1 } },
  { type: "content_block_delta", index: 0, delta: { type: "future_delta", more: "x" } },
  { type: "content_block_stop", index: 0 },
  { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
  { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "The answer survives." } },
  { type: "content_block_stop", index: 1 },
  { type: "future_event", detail: 1 },
  { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null, future: 1 }, usage: { output_tokens: 5 } },
  { type: "message_stop" }
] as any

const htmlPage = "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title><style>body{}</style></head>" +
  `<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center>${"<p>padding</p>".repeat(500)}</body></html>`

describe("odd API answers", { timeout: 90_000 }, () => {
  it("an unknown stop reason, block type, delta, event and fields: the answer is kept, stored and resumed", async () => {
    const server = await fake([{ kind: "sse", events: futureEvents("some_future_reason") }, FakeAnthropic.textReply("Resumed.", { model, usage })])
    const first = await keel(server)
    assert.strictEqual(first.code, 0, first.stdout)
    assert.strictEqual(first.result.subtype, "success")
    assert.strictEqual(first.result.result, "The answer survives.")
    assert.strictEqual(first.result.stop_reason, "some_future_reason")
    const assistant = first.messages.find((m) => m.type === "assistant" && m.message.content.some((b: any) => b.type === "future_block"))
    assert.deepStrictEqual(assistant?.message.content[0], { type: "future_block", payload: "opaque", n: 1 })
    const second = await keel(server, { args: ["--resume", first.result.session_id], home: first.home, cwd: first.cwd })
    assert.strictEqual(second.code, 0, second.stdout)
    assert.strictEqual(second.result.result, "Resumed.")
    assert.strictEqual(server.requests.length, 2)
    // The block the API produced goes back to it in history, as it came.
    const history = server.requests[1]!.body.messages
    assert.deepStrictEqual(history[1].role, "assistant")
    assert.deepStrictEqual(history[1].content[0], { type: "future_block", payload: "opaque", n: 1 })
    assert.strictEqual(history[1].content[1].text, "The answer survives.")
  })

  it("model_context_window_exceeded is recovered like max_tokens: the model is asked to go on", async () => {
    const cut = FakeAnthropic.textReply("First half", { model, usage, stopReason: "model_context_window_exceeded" })
    const server = await fake([cut, FakeAnthropic.textReply(" and second half.", { model, usage })])
    const t = await keel(server)
    assert.strictEqual(t.code, 0, t.stdout)
    assert.strictEqual(server.requests.length, 2)
    assert.strictEqual(server.requests[1]!.body.messages.at(-1).role, "user")
    assert.strictEqual(t.result.stop_reason, "end_turn")
  })

  it("a 200 with a whole JSON Message (a non-streaming proxy) is accepted: one request, the answer printed", async () => {
    const message = FakeAnthropic.assemble(FakeAnthropic.textReply("From JSON.", { model, usage }).events)
    const server = await fake([FakeAnthropic.rawReply(200, { "content-type": "application/json" }, JSON.stringify(message))])
    const t = await keel(server)
    assert.strictEqual(t.code, 0, t.stdout)
    assert.strictEqual(t.result.result, "From JSON.")
    assert.strictEqual(t.result.usage.output_tokens, 5)
    assert.strictEqual(server.requests.length, 1)
  })

  it("a 200 HTML page fails at once, not retried: one request, 'malformed response (HTTP 200)'", async () => {
    const server = await fake([FakeAnthropic.rawReply(200, { "content-type": "text/html; charset=utf-8" }, htmlPage)])
    const t = await keel(server)
    assert.strictEqual(t.code, 1)
    assert.strictEqual(server.requests.length, 1)
    assert.strictEqual(t.messages.filter((m) => m.subtype === "api_retry").length, 0)
    assert.include(t.result.result, "malformed response (HTTP 200): check ANTHROPIC_BASE_URL or your proxy")
    assert.include(t.result.result, "502 Bad Gateway")
    assert.notInclude(t.result.result, "<")
  })

  it("a 200 JSON that is not a Message fails at once: one request", async () => {
    const server = await fake([FakeAnthropic.rawReply(200, { "content-type": "application/json" }, `{"hello":"world"}`)])
    const t = await keel(server)
    assert.strictEqual(t.code, 1)
    assert.strictEqual(server.requests.length, 1)
    assert.include(t.result.result, "malformed response (HTTP 200)")
  })

  it("a 413 request_too_large is its own error: one request, no compaction, 'Request too large'", async () => {
    const server = await fake([FakeAnthropic.errorReply(413, "request_too_large", "Request exceeds the maximum allowed number of bytes.")])
    const t = await keel(server)
    assert.strictEqual(t.code, 1)
    assert.strictEqual(server.requests.length, 1)
    assert.strictEqual(t.messages.filter((m) => m.type === "system" && m.subtype === "compact_boundary").length, 0)
    assert.include(t.result.result, "Request too large (max 32 MB")
    assert.notInclude(t.result.result.toLowerCase(), "prompt is too long")
  })

  it("an HTML 502 page shows the status, its title and the ids, not the page; retries are as for any 502", async () => {
    const page = () => FakeAnthropic.rawReply(502, { "content-type": "text/html", "cf-ray": "8f00ba4-AMS" }, htmlPage)
    const server = await fake([page(), page()])
    const t = await keel(server, { env: { KEEL_MAX_RETRIES: "1" } })
    assert.strictEqual(t.code, 1)
    assert.strictEqual(server.requests.length, 2)
    assert.include(t.result.result, "(HTTP 502): Bad Gateway: 502 Bad Gateway")
    assert.include(t.result.result, "request req_2")
    assert.include(t.result.result, "cf-ray 8f00ba4-AMS")
    assert.notInclude(t.result.result, "<")
    assert.isBelow(t.result.result.length, 400)
  })

  for (const [url, why] of [
    ["http://127.0.0.1:1", "port 1"],
    ["http://127.0.0.1:9", "port 9"],
    ["http://127.0.0.1:6000", "port 6000"],
    ["http://127.0.0.1:99999", "not a valid URL"],
    ["127.0.0.1:8080", "not a valid URL"],
    ["ftp://127.0.0.1:8080", "not http: or https:"],
    ["not a url", "not a valid URL"]
  ] as const) {
    it(`a base URL fetch refuses (${url}) fails at once, naming ANTHROPIC_BASE_URL`, async () => {
      const t = await keel(url)
      assert.strictEqual(t.code, 1)
      assert.strictEqual(t.messages.filter((m) => m.subtype === "api_retry").length, 0)
      assert.include(t.result.result, "ANTHROPIC_BASE_URL")
      assert.include(t.result.result, why)
    })
  }
})
