/**
 * The loopback fake of the Messages API itself (test/support/FakeAnthropic.ts): its bytes on the
 * wire, its bookkeeping, and the demo script of test/support/fake-api-cli.ts.
 */
import { assert, describe, it } from "@effect/vitest"
import { Accumulator, AnthropicModel, Message, ModelClient, StreamEvent } from "@keel/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import { spawn } from "node:child_process"
import * as path from "node:path"
import * as readline from "node:readline"
import { demo, rangeAsked, summarize } from "./support/fake-api-cli.js"
import * as FakeAnthropic from "./support/FakeAnthropic.js"

const root = path.resolve(import.meta.dirname, "..")

const post = (url: string, body: unknown, init: RequestInit = {}) =>
  Effect.promise(async () => {
    const response = await fetch(`${url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
      ...init
    })
    return { status: response.status, headers: response.headers, text: await response.text() }
  })

const body = { model: "claude-test", max_tokens: 16, stream: true, messages: [{ role: "user", content: "hi" }] }

const events = StreamEvent.fromMessage(
  new Message.AssistantMessage({
    content: [Message.text("héllo ✓")],
    id: "msg_1",
    model: "claude-test",
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: new Message.Usage({ input_tokens: 3, output_tokens: 2 })
  }),
  { chunkSize: 4 }
)

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`

const waitUntil = (check: () => boolean, timeoutMs = 2_000) =>
  Effect.gen(function*() {
    const deadline = Date.now() + timeoutMs
    while (!check() && Date.now() < deadline) yield* Effect.sleep("10 millis")
  })

describe("FakeAnthropic", () => {
  it.scopedLive("frames events as the API does, with one ping after message_start", () =>
    Effect.gen(function*() {
      const fake = yield* FakeAnthropic.scoped([{ kind: "sse", events, headers: { "x-extra": "1" } }])
      const response = yield* post(fake.url, body)

      assert.strictEqual(response.status, 200)
      assert.strictEqual(response.headers.get("content-type"), "text/event-stream")
      assert.strictEqual(response.headers.get("request-id"), "req_1")
      assert.strictEqual(response.headers.get("x-extra"), "1")
      const expected = [
        sse(events[0]!.type, events[0]),
        sse("ping", { type: "ping" }),
        ...events.slice(1).map((e) => sse(e.type, e))
      ].join("")
      assert.strictEqual(response.text, expected)
      assert.deepStrictEqual(fake.requests.map((r) => [r.path, r.body]), [["/v1/messages", body]])
      assert.strictEqual(fake.requests[0]!.headers["content-type"], "application/json")
    }))

  it.scopedLive("chunkBytes changes the writes, not the bytes; ping: false drops the ping", () =>
    Effect.gen(function*() {
      const fake = yield* FakeAnthropic.scoped([
        { kind: "sse", events },
        { kind: "sse", events, chunkBytes: 5 },
        { kind: "sse", events, ping: false }
      ])
      const whole = yield* post(fake.url, body)
      const chunked = yield* post(fake.url, body)
      const noPing = yield* post(fake.url, body)

      assert.strictEqual(chunked.text, whole.text)
      assert.strictEqual(noPing.text, events.map((e) => sse(e.type, e)).join(""))
    }))

  it.scopedLive("truncateAfter, midStreamError", () =>
    Effect.gen(function*() {
      const fake = yield* FakeAnthropic.scoped([
        { kind: "sse", events, truncateAfter: 2, ping: false },
        { kind: "sse", events: events.slice(0, 1), ping: false, midStreamError: { type: "overloaded_error", message: "Overloaded" } }
      ])
      const truncated = yield* post(fake.url, body)
      const failed = yield* post(fake.url, body)

      assert.strictEqual(truncated.text, events.slice(0, 2).map((e) => sse(e.type, e)).join(""))
      assert.strictEqual(
        failed.text,
        sse(events[0]!.type, events[0]) + sse("error", { type: "error", error: { type: "overloaded_error", message: "Overloaded" } })
      )
      assert.strictEqual(fake.aborted, 0)
    }))

  it.scopedLive("answers errors with the API's JSON body and headers", () =>
    Effect.gen(function*() {
      const fake = yield* FakeAnthropic.scoped([
        FakeAnthropic.errorReply(429, "rate_limit_error", "Slow down", { "retry-after": "3" })
      ])
      const response = yield* post(fake.url, body)

      assert.strictEqual(response.status, 429)
      assert.strictEqual(response.headers.get("content-type"), "application/json")
      assert.strictEqual(response.headers.get("request-id"), "req_1")
      assert.strictEqual(response.headers.get("retry-after"), "3")
      assert.deepStrictEqual(JSON.parse(response.text), {
        type: "error",
        error: { type: "rate_limit_error", message: "Slow down" },
        request_id: "req_1"
      })
    }))

  it.scopedLive("fails loudly past the end of the script, 404s other paths, and passes body and index to functions", () =>
    Effect.gen(function*() {
      const seen: Array<[unknown, number]> = []
      const fake = yield* FakeAnthropic.scoped([
        (b, i) => {
          seen.push([b, i])
          return FakeAnthropic.textReply("ok")
        }
      ])
      yield* post(fake.url, body)
      const past = yield* post(fake.url, body)
      const other = yield* Effect.promise(() => fetch(`${fake.url}/v1/models`).then(async (r) => [r.status, await r.json()]))

      assert.deepStrictEqual(seen, [[body, 0]])
      assert.strictEqual(past.status, 500)
      assert.deepStrictEqual(JSON.parse(past.text), {
        type: "error",
        error: { type: "api_error", message: "fake server: no scripted response for request 2" },
        request_id: "req_2"
      })
      assert.deepStrictEqual(other, [404, {
        type: "error",
        error: { type: "not_found_error", message: "Not found: GET /v1/models" },
        request_id: "req_not_found"
      }])
      assert.strictEqual(fake.requests.length, 2)
    }))

  it.scopedLive("counts a client that goes away mid-response as aborted", () =>
    Effect.gen(function*() {
      const fake = yield* FakeAnthropic.scoped([{ kind: "sse", events, stallAfter: 1, ping: false }])
      const controller = new AbortController()
      const first = yield* Effect.promise(async () => {
        const response = await fetch(`${fake.url}/v1/messages`, {
          method: "POST",
          body: JSON.stringify(body),
          signal: controller.signal
        })
        const reader = response.body!.getReader()
        const decoder = new TextDecoder()
        let text = ""
        while (!text.endsWith("\n\n")) {
          const { done, value } = await reader.read()
          if (done) break
          text += decoder.decode(value, { stream: true })
        }
        return text
      })
      assert.strictEqual(first, sse(events[0]!.type, events[0]))
      assert.strictEqual(fake.aborted, 0)

      controller.abort()
      yield* waitUntil(() => fake.aborted >= 1)
      assert.strictEqual(fake.aborted, 1)
    }))

  describe("the demo script of fake-api-cli", () => {
    it("summarize strips cat -n numbering and counts lines", () => {
      assert.strictEqual(summarize("     1\t\n     2\t# Keel\n     3\tAn agent kernel.\n"), "README.md summary: # Keel (3 lines read)")
      assert.strictEqual(
        summarize("<persisted-output>\nOutput too large (70000 characters). Full output saved to: /x\n     1\t# Keel\n     2\tAn agent kernel.\n</persisted-output>"),
        "README.md summary: # Keel (a preview of 2 lines: the file is large)"
      )
      assert.strictEqual(summarize([{ type: "text", text: "  10\tfirst\n  11\tsecond" }]), "README.md summary: first (2 lines read)")
      assert.strictEqual(summarize(""), "README.md summary: (empty) (0 lines read)")
    })

    it("a Read refused as too large is followed by a Read of the range the refusal names, as a model would", () => {
      const refusal = "README.md is too large to read at once: 300000 bytes, 3000 lines, about 75000 tokens; " +
        "Read it in parts with offset and limit: read lines 1-1100 first (offset 1, limit 1100), then continue from offset 1101."
      const after = (result: Record<string, unknown>) => ({
        model: "claude-demo",
        messages: [
          { role: "user", content: "read README.md and summarise it" },
          { role: "assistant", content: [{ type: "tool_use", id: "toolu_demo_1", name: "Read", input: { file_path: "README.md" } }] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_demo_1", ...result }] }
        ]
      })
      assert.deepStrictEqual(rangeAsked({ content: refusal, is_error: true }), { offset: 1, limit: 1100 })
      assert.isUndefined(rangeAsked({ content: refusal }))
      assert.isUndefined(rangeAsked({ content: "some other failure", is_error: true }))
      const followed = demo(after({ content: [{ type: "text", text: refusal }], is_error: true }), 1)
      assert.strictEqual(followed.kind, "sse")
      const content = FakeAnthropic.assemble((followed as FakeAnthropic.SseResponse).events).content as Array<any>
      assert.deepStrictEqual(content.filter((b) => b.type === "tool_use").map((b) => [b.name, b.input]), [
        ["Read", { file_path: "README.md", offset: 1, limit: 1100 }]
      ])
      const answered = demo(after({ content: "     1\t# Keel\n" }), 2)
      const answer = FakeAnthropic.assemble((answered as FakeAnthropic.SseResponse).events).content as Array<any>
      assert.deepStrictEqual(answer.map((b) => [b.type, b.text]), [["text", "README.md summary: # Keel (1 lines read)"]])
    })

    it.scopedLive("round-trips a Read through the real SDK: prompt → tool_use, tool_result → summary", () =>
      Effect.gen(function*() {
        const fake = yield* FakeAnthropic.scoped([], { fallback: demo })
        const client = yield* ModelClient.ModelClient.pipe(
          Effect.provide(AnthropicModel.layer({ apiKey: Redacted.make("k"), baseURL: fake.url }))
        )
        const ask = (messages: ReadonlyArray<Message.Message>) =>
          Stream.runCollect(client.stream({ model: "claude-demo", max_tokens: 256, messages, source: "foreground" })).pipe(
            Effect.map((c) => Accumulator.fold(Chunk.toReadonlyArray(c).filter(ModelClient.isEvent)).message)
          )

        const prompt = Message.user("Summarize the README")
        const first = yield* ask([prompt])
        assert.strictEqual(first.text, "I'll read README.md first.")
        assert.strictEqual(first.stop_reason, "tool_use")
        assert.strictEqual(first.model, "claude-demo")
        assert.deepStrictEqual(first.toolUses.map((u) => [u.id, u.name, u.input]), [["toolu_demo_1", "Read", { file_path: "README.md" }]])
        const expectedInput = Math.ceil(JSON.stringify(fake.requests[0]!.body).length / 4)
        assert.strictEqual(first.usage?.input_tokens, expectedInput)

        const result = Message.user([
          new Message.ToolResultBlock({
            tool_use_id: "toolu_demo_1",
            content: "     1\t# Keel\n     2\t\n     3\tAn Effect-native agent kernel.\n     4\t\n"
          })
        ])
        const second = yield* ask([prompt, first, result])
        assert.strictEqual(second.text, "README.md summary: # Keel (4 lines read)")
        assert.strictEqual(second.stop_reason, "end_turn")
        assert.strictEqual(fake.requests.length, 2)

        // Another session starts over with a tool call.
        const third = yield* ask([Message.user("Again")])
        assert.deepStrictEqual(third.toolUses.map((u) => u.name), ["Read"])
      }))

    it.live("the CLI prints ANTHROPIC_BASE_URL, serves the demo and exits 0 on SIGTERM", () =>
      Effect.promise(async () => {
        const child = spawn(process.execPath, ["--import", "tsx", "test/support/fake-api-cli.ts"], {
          cwd: root,
          stdio: ["ignore", "pipe", "pipe"]
        })
        try {
          const line = await new Promise<string>((resolve, reject) => {
            readline.createInterface({ input: child.stdout }).once("line", resolve)
            child.once("exit", (code) => reject(new Error(`fake-api-cli exited early with ${code}`)))
          })
          assert.match(line, /^ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:\d+$/)
          const url = line.slice("ANTHROPIC_BASE_URL=".length)
          const response = await fetch(`${url}/v1/messages`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(body)
          })
          const text = await response.text()
          assert.strictEqual(response.status, 200)
          assert.include(text, "\"name\":\"Read\"")
          const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
          child.kill("SIGTERM")
          assert.strictEqual(await exit, 0)
        } finally {
          if (child.exitCode === null) child.kill("SIGKILL")
        }
      }))
  })
})
