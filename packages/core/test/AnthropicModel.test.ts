/**
 * `AnthropicModel` + `ModelClient` through the real `@anthropic-ai/sdk` over real HTTP, against the
 * loopback fake of the Messages API (test/support/FakeAnthropic.ts).
 */
import { assert, describe, it } from "@effect/vitest"
import {
  Accumulator,
  AnthropicModel,
  Credentials,
  IdleWatchdog,
  Message,
  ModelClient,
  ModelError,
  ModelRequest,
  Retry,
  StreamEvent
} from "@keel/core"
import * as Chunk from "effect/Chunk"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as net from "node:net"
import * as FakeAnthropic from "../../../test/support/FakeAnthropic.js"

const tools = [{
  name: "Read",
  description: "Reads a file from the local filesystem.",
  input_schema: {
    type: "object" as const,
    properties: { file_path: { type: "string" } },
    required: ["file_path"]
  }
}]

const request: ModelRequest.ModelRequest = {
  model: "claude-test-model",
  max_tokens: 1024,
  system: "You are a test.",
  messages: [Message.user("Read the README")],
  tools,
  source: "foreground"
}

/** The assistant message the fake streams in the happy-path tests: text (with non-ASCII) and a tool call. */
const scriptedMessage = new Message.AssistantMessage({
  content: [
    new Message.TextBlock({ text: "I'll read the file first — naïve ✓ 日本語 🚀.", citations: null }),
    new Message.ToolUseBlock({ id: "toolu_01", name: "Read", input: { file_path: "README.md", limit: 20 } })
  ],
  id: "msg_01",
  model: "claude-test-model",
  stop_reason: "tool_use",
  stop_sequence: null,
  usage: new Message.Usage({
    input_tokens: 25,
    output_tokens: 12,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 3
  })
})

const scriptedEvents = StreamEvent.fromMessage(scriptedMessage, { chunkSize: 5 })

/** A free port with nothing listening on it. */
const unusedPort = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const server = net.createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })
)

const clientLayer = (url: string) => AnthropicModel.layer({ apiKey: Redacted.make("test-key"), baseURL: url })

/** Every event of one request (without the pings that mark reads that carried no event). */
const collect = (req: ModelRequest.ModelRequest = request) =>
  Effect.gen(function*() {
    const client = yield* ModelClient.ModelClient
    return Chunk.toReadonlyArray(yield* Stream.runCollect(client.stream(req))).filter(ModelClient.isEvent)
  })

/** The events emitted before the stream failed, and the failures (at most one). */
const collectUntilFailure = (req: ModelRequest.ModelRequest = request) =>
  Effect.gen(function*() {
    const client = yield* ModelClient.ModelClient
    const items = Chunk.toReadonlyArray(yield* Stream.runCollect(Stream.either(client.stream(req))))
    return {
      events: items.filter(Either.isRight).map((e) => e.right).filter(ModelClient.isEvent),
      failures: items.filter(Either.isLeft).map((e) => e.left)
    }
  })

/** The fields of a failure, for exact comparison (`undefined` where the tag has no such field). */
const fieldsOf = (error: ModelError.ModelError | AnthropicModel.MissingCredentials) => ({
  _tag: error._tag,
  message: error.message,
  status: "status" in error ? error.status : undefined,
  requestId: "requestId" in error ? error.requestId : undefined,
  errorType: "errorType" in error ? error.errorType : undefined,
  headers: "headers" in error ? error.headers : undefined
})

/** Waits (real time, at most `timeoutMs`) until `check` holds; the caller asserts afterwards. */
const waitUntil = (check: () => boolean, timeoutMs = 2_000) =>
  Effect.gen(function*() {
    const deadline = Date.now() + timeoutMs
    while (!check() && Date.now() < deadline) yield* Effect.sleep("10 millis")
  })

