/**
 * The base `ModelClient`: `@anthropic-ai/sdk`'s `messages.create({ stream: true })` over real HTTP,
 * yielding the raw events (not the `MessageStream` helper, which copies its whole snapshot on every
 * delta). The SDK sends the request; the kernel reads the event stream itself (`SseDecoder`), a
 * network read at a time. The SDK's own retries are off: the kernel owns retries.
 *
 * @since 0.1.0
 */
import Anthropic, { APIError } from "@anthropic-ai/sdk"
import type * as FileSystem from "@effect/platform/FileSystem"
import type { ErrorType } from "@anthropic-ai/sdk/resources/shared"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as CheapStream from "../internal/cheapStream.js"
import * as ChunkedStream from "../internal/chunkedStream.js"
import { toParams } from "../message/Message.js"
import * as BaseUrl from "./BaseUrl.js"
import * as Credentials from "./Credentials.js"
import * as EventJson from "./EventJson.js"
import * as HttpTransport from "./HttpTransport.js"
import * as JsonAnswer from "./JsonAnswer.js"
import * as RequestJson from "./RequestJson.js"
import { MissingCredentials } from "./Credentials.js"
import { type Item, ModelClient } from "./ModelClient.js"
import * as ModelError from "./ModelError.js"
import * as ModelErrorClassifier from "./ModelErrorClassifier.js"
import type { ModelRequest } from "./ModelRequest.js"
import { type OnEvent, SseDecoder } from "./SseDecoder.js"
import { ping } from "./StreamEvent.js"
import * as ModelCapabilities from "./ModelCapabilities.js"
import * as Thinking from "./Thinking.js"

/** The model used when neither a flag nor `ANTHROPIC_MODEL` names one. @category Configuration */
export const DEFAULT_MODEL = "claude-sonnet-4-6"

/** Options of the Anthropic client. @category Models */
export interface Options {
  readonly apiKey?: Redacted.Redacted | undefined
  readonly authToken?: Redacted.Redacted | undefined
  readonly baseURL?: string | undefined
  /** Per-request HTTP timeout (ms); default 10 minutes, as Claude Code (`API_TIMEOUT_MS`). */
  readonly timeoutMs?: number | undefined
  /** What models can do about thinking, over `Thinking.defaultTable` (a model's entry replaces the default's). */
  readonly thinkingModels?: Thinking.Table | undefined
  /**
   * What models can do (`ModelCapabilities`, default its table): the betas each request to a model
   * carries, and thinking overrides (under `thinkingModels`).
   */
  readonly models?: ModelCapabilities.Table | undefined
  /**
   * The `fetch` the SDK sends through (an embedder's own: a proxy dispatcher, instrumentation).
   * Default: a keep-alive `HttpTransport`, or Node's `fetch` when a proxy is configured.
   */
  readonly fetch?: typeof globalThis.fetch | undefined
}

/** The `fetch` for `options`: theirs, or the default transport (see {@link Options.fetch}). */
const fetchFor = (options: Options): typeof globalThis.fetch | undefined =>
  options.fetch ?? (HttpTransport.proxyConfigured() ? undefined : HttpTransport.make())

/** Neither `ANTHROPIC_API_KEY` nor `ANTHROPIC_AUTH_TOKEN` is set (see `Credentials`). @category Errors */
export { MissingCredentials }

/** `ANTHROPIC_MODEL` from the environment, or the default model. @category Configuration */
export const modelConfig: Config.Config<string> = Config.string("ANTHROPIC_MODEL").pipe(
  Config.withDefault(DEFAULT_MODEL)
)

/** The client options from `ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN`, `ANTHROPIC_BASE_URL`, `API_TIMEOUT_MS`. @category Configuration */
export const optionsConfig: Config.Config<Options> = Config.all({
  apiKey: Config.option(Config.redacted("ANTHROPIC_API_KEY")),
  authToken: Config.option(Config.redacted("ANTHROPIC_AUTH_TOKEN")),
  baseURL: Config.option(Config.string("ANTHROPIC_BASE_URL")),
  timeoutMs: Config.option(Config.integer("API_TIMEOUT_MS"))
}).pipe(Config.map((o) => ({
  apiKey: Option.getOrUndefined(o.apiKey),
  authToken: Option.getOrUndefined(o.authToken),
  baseURL: Option.getOrUndefined(o.baseURL),
  timeoutMs: Option.getOrUndefined(o.timeoutMs)
})))

