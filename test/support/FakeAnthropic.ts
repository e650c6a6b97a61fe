/**
 * A loopback fake of the Anthropic Messages API (`POST /v1/messages`) on `node:http`, speaking the
 * real wire format (SSE framing, JSON error bodies, `request-id` headers), so that the real
 * `@anthropic-ai/sdk` and the real `keel` binary can be tested against it. Each request takes the
 * next item of a script; every request is recorded.
 *
 * @since 0.1.0
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import {
  AssistantMessage,
  type ContentBlock,
  type StopReason,
  TextBlock,
  ToolUseBlock
} from "../../packages/core/src/message/Message.js"
import { fromMessage, type StreamEvent } from "../../packages/core/src/model/StreamEvent.js"
import * as TestModel from "../../packages/core/src/model/TestModel.js"

/** The API's error body: `{"type":"error","error":{type,message}}`. */
export interface ErrorDetail {
  readonly type: string
  readonly message: string
}

/** A 200 `text/event-stream` response carrying `events`, with ways to misbehave. */
export interface SseResponse {
  readonly kind: "sse"
  /** The events to send, in order, each as one `event: <type>\ndata: <json>\n\n` frame. */
  readonly events: ReadonlyArray<StreamEvent>
  /** Extra response headers. */
  readonly headers?: Record<string, string>
  /** Send one `ping` event right after `message_start`, as the API does (default true). Pings do not count as events below. */
  readonly ping?: boolean
  /** Send only this many events, then close the connection without `message_stop` (see `truncateMode`). */
  readonly truncateAfter?: number
  /**
   * How `truncateAfter` closes: `"end"` (default) ends the chunked body cleanly, so the client sees
   * an orderly end of stream; `"destroy"` destroys the socket mid-body, so the client sees the
   * connection close before the chunked body ends (a transport error).
   */
  readonly truncateMode?: "end" | "destroy"
  /** Send only this many events, then keep the connection open and silent until the client goes away. */
  readonly stallAfter?: number
  /** After the events, send `event: error` with body `{"type":"error","error":{type,message}}`, then end. */
  readonly midStreamError?: ErrorDetail
  /** Write the body in writes of this many bytes (may split lines and UTF-8 sequences); default: one write per event. */
  readonly chunkBytes?: number
  /**
   * After `after` events, send `pings` ping frames, each after `everyMs` of real time: a stream that
   * is slow but alive. (Not with `chunkBytes`.)
   */
  readonly keepAlive?: { readonly after: number; readonly pings: number; readonly everyMs: number }
}

/** A non-2xx JSON error response, shaped exactly as the API's. */
export interface ErrorResponse {
  readonly kind: "error"
  readonly status: number
  /** `error.type`, e.g. `rate_limit_error`, `overloaded_error`. */
  readonly type: string
  /** `error.message`. */
  readonly message: string
  /** Extra response headers (`retry-after`, `x-should-retry`, ...). */
  readonly headers?: Record<string, string>
}

/**
 * Any answer, byte for byte: a status, headers and a body (an HTML error page from a proxy, a plain
 * JSON `Message`, text), for what the API itself never sends but a proxy or a wrong URL does.
 */
export interface RawResponse {
  readonly kind: "raw"
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
}

/** One scripted response. */
export type ScriptedResponse = SseResponse | ErrorResponse | RawResponse

/** A function of the request body (parsed JSON) and the 0-based request index that picks a response. */
export type ScriptFunction = (body: any, index: number) => ScriptedResponse

/** One item of a script: a response, or a function that picks one. */
export type ScriptItem = ScriptedResponse | ScriptFunction

/** A request the fake received on `POST /v1/messages`. */
export interface RecordedRequest {
  /** The parsed JSON body. */
  readonly body: any
  /** The body exactly as it arrived (UTF-8), for byte-level comparisons (prompt-cache prefixes). */
  readonly raw: string
  /** The request headers, lower-cased as node reports them. */
  readonly headers: Record<string, string | Array<string> | undefined>
  /** The URL path, without the query string. */
  readonly path: string
  /** When the whole request had arrived (`performance.now()`, ms), for timing the client's retries. */
  readonly receivedAt: number
}

