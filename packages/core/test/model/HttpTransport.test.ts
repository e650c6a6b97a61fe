/**
 * `HttpTransport`, the keep-alive `node:http` fetch the SDK sends through, over real loopback HTTP:
 * socket reuse across rounds, a stale kept-alive socket, resets before and during an answer, abort
 * mid-body, the SDK's timeout, compressed answers, and the proxy switch.
 */
import { assert, describe, it } from "@effect/vitest"
import { AnthropicModel, HttpTransport, Message, ModelClient, type ModelRequest, StreamEvent } from "@keel/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as http from "node:http"
import type * as net from "node:net"
import { PassThrough } from "node:stream"
import * as zlib from "node:zlib"

const request: ModelRequest.ModelRequest = {
  model: "claude-test-model",
  max_tokens: 1024,
  messages: [Message.user("hi")],
  source: "foreground"
}

const events = StreamEvent.fromMessage(
  new Message.AssistantMessage({
    content: [new Message.TextBlock({ text: "Hello from a kept-alive socket.", citations: null })],
    id: "msg_01",
    model: "claude-test-model",
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: new Message.Usage({ input_tokens: 3, output_tokens: 7 })
  }),
  { chunkSize: 4 }
)

const sse = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("")

/** What a handler is told: which connection (0-based) and which request on it (0-based). */
interface On {
  readonly socket: number
  readonly request: number
}

/** A loopback server; each request goes to `handle` once its body has arrived. */
const serve = (handle: (req: http.IncomingMessage, res: http.ServerResponse, on: On) => void) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ url: string; server: http.Server; connections: () => number; requests: () => number }>(
        (resolve) => {
          let connections = 0
          let requests = 0
          const perSocket = new WeakMap<net.Socket, On>()
          const server = http.createServer((req, res) => {
            requests++
            const seen = perSocket.get(req.socket)!
            const on = { socket: seen.socket, request: seen.request }
            perSocket.set(req.socket, { socket: seen.socket, request: seen.request + 1 })
            req.resume()
            req.on("end", () => handle(req, res, on))
          })
          server.on("connection", (socket: net.Socket) => perSocket.set(socket, { socket: connections++, request: 0 }))
          server.listen(0, "127.0.0.1", () => {
            const { port } = server.address() as net.AddressInfo
            resolve({ url: `http://127.0.0.1:${port}`, server, connections: () => connections, requests: () => requests })
          })
        }
      )
    ),
    ({ server }) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        })
      )
  )

const answer = (res: http.ServerResponse, body: string | Buffer = sse, headers: http.OutgoingHttpHeaders = {}) => {
  res.writeHead(200, { "content-type": "text/event-stream", ...headers })
  res.end(body)
}

const clientFor = (url: string, timeoutMs?: number) =>
  ModelClient.ModelClient.pipe(
    Effect.provide(AnthropicModel.layer({ apiKey: Redacted.make("k"), baseURL: url, ...(timeoutMs ? { timeoutMs } : {}) }))
  )

/** The events of one request, or its failure. */
const run = (client: ModelClient.ModelClient["Type"]) =>
  Stream.runCollect(client.stream(request)).pipe(
    Effect.map((items) => Chunk.toReadonlyArray(items).filter(ModelClient.isEvent)),
    Effect.either
  )