/**
 * The client options from the environment ({@link optionsConfig}) with the capability table of
 * `KEEL_MODELS_FILE` (`ModelCapabilities.tableConfig`).
 *
 * @category Configuration
 */
export const optionsWithModels: Effect.Effect<
  Options,
  import("effect/ConfigError").ConfigError | ModelCapabilities.InvalidModels,
  FileSystem.FileSystem
> = Effect.zipWith(optionsConfig, ModelCapabilities.tableConfig, (options, models) => ({ ...options, models }))

/**
 * The Messages API request body for a kernel request. Its keys come in the order the API builds its
 * cache prefix (tools, system, messages), so the bytes two requests share are the prefix the cache
 * shares (see `PromptCaching`).
 *
 * @category Conversions
 */
export const toBody = (
  request: ModelRequest,
  thinkingModels: Thinking.Table = Thinking.defaultTable
): Anthropic.Messages.MessageCreateParamsStreaming => ({
  ...(request.thinking !== undefined
    ? Thinking.resolve(request.thinking, request.model, request.max_tokens, thinkingModels).params
    : {}),
  ...request.params,
  model: request.model,
  max_tokens: request.max_tokens,
  ...(request.tools !== undefined && request.tools.length > 0
    ? { tools: request.tools as Array<Anthropic.Messages.Tool> }
    : {}),
  ...(request.system !== undefined ? { system: request.system as string | Array<Anthropic.Messages.TextBlockParam> } : {}),
  // Thinking blocks go back only to the model that wrote them, and never last in an answer.
  messages: toParams(Thinking.forModel(request.messages, request.model)),
  stream: true
})

/**
 * The `anthropic-beta` header a request needs (its model's betas, its thinking parameters'), or none.
 *
 * @category Conversions
 */
export const toHeaders = (
  request: ModelRequest,
  thinkingModels: Thinking.Table = Thinking.defaultTable,
  models: ModelCapabilities.Table = ModelCapabilities.defaultTable
): Record<string, string> => {
  const thinking = request.thinking === undefined
    ? []
    : Thinking.resolve(request.thinking, request.model, request.max_tokens, thinkingModels).betas
  const betas = [...new Set([...ModelCapabilities.of(request.model, models).betas, ...thinking])]
  return betas.length > 0 ? { "anthropic-beta": betas.join(",") } : {}
}

/** The `APIError` an `error` event carries, as the SDK builds it (no status: its `error.type` decides). */
const streamError = (data: string, headers: Headers): APIError => {
  let body: unknown
  try {
    body = JSON.parse(data)
  } catch {
    body = data
  }
  const type = (body as { error?: { type?: ErrorType } } | undefined)?.error?.type
  return new APIError(undefined, body as object, undefined, headers, type)
}

/** Whether any request of one `ModelClient` has had an HTTP answer (see `ModelError.isUnreachable`). */
interface Contact {
  answered: boolean
}

/**
 * Streams one request through `client`. The SDK sends the request (headers, auth, timeout, HTTP
 * errors); the response body is read here, one network read at a time, and each read's events are
 * decoded synchronously (`SseDecoder`) and handed over as one chunk (see `internal/chunkedStream.ts`),
 * so both the parsing and the Effect cost are paid per read, not per event. A read that completes no
 * event (a `ping`, or part of an event) is passed on as one `ping`, so a watchdog above sees the
 * connection alive. Closing the stream (end, failure, interruption) aborts the HTTP request.
 */