describe("AnthropicModel against the fake Messages API", () => {
  describe("streaming", () => {
    it.scopedLive("yields the scripted raw events (the API's pings are not events), and they fold to the scripted message", () =>
      Effect.gen(function*() {
        const fake = yield* FakeAnthropic.scoped([{ kind: "sse", events: scriptedEvents }])
        const events = yield* collect().pipe(Effect.provide(clientLayer(fake.url)))

        assert.deepStrictEqual(events, scriptedEvents)
        assert.isFalse(events.some((e) => (e.type as string) === "ping"))
        const folded = Accumulator.fold(events)
        assert.isTrue(folded.complete)
        assert.strictEqual(folded.malformedToolInput.size, 0)
        assert.deepStrictEqual(folded.message, scriptedMessage)
      }))

    it.scopedLive("sends the request body, the API key (as a bearer token) and no SDK retry", () =>
      Effect.gen(function*() {
        const fake = yield* FakeAnthropic.scoped([{ kind: "sse", events: scriptedEvents }])
        yield* collect().pipe(Effect.provide(clientLayer(fake.url)))

        assert.strictEqual(fake.requests.length, 1)
        const recorded = fake.requests[0]!
        assert.strictEqual(recorded.path, "/v1/messages")
        assert.deepStrictEqual(recorded.body, {
          model: "claude-test-model",
          max_tokens: 1024,
          system: "You are a test.",
          messages: [{ role: "user", content: "Read the README" }],
          tools,
          stream: true
        })
        // @anthropic-ai/sdk 1.x sends the API key as `Authorization: Bearer`, not `x-api-key`.
        assert.strictEqual(recorded.headers["authorization"], "Bearer test-key")
        assert.strictEqual(recorded.headers["x-api-key"], undefined)
        assert.strictEqual(recorded.headers["content-type"], "application/json")
        assert.strictEqual(recorded.headers["x-stainless-retry-count"], "0")
        // The default timeout is 10 minutes; the SDK reports it in seconds.
        assert.strictEqual(recorded.headers["x-stainless-timeout"], "600")
      }))

    it.scopedLive("parses events split across arbitrary byte boundaries (inside lines and UTF-8 sequences)", () =>
      Effect.gen(function*() {
        const fake = yield* FakeAnthropic.scoped([
          { kind: "sse", events: scriptedEvents, chunkBytes: 3 },
          { kind: "sse", events: scriptedEvents, chunkBytes: 64, ping: false }
        ])
        const layer = clientLayer(fake.url)
        const bytewise = yield* collect().pipe(Effect.provide(layer))
        const larger = yield* collect().pipe(Effect.provide(layer))

        assert.deepStrictEqual(bytewise, scriptedEvents)
        assert.deepStrictEqual(larger, scriptedEvents)
        assert.strictEqual(Accumulator.fold(bytewise).message.text, "I'll read the file first — naïve ✓ 日本語 🚀.")
      }))

    const manyDeltas = StreamEvent.fromMessage(
      FakeAnthropic.message([new Message.TextBlock({ text: "x".repeat(3_000), citations: null })]),
      { chunkSize: 1 }
    )

    it.scopedLive("hands events over as each network read is parsed, not when the stream ends", () =>
      Effect.gen(function*() {
        // 20 events, then silence: the consumer must get them while the connection is still open.
        const fake = yield* FakeAnthropic.scoped([{ kind: "sse", events: manyDeltas, stallAfter: 20 }])
        const client = yield* Effect.provide(ModelClient.ModelClient, clientLayer(fake.url))
        const first = yield* Stream.runCollect(Stream.take(client.stream(request), 20)).pipe(
          Effect.timeout("5 seconds")
        )
        assert.deepStrictEqual(Chunk.toReadonlyArray(first), manyDeltas.slice(0, 20))
      }))

    it.scopedLive("batches the events of one network read into one chunk", () =>
      Effect.gen(function*() {
        const fake = yield* FakeAnthropic.scoped([{ kind: "sse", events: manyDeltas, chunkBytes: 64 * 1024 }])
        const client = yield* Effect.provide(ModelClient.ModelClient, clientLayer(fake.url))
        const chunks = Chunk.toReadonlyArray(yield* Stream.runCollect(Stream.chunks(client.stream(request))))

        assert.deepStrictEqual(chunks.flatMap(Chunk.toReadonlyArray).filter(ModelClient.isEvent), manyDeltas)
        // ~3,000 events in ~6 reads of 64 KB: a handful of chunks, not one per event.
        assert.isAtMost(chunks.length, 50)
      }))
  })

  describe("HTTP errors are classified by status and body", () => {
    const cases: ReadonlyArray<{
      readonly status: number
      readonly type: string
      readonly message: string
      readonly headers?: Record<string, string>
      readonly tag: ModelError.ModelError["_tag"]
      readonly retryHeaders?: Record<string, string>
    }> = [
      {
        status: 429,
        type: "rate_limit_error",
        message: "Number of request tokens has exceeded your per-minute rate limit",
        headers: { "retry-after": "17", "anthropic-ratelimit-tokens-remaining": "0" },
        tag: "RateLimited",
        retryHeaders: { "retry-after": "17" }
      },
      { status: 529, type: "overloaded_error", message: "Overloaded", tag: "Overloaded" },
      { status: 500, type: "api_error", message: "Internal server error", tag: "ServerError" },
      { status: 503, type: "api_error", message: "Service unavailable", tag: "ServerError" },
      { status: 401, type: "authentication_error", message: "invalid x-api-key", tag: "Unauthorized" },
      {
        status: 403,
        type: "permission_error",
        message: "Your API key does not have permission to use the specified resource.",
        tag: "Forbidden"
      },
      {
        status: 400,
        type: "invalid_request_error",
        message: "prompt is too long: 210000 tokens > 200000 maximum",
        tag: "PromptTooLong"
      },
      { status: 413, type: "request_too_large", message: "Request exceeds the maximum allowed size", tag: "RequestTooLarge" },
      { status: 400, type: "invalid_request_error", message: "max_tokens: Field required", tag: "InvalidRequest" },
      { status: 404, type: "not_found_error", message: "model: claude-nope", tag: "InvalidRequest" }
    ]

    for (const c of cases) {
      it.scopedLive(`${c.status} ${c.type} → ${c.tag}`, () =>
        Effect.gen(function*() {
          const fake = yield* FakeAnthropic.scoped([
            FakeAnthropic.errorReply(c.status, c.type, c.message, c.headers)
          ])
          const error = yield* collect().pipe(Effect.provide(clientLayer(fake.url)), Effect.flip)

          assert.deepStrictEqual(fieldsOf(error), {
            _tag: c.tag,
            message: c.message,
            status: c.status,
            requestId: "req_1",
            errorType: c.type,
            headers: c.retryHeaders
          })
          assert.strictEqual(fake.requests.length, 1)
        }))
    }
  })

  describe("mid-stream error events after a 200 are classified by error.type, without a status", () => {
    const cases: ReadonlyArray<{ readonly type: string; readonly message: string; readonly tag: ModelError.ModelError["_tag"] }> = [
      { type: "overloaded_error", message: "Overloaded", tag: "Overloaded" },
      { type: "api_error", message: "Internal server error", tag: "ServerError" },
      { type: "rate_limit_error", message: "Rate limited", tag: "RateLimited" }
    ]
    for (const c of cases) {
      it.scopedLive(`event: error ${c.type} → ${c.tag}, after the events already sent`, () =>
        Effect.gen(function*() {
          const fake = yield* FakeAnthropic.scoped([
            { kind: "sse", events: scriptedEvents.slice(0, 3), midStreamError: { type: c.type, message: c.message } }
          ])
          const { events, failures } = yield* collectUntilFailure().pipe(Effect.provide(clientLayer(fake.url)))

          assert.deepStrictEqual(events, scriptedEvents.slice(0, 3))
          assert.deepStrictEqual(failures.map(fieldsOf), [{
            _tag: c.tag,
            message: c.message,
            status: undefined,
            requestId: "req_1",
            errorType: c.type,
            headers: undefined
          }])
        }))
    }
  })

  describe("broken transport", () => {
    it.scopedLive("a body that ends cleanly before message_stop fails with StreamTruncated after the events", () =>
      Effect.gen(function*() {
        const fake = yield* FakeAnthropic.scoped([{ kind: "sse", events: scriptedEvents, truncateAfter: 4 }])
        const { events, failures } = yield* collectUntilFailure().pipe(Effect.provide(clientLayer(fake.url)))

        assert.deepStrictEqual(events, scriptedEvents.slice(0, 4))
        assert.deepStrictEqual(failures.map(fieldsOf), [{
          _tag: "StreamTruncated",
          message: "The stream ended before message_stop",
          status: undefined,
          requestId: undefined,
          errorType: undefined,
          headers: undefined
        }])
      }))

    it.scopedLive("a connection closed mid-body (after the 200) fails with StreamTruncated after the events", () =>
      Effect.gen(function*() {
        const fake = yield* FakeAnthropic.scoped([
          { kind: "sse", events: scriptedEvents, truncateAfter: 4, truncateMode: "destroy" }
        ])
        const { events, failures } = yield* collectUntilFailure().pipe(Effect.provide(clientLayer(fake.url)))

        assert.deepStrictEqual(events, scriptedEvents.slice(0, 4))
        assert.strictEqual(failures.length, 1)
        const failure = failures[0]!
        assert.strictEqual(failure._tag, "StreamTruncated")
        assert.strictEqual(failure.message, "The stream broke off before message_stop: terminated")
        assert.strictEqual(fake.aborted, 0)
      }))

    it.live("an unreachable server fails with ConnectionError naming the socket error", () =>
      Effect.gen(function*() {
        const port = yield* unusedPort
        const error = yield* collect().pipe(Effect.provide(clientLayer(`http://127.0.0.1:${port}`)), Effect.flip)

        assert.strictEqual(error._tag, "ConnectionError")
        assert.strictEqual(error.message, "Could not reach the API: ECONNREFUSED")
        assert.strictEqual(error._tag === "ConnectionError" ? error.cause : undefined, `connect ECONNREFUSED 127.0.0.1:${port}`)
      }))
  })

  describe("interruption aborts the HTTP request", () => {
    it.scopedLive("Stream.take ends the consumer early and the server sees the client disconnect", () =>
      Effect.gen(function*() {
        const fake = yield* FakeAnthropic.scoped([{ kind: "sse", events: scriptedEvents, stallAfter: 4 }])
        const client = yield* ModelClient.ModelClient.pipe(Effect.provide(clientLayer(fake.url)))
        const taken = Chunk.toReadonlyArray(yield* Stream.runCollect(Stream.take(client.stream(request), 3)))

        assert.deepStrictEqual(taken, scriptedEvents.slice(0, 3))
        yield* waitUntil(() => fake.aborted >= 1)
        assert.strictEqual(fake.aborted, 1)
        assert.strictEqual(fake.requests.length, 1)
      }))

    it.scopedLive("Fiber.interrupt on a stalled stream aborts the request", () =>
      Effect.gen(function*() {
        const fake = yield* FakeAnthropic.scoped([{ kind: "sse", events: scriptedEvents, stallAfter: 2 }])
        const client = yield* ModelClient.ModelClient.pipe(Effect.provide(clientLayer(fake.url)))
        const seen = yield* Deferred.make<void>()
        let count = 0
        const fiber = yield* client.stream(request).pipe(
          Stream.tap(() => ++count === 2 ? Deferred.succeed(seen, undefined) : Effect.void),
          Stream.runDrain,
          Effect.fork
        )
        yield* Deferred.await(seen)
        // The stream is stalled with the connection open: nothing aborted yet.
        yield* Effect.sleep("50 millis")
        assert.strictEqual(fake.aborted, 0)
        assert.isNull(fiber.unsafePoll())

        yield* Fiber.interrupt(fiber)
        yield* waitUntil(() => fake.aborted >= 1)
        assert.strictEqual(fake.aborted, 1)
        assert.strictEqual(count, 2)
      }))
  })

  describe("the SDK's retries are off", () => {
    for (const status of [529, 429, 500]) {
      it.scopedLive(`a ${status} with x-should-retry: true makes exactly one request`, () =>
        Effect.gen(function*() {
          const fake = yield* FakeAnthropic.scoped([
            FakeAnthropic.errorReply(status, status === 429 ? "rate_limit_error" : status === 529 ? "overloaded_error" : "api_error", "try again", {
              "x-should-retry": "true",
              "retry-after": "0"
            }),
            FakeAnthropic.textReply("a retry would have succeeded")
          ])
          const error = yield* collect().pipe(Effect.provide(clientLayer(fake.url)), Effect.flip)

          assert.strictEqual(error._tag, status === 429 ? "RateLimited" : status === 529 ? "Overloaded" : "ServerError")
          assert.deepStrictEqual(fieldsOf(error).headers, { "retry-after": "0", "x-should-retry": "true" })
          assert.strictEqual(fake.requests.length, 1)
        }))
    }
  })

  describe("layerConfig", () => {
    const withConfig = (entries: ReadonlyArray<readonly [string, string]>) =>
      AnthropicModel.layerConfig.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(entries)))))

    it.live("fails with MissingCredentials, saying how to set them, when neither key nor token is set", () =>
      Effect.gen(function*() {
        const error = yield* collect().pipe(Effect.provide(withConfig([])), Effect.flip)

        assert.strictEqual(error._tag, "MissingCredentials")
        assert.include(error.message, "ANTHROPIC_API_KEY is not set")
        assert.include(error.message, "export ANTHROPIC_API_KEY=sk-ant-")
        assert.include(error.message, "ANTHROPIC_AUTH_TOKEN")
        assert.include(error.message, "ANTHROPIC_BASE_URL")
      }))

    it.live("the explicit layer fails the same way without credentials", () =>
      Effect.gen(function*() {
        const error = yield* collect().pipe(Effect.provide(AnthropicModel.layer({ baseURL: "http://127.0.0.1:9" })), Effect.flip)
        assert.strictEqual(error._tag, "MissingCredentials")
        assert.include(error.message, "export ANTHROPIC_API_KEY=sk-ant-")
      }))

    it.scopedLive("reads ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL and API_TIMEOUT_MS", () =>
      Effect.gen(function*() {
        const fake = yield* FakeAnthropic.scoped([{ kind: "sse", events: scriptedEvents }])
        const events = yield* collect().pipe(Effect.provide(withConfig([
          ["ANTHROPIC_API_KEY", "sk-ant-from-config"],
          ["ANTHROPIC_BASE_URL", fake.url],
          ["API_TIMEOUT_MS", "5000"]
        ])))

        assert.deepStrictEqual(events, scriptedEvents)
        const headers = fake.requests[0]!.headers
        assert.strictEqual(headers["authorization"], "Bearer sk-ant-from-config")
        assert.strictEqual(headers["x-api-key"], undefined)
        assert.strictEqual(headers["x-stainless-timeout"], "5")
      }))

    it.scopedLive("ANTHROPIC_AUTH_TOKEN is sent as a bearer token", () =>
      Effect.gen(function*() {
        const fake = yield* FakeAnthropic.scoped([{ kind: "sse", events: scriptedEvents }])
        yield* collect().pipe(Effect.provide(withConfig([
          ["ANTHROPIC_AUTH_TOKEN", "token-from-config"],
          ["ANTHROPIC_BASE_URL", fake.url]
        ])))

        const headers = fake.requests[0]!.headers
        assert.strictEqual(headers["authorization"], "Bearer token-from-config")
        assert.strictEqual(headers["x-api-key"], undefined)
      }))

    it.scopedLive("with both a key and a token set, the key is used (the SDK refuses both)", () =>
      Effect.gen(function*() {
        const fake = yield* FakeAnthropic.scoped([{ kind: "sse", events: scriptedEvents }])
        const events = yield* collect().pipe(Effect.provide(withConfig([
          ["ANTHROPIC_API_KEY", "sk-ant-both"],
          ["ANTHROPIC_AUTH_TOKEN", "token-both"],
          ["ANTHROPIC_BASE_URL", fake.url]
        ])))

        assert.strictEqual(events.length, scriptedEvents.length)
        const headers = fake.requests[0]!.headers
        assert.strictEqual(headers["authorization"], "Bearer sk-ant-both")
        assert.strictEqual(headers["x-api-key"], undefined)
      }))
  })

  describe("credentials", () => {
    it.scopedLive("after a 401 the retry layer refreshes the credentials and the next request carries the new key", () =>
      Effect.gen(function*() {
        const fake = yield* FakeAnthropic.scoped([
          FakeAnthropic.errorReply(401, "authentication_error", "invalid x-api-key"),
          { kind: "sse", events: scriptedEvents }
        ])
        const loads = yield* Ref.make(0)
        const load = Effect.map(Ref.updateAndGet(loads, (n) => n + 1), (n) => ({ apiKey: Redacted.make(`key-${n}`) }))
        const layer = Retry.layer().pipe(
          Layer.provide(AnthropicModel.layerWithCredentials({ baseURL: fake.url })),
          Layer.provide(Layer.effect(Credentials.Credentials, Credentials.make(load)))
        )
        const events = yield* collect().pipe(Effect.provide(layer))

        assert.deepStrictEqual(events, scriptedEvents)
        assert.deepStrictEqual(fake.requests.map((r) => r.headers["authorization"]), ["Bearer key-1", "Bearer key-2"])
      }))
  })

  describe("keep-alive", () => {
    it.scopedLive("a read that carries only a ping is passed on as a ping item, so the stream is seen alive", () =>
      Effect.gen(function*() {
        const fake = yield* FakeAnthropic.scoped([
          { kind: "sse", events: scriptedEvents, ping: false, keepAlive: { after: 1, pings: 3, everyMs: 100 } }
        ])
        const client = yield* Effect.provide(ModelClient.ModelClient, clientLayer(fake.url))
        const items = Chunk.toReadonlyArray(yield* Stream.runCollect(client.stream(request)))

        assert.deepStrictEqual(items.filter(ModelClient.isEvent), scriptedEvents)
        const pingsAfterStart = items.slice(1, items.findIndex((i) => i.type === "content_block_start"))
        assert.deepStrictEqual(pingsAfterStart, [StreamEvent.ping, StreamEvent.ping, StreamEvent.ping])
      }))

    it.scopedLive("the idle watchdog counts pings as activity: 0.6 s of pings outlive a 0.3 s idle timeout", () =>
      Effect.gen(function*() {
        const fake = yield* FakeAnthropic.scoped([
          { kind: "sse", events: scriptedEvents, ping: false, keepAlive: { after: 1, pings: 4, everyMs: 150 } }
        ])
        const layer = IdleWatchdog.layer("300 millis").pipe(Layer.provide(clientLayer(fake.url)))
        const events = yield* collect().pipe(Effect.provide(layer))

        assert.deepStrictEqual(events, scriptedEvents)
        assert.strictEqual(fake.requests.length, 1)
      }))
  })
})
