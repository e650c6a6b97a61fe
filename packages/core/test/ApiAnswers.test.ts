/**
 * Answers the Messages API does not document, or a proxy sends instead of it, through the real SDK
 * against the loopback fake: a 200 that is a whole JSON `Message` (accepted, as the events a stream
 * of it would carry), a 200 that is HTML or other JSON (`MalformedResponse`, not retried), a 413
 * (`RequestTooLarge`, not a prompt too long), an HTML error page (its title, not the page), base URLs
 * `fetch` refuses (`InvalidBaseUrl`, no request made), and stop reasons and blocks newer than Keel.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  Accumulator,
  AnthropicModel,
  BaseUrl,
  ErrorPage,
  Message,
  ModelClient,
  ModelError,
  ModelRequest,
  Retry,
  RetryPolicy
} from "@keel/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as FakeAnthropic from "../../../test/support/FakeAnthropic.js"

const request: ModelRequest.ModelRequest = {
  model: "claude-test-model",
  max_tokens: 1024,
  messages: [Message.user("hi")],
  source: "foreground"
}

const clientLayer = (url: string) => AnthropicModel.layer({ apiKey: Redacted.make("test-key"), baseURL: url })

/** The events of one request, without the pings. */
const collect = Effect.gen(function*() {
  const client = yield* ModelClient.ModelClient
  return Chunk.toReadonlyArray(yield* Stream.runCollect(client.stream(request))).filter(ModelClient.isEvent)
})

/** The failure of one request through `url`. */
const failureAt = (url: string): Effect.Effect<ModelError.ModelError> =>
  collect.pipe(
    Effect.provide(clientLayer(url)),
    Effect.flip,
    Effect.flatMap((e) => ModelError.isModelError(e) ? Effect.succeed(e) : Effect.die(e)),
    Effect.orDie
  )

const html = "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1>" +
  `${"<p>filler</p>".repeat(2_000)}<hr><center>nginx</center></body></html>`

describe("a 200 that is not an event stream", () => {
  it.scopedLive("a whole JSON Message is accepted: the same message as its stream, from one request", () =>
    Effect.gen(function*() {
      const reply = FakeAnthropic.textReply("From JSON.", { model: "claude-test-model", usage: { input_tokens: 7, output_tokens: 3 } })
      const body = JSON.stringify({ ...FakeAnthropic.assemble(reply.events), future_field: 1 })
      const fake = yield* FakeAnthropic.scoped([FakeAnthropic.rawReply(200, { "content-type": "application/json" }, body)])
      const events = yield* collect.pipe(Effect.provide(clientLayer(fake.url)))
      const message = Accumulator.fold(events).message
      assert.strictEqual(message.text, "From JSON.")
      assert.strictEqual(message.stop_reason, "end_turn")
      assert.strictEqual(message.usage?.output_tokens, 3)
      assert.deepStrictEqual(Accumulator.fold(events).message.content, Accumulator.fold(reply.events).message.content)
      assert.strictEqual(fake.requests.length, 1)
    }))

  it.scopedLive("an HTML page is a MalformedResponse naming the content type and the title, never retried", () =>
    Effect.gen(function*() {
      const fake = yield* FakeAnthropic.scoped([FakeAnthropic.rawReply(200, { "content-type": "text/html" }, html)])
      const error = yield* failureAt(fake.url)
      assert.strictEqual(error._tag, "MalformedResponse")
      assert.strictEqual(error.message, "text/html, not an event stream: 502 Bad Gateway")
      assert.isFalse(RetryPolicy.isRetryable(error, request))
      assert.strictEqual(
        ModelError.describe(error),
        "malformed response (HTTP 200): check ANTHROPIC_BASE_URL or your proxy (text/html, not an event stream: 502 Bad Gateway) [request req_1]"
      )
    }))

  it.scopedLive("JSON that is not a Message is a MalformedResponse saying where it differs", () =>
    Effect.gen(function*() {
      const fake = yield* FakeAnthropic.scoped([FakeAnthropic.rawReply(200, { "content-type": "application/json" }, `{"type":"message"}`)])
      const error = yield* failureAt(fake.url)
      assert.strictEqual(error._tag, "MalformedResponse")
      assert.include(error.message, "JSON that is not a Message")
    }))

  it.scopedLive("the API's error body in a 200 is that error (classified by error.type)", () =>
    Effect.gen(function*() {
      const body = JSON.stringify({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })
      const fake = yield* FakeAnthropic.scoped([FakeAnthropic.rawReply(200, { "content-type": "application/json" }, body)])
      const error = yield* failureAt(fake.url)
      assert.strictEqual(error._tag, "Overloaded")
    }))

  it.scoped("through the retry layer, a malformed 200 fails at once: one request, no wait (TestClock)", () =>
    Effect.gen(function*() {
      const fake = yield* FakeAnthropic.scoped(
        [FakeAnthropic.rawReply(200, { "content-type": "text/plain" }, "hello from a captive portal\n")],
        { fallback: () => FakeAnthropic.textReply("never") }
      )
      const layer = Retry.layer().pipe(Layer.provideMerge(clientLayer(fake.url)))
      const fiber = yield* collect.pipe(Effect.provide(layer), Effect.flip, Effect.fork)
      const error = yield* Fiber.join(fiber)
      assert.strictEqual(error._tag, "MalformedResponse")
      assert.strictEqual(fake.requests.length, 1)
      assert.strictEqual((yield* TestClock.sleeps()).length, 0)
    }))
})