const streamWith = (client: Anthropic, request: ModelRequest, contact: Contact, tables: Tables) =>
  ChunkedStream.make<Item, ModelError.ModelError>((sink) => {
    const controller = new AbortController()
    let received = false
    let settled = false
    const run = async () => {
      const invalid = BaseUrl.check(client.baseURL)
      if (invalid !== undefined) {
        settled = true
        sink.fail(invalid)
        return
      }
      let reader: HttpTransport.Reader | undefined
      let open = false
      try {
        // `messages.create`'s request, with the body serialised here: each message's JSON once.
        const response = await client.post("/v1/messages", {
          body: RequestJson.stringify(toBody(request, tables.thinking)),
          signal: controller.signal,
          headers: { "content-type": "application/json", ...toHeaders(request, tables.thinking, tables.models) },
          stream: true
        }).asResponse()
        received = true
        contact.answered = true
        reader = HttpTransport.readerOf(response)
        if (reader === undefined) throw new ModelError.StreamTruncated({ message: "The response had no body" })
        const headers = response.headers
        open = true
        const kind = JsonAnswer.kindOf(headers.get("content-type"))
        if (kind !== "stream") {
          // Not an event stream: a whole JSON `Message` (some proxies), or not the API at all.
          const limit = kind === "json" ? JsonAnswer.MAX_BYTES : 65_536
          const body = await HttpTransport.readUpTo(reader.read, limit)
          open = !body.complete
          const read = JsonAnswer.read(body.text, kind, {
            contentType: headers.get("content-type"),
            requestId: headers.get("request-id"),
            truncated: !body.complete
          })
          if (read._tag === "Error") throw streamError(read.body, headers)
          if (read._tag === "Malformed") throw read.error
          if (open) reader.cancel()
          open = false
          settled = true
          if (controller.signal.aborted) return
          for (const event of read.events) sink.push(event)
          sink.flush()
          sink.end()
          return
        }
        const decoder = new SseDecoder()
        let stopped = false
        let pushed = 0
        // The SDK's rules: pings and unnamed or empty events are skipped, an `error` event fails the call.
        const onEvent: OnEvent = (type, data) => {
          if (type === "ping" || type === null) return
          if (type === "error") throw streamError(data, headers)
          if (data.length === 0) return
          const event = EventJson.parse(data)
          sink.push(event)
          pushed++
          if (event.type === "message_stop") stopped = true
        }
        for (;;) {
          const value = await reader.read()
          if (value === null) break
          pushed = 0
          decoder.decode(value, onEvent)
          if (pushed === 0) sink.push(ping)
          sink.flush()
          const full = sink.ready()
          if (full !== undefined) await full
        }
        open = false
        decoder.end(onEvent)
        settled = true
        if (controller.signal.aborted) return
        if (stopped) sink.end()
        else sink.fail(new ModelError.StreamTruncated({ message: "The stream ended before message_stop" }))
      } catch (cause) {
        settled = true
        if (controller.signal.aborted) return
        // The body is left unread (an `error` event, malformed JSON): close the connection.
        if (open) reader?.cancel()
        const error = ModelErrorClassifier.fromUnknown(cause)
        if (error._tag !== "ConnectionError") {
          // An HTTP answer, even an error status, shows the API reachable.
          if ("status" in error && error.status !== undefined) contact.answered = true
          sink.fail(error)
        } else if (received) {
          // After a 200 the stream is under way: a broken connection now means a truncated stream.
          sink.fail(
            new ModelError.StreamTruncated({ message: `The stream broke off before message_stop: ${error.cause ?? error.message}` })
          )
        } else {
          sink.fail(
            new ModelError.ConnectionError({
              message: error.message,
              ...(error.cause !== undefined ? { cause: error.cause } : {}),
              ...(error.code !== undefined ? { code: error.code } : {}),
              url: client.baseURL,
              firstContact: !contact.answered
            })
          )
        }
      }
    }
    void run()
    // Abort only a request still open: an abort builds a DOMException and wakes every listener.
    return () => {
      if (!settled) controller.abort()
    }
  })

/** The tables a client sends its requests by. */
interface Tables {
  readonly thinking: Thinking.Table
  readonly models: ModelCapabilities.Table
}

/** The tables of `options`: the capability table's thinking, with `thinkingModels` over it. */
const tablesOf = (options: Pick<Options, "thinkingModels" | "models">): Tables => {
  const models = options.models ?? ModelCapabilities.defaultTable
  return { thinking: { ...ModelCapabilities.thinkingTable(models), ...options.thinkingModels }, models }
}