/** A running fake server. */
export interface FakeAnthropic {
  /** The base URL, for `ANTHROPIC_BASE_URL` or the SDK's `baseURL`: `http://127.0.0.1:PORT`. */
  readonly url: string
  /** The port listened on. */
  readonly port: number
  /** Every `POST /v1/messages` request, in arrival order (request n is answered by script item n). */
  readonly requests: Array<RecordedRequest>
  /** How many responses lost their client before the response ended (client aborts, disconnects). */
  readonly aborted: number
  /** Stops the server, dropping any connection still open. */
  readonly close: () => Promise<void>
}

/** Options of {@link start}. */
export interface StartOptions {
  /** The port to listen on; default 0 (any free port). */
  readonly port?: number
  /** Answers requests past the end of the script; without it they get a 500 `api_error`. */
  readonly fallback?: ScriptFunction
}

const frame = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`

const errorBody = (error: ErrorDetail, requestId: string) => ({
  type: "error",
  error: { type: error.type, message: error.message },
  request_id: requestId
})

/** The SSE frames of a response, events limited by `truncateAfter` / `stallAfter`, pings and the error event included. */
/** A frame to write, or a pause (real time) before the next one. */
type Frame = string | { readonly pauseMs: number }

const framesOf = (response: SseResponse): Array<Frame> => {
  const limit = Math.min(response.truncateAfter ?? Infinity, response.stallAfter ?? Infinity)
  const events = response.events.slice(0, limit)
  const ping = response.ping ?? true
  const frames: Array<Frame> = []
  let pinged = false
  for (const [i, event] of events.entries()) {
    if (response.keepAlive !== undefined && i === response.keepAlive.after) {
      for (let p = 0; p < response.keepAlive.pings; p++) {
        frames.push({ pauseMs: response.keepAlive.everyMs }, frame("ping", { type: "ping" }))
      }
    }
    frames.push(frame(event.type, event))
    if (ping && !pinged && event.type === "message_start") {
      frames.push(frame("ping", { type: "ping" }))
      pinged = true
    }
  }
  if (response.midStreamError !== undefined) {
    frames.push(frame("error", { type: "error", error: { ...response.midStreamError } }))
  }
  return frames
}

/**
 * The message that `events` stream, whole: what the API's non-streaming answer to the same request
 * is (content blocks with their deltas applied, the final stop reason and usage).
 */
export const assemble = (events: ReadonlyArray<StreamEvent>): Record<string, unknown> => {
  let message: Record<string, any> = {}
  const blocks: Array<Record<string, any>> = []
  const json: Array<string> = []
  for (const event of events as ReadonlyArray<any>) {
    switch (event.type) {
      case "message_start":
        message = { ...event.message, content: [] }
        break
      case "content_block_start":
        blocks[event.index] = { ...event.content_block }
        json[event.index] = ""
        break
      case "content_block_delta": {
        const block = blocks[event.index]!
        const delta = event.delta
        if (delta.type === "text_delta") block.text = (block.text ?? "") + delta.text
        if (delta.type === "input_json_delta") json[event.index] += delta.partial_json
        if (delta.type === "thinking_delta") block.thinking = (block.thinking ?? "") + delta.thinking
        if (delta.type === "signature_delta") block.signature = delta.signature
        break
      }
      case "content_block_stop": {
        const block = blocks[event.index]!
        if (block.type === "tool_use" && json[event.index] !== "") block.input = JSON.parse(json[event.index]!)
        break
      }
      case "message_delta":
        message = { ...message, ...event.delta, usage: { ...message.usage, ...event.usage } }
        break
    }
  }
  return { ...message, content: blocks }
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/**
 * Starts the fake on 127.0.0.1 with `script`: request n gets item n; a request past the end gets a
 * 500 `api_error` "fake server: no scripted response for request N" (unless `options.fallback`
 * answers it). Other paths get a 404 `not_found_error`.
 */
export const start = (script: ReadonlyArray<ScriptItem>, options: StartOptions = {}): Promise<FakeAnthropic> => {
  const requests: Array<RecordedRequest> = []
  const open = new Set<http.ServerResponse>()
  const selfClosed = new WeakSet<http.ServerResponse>()
  let aborted = 0
  let closing = false
  let served = 0

  const sendError = (res: http.ServerResponse, status: number, error: ErrorDetail, requestId: string, headers: Record<string, string> = {}) => {
    const payload = JSON.stringify(errorBody(error, requestId))
    res.writeHead(status, {
      ...headers,
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(payload)),
      "request-id": requestId
    })
    res.end(payload)
  }

  const sendSse = async (res: http.ServerResponse, response: SseResponse, requestId: string) => {
    res.writeHead(200, {
      ...response.headers,
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "request-id": requestId
    })
    res.flushHeaders()
    const frames = framesOf(response)
    const writes: Array<Buffer | { readonly pauseMs: number }> = []
    if (response.chunkBytes !== undefined && response.chunkBytes > 0) {
      const all = Buffer.from(frames.filter((f) => typeof f === "string").join(""), "utf8")
      for (let i = 0; i < all.length; i += response.chunkBytes) writes.push(all.subarray(i, i + response.chunkBytes))
    } else {
      for (const f of frames) writes.push(typeof f === "string" ? Buffer.from(f, "utf8") : f)
    }
    for (const chunk of writes) {
      if (res.destroyed) return
      if ("pauseMs" in chunk) {
        await new Promise<void>((resolve) => setTimeout(resolve, chunk.pauseMs))
        continue
      }
      if (!res.write(chunk)) await new Promise<void>((resolve) => res.once("drain", resolve).once("close", resolve))
      await tick()
    }
    if (res.destroyed) return
    if (response.stallAfter !== undefined) return
    if (response.truncateAfter !== undefined && response.truncateMode === "destroy") {
      selfClosed.add(res)
      res.socket?.destroy()
      return
    }
    res.end()
  }

  const respond = async (res: http.ServerResponse, response: ScriptedResponse, requestId: string, stream: boolean) => {
    if (response.kind === "raw") {
      res.writeHead(response.status, {
        ...response.headers,
        "content-length": String(Buffer.byteLength(response.body)),
        "request-id": response.headers["request-id"] ?? requestId
      })
      res.end(response.body)
    } else if (response.kind === "error") {
      sendError(res, response.status, { type: response.type, message: response.message }, requestId, response.headers)
    } else if (!stream) {
      // A request without `stream: true` gets the whole message as one JSON body, as the API answers.
      const payload = JSON.stringify(assemble(response.events))
      res.writeHead(200, {
        ...response.headers,
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(payload)),
        "request-id": requestId
      })
      res.end(payload)
    } else {
      await sendSse(res, response, requestId)
    }
  }

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    open.add(res)
    res.on("close", () => {
      open.delete(res)
      if (!res.writableFinished && !closing && !selfClosed.has(res)) aborted++
    })
    const path = (req.url ?? "/").split("?")[0]!
    const chunks: Array<Buffer> = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const raw = Buffer.concat(chunks).toString("utf8")
    if (req.method !== "POST" || path !== "/v1/messages") {
      sendError(res, 404, { type: "not_found_error", message: `Not found: ${req.method} ${path}` }, "req_not_found")
      return
    }
    let body: any
    try {
      body = JSON.parse(raw)
    } catch {
      sendError(res, 400, { type: "invalid_request_error", message: "fake server: the body is not JSON" }, "req_bad_json")
      return
    }
    const index = served++
    const requestId = `req_${index + 1}`
    requests.push({ body, raw, headers: { ...req.headers }, path, receivedAt: performance.now() })
    const item: ScriptItem | undefined = script[index] ?? options.fallback
    if (item === undefined) {
      sendError(res, 500, {
        type: "api_error",
        message: `fake server: no scripted response for request ${index + 1}`
      }, requestId)
      return
    }
    let response: ScriptedResponse
    try {
      response = typeof item === "function" ? item(body, index) : item
    } catch (error) {
      sendError(res, 500, {
        type: "api_error",
        message: `fake server: script item ${index + 1} threw: ${error instanceof Error ? error.message : String(error)}`
      }, requestId)
      return
    }
    await respond(res, response, requestId, body.stream === true)
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((error) => {
      if (!res.headersSent) {
        sendError(res, 500, { type: "api_error", message: `fake server: ${String(error)}` }, "req_internal")
      } else {
        res.destroy()
      }
    })
  })

  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject)
      const port = (server.address() as AddressInfo).port
      resolve({
        url: `http://127.0.0.1:${port}`,
        port,
        requests,
        get aborted() {
          return aborted
        },
        close: () =>
          new Promise<void>((done) => {
            closing = true
            for (const res of open) res.destroy()
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })
}