describe("HTTP errors that are not the API's", () => {
  it.scopedLive("a 413 is RequestTooLarge, not PromptTooLong: compaction is not its answer", () =>
    Effect.gen(function*() {
      const fake = yield* FakeAnthropic.scoped([FakeAnthropic.errorReply(413, "request_too_large", "Request exceeds the maximum allowed number of bytes.")])
      const error = yield* failureAt(fake.url)
      assert.strictEqual(error._tag, "RequestTooLarge")
      assert.isFalse(RetryPolicy.isRetryable(error, request))
      assert.match(ModelError.describe(error), /^Request too large \(max 32 MB \(HTTP 413\)\): Request exceeds/)
    }))

  it.scopedLive("a 413 HTML page from a proxy is RequestTooLarge too", () =>
    Effect.gen(function*() {
      const page = "<html><head><title>413 Request Entity Too Large</title></head><body></body></html>"
      const fake = yield* FakeAnthropic.scoped([FakeAnthropic.rawReply(413, { "content-type": "text/html" }, page)])
      const error = yield* failureAt(fake.url)
      assert.strictEqual(error._tag, "RequestTooLarge")
      assert.strictEqual(error.message, "Payload Too Large: 413 Request Entity Too Large")
    }))

  it.scopedLive("an HTML 502 page: the status's reason and the page's title, the request id and cf-ray, not the page", () =>
    Effect.gen(function*() {
      const fake = yield* FakeAnthropic.scoped([
        FakeAnthropic.rawReply(502, { "content-type": "text/html", "cf-ray": "8f00ba4-AMS" }, html)
      ])
      const error = yield* failureAt(fake.url)
      assert.strictEqual(error._tag, "ServerError")
      assert.strictEqual(error.message, "Bad Gateway: 502 Bad Gateway")
      assert.strictEqual(ModelError.describe(error), "ServerError (HTTP 502): Bad Gateway: 502 Bad Gateway [request req_1, cf-ray 8f00ba4-AMS]")
      assert.isTrue(RetryPolicy.isRetryable(error, request))
    }))

  it("an excerpt is bounded, decoded, and falls back to the first line of text", () => {
    assert.strictEqual(ErrorPage.excerpt("<html><title> A &amp; B\n </title></html>", "text/html"), "A & B")
    assert.strictEqual(ErrorPage.excerpt("<html><body>\n<h1>Down</h1><p>for maintenance</p></body></html>"), "Down")
    assert.strictEqual(ErrorPage.excerpt("\n\nupstream connect error\nmore"), "upstream connect error")
    assert.strictEqual(ErrorPage.excerpt(`<title>${"x".repeat(1_000)}</title>`, "text/html").length, ErrorPage.MAX_EXCERPT)
  })
})

describe("base URLs fetch refuses", () => {
  for (const url of ["http://127.0.0.1:1", "http://127.0.0.1:9", "https://example.com:6000", "http://127.0.0.1:99999", "ftp://h", "nope"]) {
    it.scopedLive(`${url}: InvalidBaseUrl, not retried`, () =>
      Effect.gen(function*() {
        const error = yield* failureAt(url)
        assert.strictEqual(error._tag, "InvalidBaseUrl")
        assert.isFalse(RetryPolicy.isRetryable(error, request))
        assert.include(ModelError.describe(error), "Check ANTHROPIC_BASE_URL")
      }))
  }

  it("ports fetch allows pass, the default port included", () => {
    for (const url of ["http://127.0.0.1:8080", "https://api.anthropic.com", "http://localhost:80", "http://[::1]:3000/v1"]) {
      assert.isUndefined(BaseUrl.check(url), url)
    }
  })
})

describe("forward compatibility", () => {
  const events = [
    { type: "message_start", message: { id: "msg_f", type: "message", role: "assistant", model: "m", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } },
    { type: "content_block_start", index: 0, content_block: { type: "future_block", payload: { a: 1 } } },
    { type: "content_block_delta", index: 0, delta: { type: "future_delta", x: 1 } },
    { type: "content_block_stop", index: 0 },
    { type: "content_block_start", index: 1, content_block: { type: "text", text: "kept" } },
    { type: "content_block_stop", index: 1 },
    { type: "future_event" },
    { type: "message_delta", delta: { stop_reason: "some_future_reason", stop_sequence: null }, usage: { output_tokens: 2 } },
    { type: "message_stop" }
  ] as any

  it("an unknown stop reason and block type fold into a message that encodes and decodes as it came", () => {
    const message = Accumulator.fold(events).message
    assert.strictEqual(message.stop_reason, "some_future_reason")
    const encoded = Schema.encodeSync(Message.AssistantMessage)(message)
    assert.deepStrictEqual(encoded.content[0], { type: "future_block", payload: { a: 1 } })
    const decoded = Schema.decodeUnknownSync(Message.Message)(JSON.parse(JSON.stringify(encoded)))
    assert.strictEqual((decoded as Message.AssistantMessage).stop_reason, "some_future_reason")
    assert.strictEqual((decoded as Message.AssistantMessage).text, "kept")
    // Sent back to the API in history as the API produced it.
    assert.deepStrictEqual((Message.toParam(decoded).content as Array<unknown>)[0], { type: "future_block", payload: { a: 1 } })
  })
})