/**
 * A `ModelClient` over an SDK client with fixed credentials.
 *
 * @category Constructors
 */
export const fromClient = (
  client: Anthropic,
  thinkingModels?: Thinking.Table,
  models?: ModelCapabilities.Table
): ModelClient["Type"] => {
  const contact: Contact = { answered: false }
  const table = tablesOf({ thinkingModels, models })
  return ModelClient.of({ stream: (request) => streamWith(client, request, contact, table) })
}

/**
 * The SDK client for `options` and `auth`, with its retries off, over `options.fetch` or a keep-alive
 * `HttpTransport` (unless a proxy is configured: then over Node's `fetch`, whatever proxy support it has).
 *
 * @category Constructors
 */
export const makeClient = (
  options: Options,
  auth: Credentials.Auth = options,
  fetch: typeof globalThis.fetch | undefined = fetchFor(options)
): Anthropic =>
  new Anthropic({
    ...(fetch !== undefined ? { fetch } : {}),
    apiKey: auth.apiKey !== undefined ? Redacted.value(auth.apiKey) : null,
    // The SDK refuses both at once; like the SDK's own environment lookup, the API key wins.
    authToken: auth.apiKey === undefined && auth.authToken !== undefined ? Redacted.value(auth.authToken) : null,
    ...(options.baseURL !== undefined ? { baseURL: options.baseURL } : {}),
    timeout: options.timeoutMs ?? 600_000,
    maxRetries: 0
  })

/**
 * A `ModelClient` whose requests carry the `Credentials` service's current key or token: after a
 * `refresh` (the retry layer's answer to a 401), the next request uses the new one. The SDK client
 * is rebuilt only when the credentials change.
 *
 * @category Constructors
 */
export const make = (options: Options): Effect.Effect<ModelClient["Type"], never, Credentials.Credentials> =>
  Effect.gen(function*() {
    const credentials = yield* Credentials.Credentials
    let cached: { readonly auth: Credentials.Auth; readonly client: Anthropic } | undefined
    const contact: Contact = { answered: false }
    const table = tablesOf(options)
    // One transport for every client of this layer: a refreshed key keeps the open sockets.
    const fetch = fetchFor(options)
    const clientFor = (auth: Credentials.Auth): Anthropic => {
      if (cached === undefined || !Credentials.equals(cached.auth, auth)) {
        cached = { auth, client: makeClient(options, auth, fetch) }
      }
      return cached.client
    }
    return ModelClient.of({
      stream: (request) =>
        // (`CheapStream.unwrap`: `Stream.unwrap`'s flatten would run every chunk through one more sub-executor.)
        CheapStream.unwrap(Effect.map(credentials.current, (auth) => streamWith(clientFor(auth), request, contact, table)))
    })
  })

/**
 * The `ModelClient` layer over a `Credentials` service (which it also outputs, for the retry
 * layer's refresh on 401).
 *
 * @category Layers
 */
export const layerWithCredentials = (options: Options): Layer.Layer<ModelClient, never, Credentials.Credentials> =>
  Layer.effect(ModelClient, make(options))

/** The `ModelClient` layer for explicit options, with their key or token as fixed `Credentials`. @category Layers */
export const layer = (options: Options): Layer.Layer<ModelClient | Credentials.Credentials, MissingCredentials> =>
  layerWithCredentials(options).pipe(Layer.provideMerge(Credentials.layerStatic(options)))

/**
 * The `ModelClient` layer configured from the environment: `Credentials` from `ANTHROPIC_API_KEY`
 * or `ANTHROPIC_AUTH_TOKEN` (re-read on refresh), the rest from {@link optionsConfig}.
 *
 * @category Layers
 */
export const layerConfig: Layer.Layer<
  ModelClient | Credentials.Credentials,
  MissingCredentials | import("effect/ConfigError").ConfigError
> = Layer.unwrapEffect(Effect.map(optionsConfig, layerWithCredentials)).pipe(
  Layer.provideMerge(Credentials.layerConfig)
)