/** {@link start} as a scoped resource: the server closes when the scope does. */
export const scoped = (
  script: ReadonlyArray<ScriptItem>,
  options: StartOptions = {}
): Effect.Effect<FakeAnthropic, never, Scope.Scope> =>
  Effect.acquireRelease(Effect.promise(() => start(script, options)), (fake) => Effect.promise(() => fake.close()))

/** Options of the SSE helpers: the `SseResponse` knobs plus how to cut deltas. */
export type SseOptions = Omit<SseResponse, "kind" | "events"> & {
  /** Split text and tool input into deltas of at most this many characters (default 16). */
  readonly chunkSize?: number
}

/** The SSE response that streams `message`, via `StreamEvent.fromMessage`. */
export const sseFromMessage = (message: AssistantMessage, options: SseOptions = {}): SseResponse => {
  const { chunkSize, ...rest } = options
  return { kind: "sse", events: fromMessage(message, chunkSize !== undefined ? { chunkSize } : {}), ...rest }
}

/** Options of {@link textReply} and {@link toolUseReply}: the message's metadata plus the SSE knobs. */
export type ReplyOptions = SseOptions & {
  readonly id?: string
  readonly model?: string
  readonly stopReason?: StopReason
  readonly usage?: { readonly input_tokens: number; readonly output_tokens: number }
}