describe("HttpTransport", () => {
  it.scopedLive("keeps one socket alive across rounds: the server sees one connection for five requests", () =>
    Effect.gen(function*() {
      const server = yield* serve((_req, res) => answer(res))
      const client = yield* clientFor(server.url)
      for (let i = 0; i < 5; i++) {
        const result = yield* run(client)
        assert.deepStrictEqual(result, Either.right(events))
      }
      assert.deepStrictEqual([server.requests(), server.connections()], [5, 1])
    }))

  it.scopedLive("a kept-alive socket the server reset before answering is replaced, and the request succeeds", () =>
    Effect.gen(function*() {
      // The second request on the first socket meets a reset, as when a server closes an idle socket.
      const server = yield* serve((req, res, on) => on.socket === 0 && on.request === 1 ? req.socket.destroy() : answer(res))
      const client = yield* clientFor(server.url)
      assert.deepStrictEqual(yield* run(client), Either.right(events))
      assert.deepStrictEqual(yield* run(client), Either.right(events))
      assert.deepStrictEqual([server.requests(), server.connections()], [3, 2])
    }))

  it.scopedLive("a reset on a fresh socket before any answer is a ConnectionError with the socket's code", () =>
    Effect.gen(function*() {
      const server = yield* serve((req) => req.socket.destroy())
      const client = yield* clientFor(server.url)
      const result = yield* run(client)
      assert.isTrue(Either.isLeft(result))
      const error = Either.isLeft(result) ? result.left : undefined
      assert.deepStrictEqual(
        error?._tag === "ConnectionError" ? [error._tag, error.code, error.firstContact] : error?._tag,
        ["ConnectionError", "ECONNRESET", true]
      )
      assert.deepStrictEqual([server.requests(), server.connections()], [1, 1])
    }))

  it.scopedLive("a reset mid-body fails the stream with StreamTruncated, naming the broken connection", () =>
    Effect.gen(function*() {
      const cut = sse.indexOf("event: content_block_delta")
      const server = yield* serve((req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write(sse.slice(0, cut), () => setTimeout(() => req.socket.destroy(), 20))
      })
      const client = yield* clientFor(server.url)
      const items = Chunk.toReadonlyArray(yield* Stream.runCollect(Stream.either(client.stream(request))))
      const got = items.filter(Either.isRight).map((e) => e.right).filter(ModelClient.isEvent)
      const failures = items.filter(Either.isLeft).map((e) => e.left)
      assert.deepStrictEqual(got, events.slice(0, 2))
      assert.deepStrictEqual(failures.map((f) => [f._tag, f.message]), [[
        "StreamTruncated",
        "The stream broke off before message_stop: terminated"
      ]])
    }))

  it.scopedLive("an abort mid-body fails the body's read with an AbortError and closes the server's socket", () =>
    Effect.gen(function*() {
      let closed = false
      const server = yield* serve((req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write(sse.slice(0, 100))
        req.socket.on("close", () => (closed = true))
      })
      const fetch = HttpTransport.make()
      const controller = new AbortController()
      const response = yield* Effect.promise(() =>
        fetch(`${server.url}/v1/messages`, { method: "POST", body: "{}", signal: controller.signal })
      )
      const body = HttpTransport.bodyOf(response)!
      let first = body.read()
      while (first === undefined) {
        yield* Effect.promise(body.wait)
        first = body.read()
      }
      assert.strictEqual(Buffer.from(first!).toString("utf8"), sse.slice(0, 100))
      controller.abort()
      const error = yield* Effect.promise(async () => {
        for (;;) {
          try {
            if (body.read() === undefined) await body.wait()
          } catch (e) {
            return e as Error
          }
        }
      })
      assert.strictEqual(error.name, "AbortError")
      const deadline = Date.now() + 2_000
      while (!closed && Date.now() < deadline) yield* Effect.sleep("10 millis")
      assert.isTrue(closed)
    }))

  it.scopedLive("the SDK's timeout aborts a request that gets no answer: a ConnectionError 'Request timed out'", () =>
    Effect.gen(function*() {
      const server = yield* serve(() => undefined)
      const client = yield* clientFor(server.url, 200)
      const result = yield* run(client)
      const error = Either.isLeft(result) ? result.left : undefined
      assert.deepStrictEqual([error?._tag, error?.message], ["ConnectionError", "Request timed out"])
    }))

  it.scopedLive("a gzip-compressed answer is decompressed, as Node's fetch does", () =>
    Effect.gen(function*() {
      const server = yield* serve((_req, res) => answer(res, zlib.gzipSync(sse), { "content-encoding": "gzip" }))
      const client = yield* clientFor(server.url)
      assert.deepStrictEqual(yield* run(client), Either.right(events))
    }))

  it.scopedLive("an error status's body reaches the SDK through the Response's web stream", () =>
    Effect.gen(function*() {
      const server = yield* serve((_req, res) => {
        res.writeHead(429, { "content-type": "application/json", "request-id": "req_9", "retry-after": "7" })
        res.end(JSON.stringify({ type: "error", error: { type: "rate_limit_error", message: "slow down" } }))
      })
      const client = yield* clientFor(server.url)
      const result = yield* run(client)
      const error = Either.isLeft(result) ? result.left : undefined
      assert.deepStrictEqual(
        error?._tag === "RateLimited" ? [error._tag, error.message, error.requestId, error.status] : error,
        ["RateLimited", "slow down", "req_9", 429]
      )
    }))

  it.scopedLive("an embedder's own fetch (Options.fetch) carries every request instead of the default transport", () =>
    Effect.gen(function*() {
      const server = yield* serve((_req, res) => answer(res))
      const seen: Array<string> = []
      const own: typeof globalThis.fetch = (input, init) => {
        seen.push(String(input instanceof Request ? input.url : input))
        return globalThis.fetch(input, init)
      }
      const client = yield* ModelClient.ModelClient.pipe(
        Effect.provide(AnthropicModel.layer({ apiKey: Redacted.make("k"), baseURL: server.url, fetch: own }))
      )
      assert.deepStrictEqual(yield* run(client), Either.right(events))
      assert.deepStrictEqual(yield* run(client), Either.right(events))
      assert.deepStrictEqual(seen, [`${server.url}/v1/messages`, `${server.url}/v1/messages`])
    }))

  it("a configured proxy keeps Node's own fetch", () => {
    assert.isTrue(HttpTransport.proxyConfigured({ HTTPS_PROXY: "http://proxy:3128" }))
    assert.isTrue(HttpTransport.proxyConfigured({ http_proxy: "http://proxy:3128" }))
    assert.isFalse(HttpTransport.proxyConfigured({ HTTPS_PROXY: "" }))
    assert.isFalse(HttpTransport.proxyConfigured({}))
  })

  it("a waiting reader wakes once for every read of one event-loop turn, in order, and a full body stops its stream", async () => {
    const stream = new PassThrough()
    const body = HttpTransport.bodyFromReadable(stream, () => false, () => stream.destroy())
    const reads: Array<string> = []
    const readAll = async () => {
      for (;;) {
        const bytes = body.read()
        if (bytes === null) return
        if (bytes === undefined) await body.wait()
        else reads.push(Buffer.from(bytes).toString())
      }
    }
    const done = readAll()
    // Two network reads in one turn (two immediates queued together run in one check phase, with
    // microtasks between them; two timers can land in different turns on a busy machine), then one
    // in a later turn.
    setImmediate(() => stream.write("a"))
    setImmediate(() => stream.write("b"))
    while (reads.length === 0) await new Promise((resolve) => setImmediate(resolve))
    stream.end("c")
    await done
    assert.deepStrictEqual(reads, ["ab", "c"])

    // Unread, a body takes 256 KB, then stops taking bytes until it is read.
    const full = new PassThrough()
    const unread = HttpTransport.bodyFromReadable(full, () => false, () => full.destroy())
    for (let i = 0; i < 8; i++) full.write(Buffer.alloc(64 * 1024))
    await new Promise((resolve) => setTimeout(resolve, 20))
    assert.isTrue(full.isPaused())
    assert.strictEqual((unread.read() as Uint8Array).byteLength, 256 * 1024)
    assert.isFalse(full.isPaused())
  })
})