/** A tool call for {@link toolUseReply}; `id` defaults to a fresh `toolu_fake_<n>`. */
export interface ToolCall {
  readonly name: string
  readonly input: unknown
  readonly id?: string
}

let counter = 0

const isToolCall = (b: ToolCall | ContentBlock): b is ToolCall => !("type" in b)

/** The assistant message a reply helper streams: `TestModel.message`'s defaults, model `claude-fake`. */
export const message = (content: ReadonlyArray<ContentBlock>, options: ReplyOptions = {}): AssistantMessage => {
  const { id, model, stopReason, usage } = options
  return TestModel.message(content, {
    model: model ?? "claude-fake",
    ...(id !== undefined ? { id } : {}),
    ...(stopReason !== undefined ? { stopReason } : {}),
    ...(usage !== undefined ? { usage } : {})
  })
}

const sseOptions = (options: ReplyOptions): SseOptions => {
  const { id: _id, model: _model, stopReason: _stopReason, usage: _usage, ...rest } = options
  return rest
}

/** A response streaming one text block. */
export const textReply = (text: string, options: ReplyOptions = {}): SseResponse =>
  sseFromMessage(message([new TextBlock({ text })], options), sseOptions(options))

/** A response streaming tool calls (and any content blocks given, e.g. a leading text block); stop reason `tool_use`. */
export const toolUseReply = (blocks: ReadonlyArray<ToolCall | ContentBlock>, options: ReplyOptions = {}): SseResponse =>
  sseFromMessage(
    message(
      blocks.map((b) =>
        isToolCall(b) ? new ToolUseBlock({ id: b.id ?? `toolu_fake_${++counter}`, name: b.name, input: b.input }) : b
      ),
      options
    ),
    sseOptions(options)
  )

/** A non-2xx API error response. */
export const errorReply = (status: number, type: string, message: string, headers?: Record<string, string>): ErrorResponse =>
  headers !== undefined ? { kind: "error", status, type, message, headers } : { kind: "error", status, type, message }

/** A {@link RawResponse}: `body` as is, with `status` and `headers`. */
export const rawReply = (status: number, headers: Record<string, string>, body: string): RawResponse => ({
  kind: "raw",
  status,
  headers,
  body
})
