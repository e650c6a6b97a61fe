/**
 * The base `ModelClient`: `@anthropic-ai/sdk`'s `messages.create({ stream: true })` over real HTTP,
 * yielding the raw events (not the `MessageStream` helper, which copies its whole snapshot on every
 * delta). The SDK's own retries are off: the kernel owns retries.
 *
 * @since 0.1.0
 */
import Anthropic from "@anthropic-ai/sdk"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Redacted from "effect/Redacted"
import * as ChunkedStream from "../internal/chunkedStream.js"
import { toParams } from "../message/Message.js"
import * as Credentials from "./Credentials.js"
import { MissingCredentials } from "./Credentials.js"
import { type Item, ModelClient } from "./ModelClient.js"
import * as ModelError from "./ModelError.js"
import type { ModelRequest } from "./ModelRequest.js"
import { ping } from "./StreamEvent.js"

/** The model used when neither a flag nor `ANTHROPIC_MODEL` names one. @category Configuration */
export const DEFAULT_MODEL = "claude-sonnet-4-6"

/** Options of the Anthropic client. @category Models */
export interface Options {
  readonly apiKey?: Redacted.Redacted | undefined
  readonly authToken?: Redacted.Redacted | undefined
  readonly baseURL?: string | undefined
  /** Per-request HTTP timeout (ms); default 10 minutes, as Claude Code (`API_TIMEOUT_MS`). */
  readonly timeoutMs?: number | undefined
}

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
 * The Messages API request body for a kernel request. Its keys come in the order the API builds its
 * cache prefix (tools, system, messages), so the bytes two requests share are the prefix the cache
 * shares (see `PromptCaching`).
 *
 * @category Conversions
 */
export const toBody = (request: ModelRequest): Anthropic.Messages.MessageCreateParamsStreaming => ({
  ...request.params,
  model: request.model,
  max_tokens: request.max_tokens,
  ...(request.tools !== undefined && request.tools.length > 0
    ? { tools: request.tools as Array<Anthropic.Messages.Tool> }
    : {}),
  ...(request.system !== undefined ? { system: request.system as string | Array<Anthropic.Messages.TextBlockParam> } : {}),
  messages: toParams(request.messages),
  stream: true
})

/** The key under which a request's `fetchOptions` carry its read hook (see {@link fetchWithReadHook}). */
const ON_READ: unique symbol = Symbol.for("@keel/core/AnthropicModel/onRead")

/** Called around each network read of a response body. */
interface ReadHook {
  readonly beforeRead: () => void
  readonly afterRead: () => void
}

/**
 * A `fetch` whose response body calls the request's read hook (passed in `fetchOptions` under
 * `ON_READ`, which the SDK spreads into the `RequestInit` it hands to `fetch`) before and after
 * each network read. The SDK parses a chunk's events and hands them over before it reads again, so
 * `beforeRead` marks the end of a batch. (`highWaterMark: 0`: nothing is read ahead of
 * the SDK's own request.) One client carries this fetch for every request: building a client per
 * request (`withOptions`) costs about 1 ms.
 */
const fetchWithReadHook = (base: typeof fetch): typeof fetch => async (input, init) => {
  const onRead = (init as { [ON_READ]?: ReadHook } | undefined)?.[ON_READ]
  const response = await base(input, init)
  if (response.body === null || onRead === undefined) return response
  const reader = response.body.getReader()
  const body = new ReadableStream<Uint8Array>({
    pull: async (controller) => {
      onRead.beforeRead()
      try {
        const { done, value } = await reader.read()
        if (!done) onRead.afterRead()
        if (done) controller.close()
        else controller.enqueue(value)
      } catch (error) {
        controller.error(error)
      }
    },
    cancel: (reason) => reader.cancel(reason)
  }, { highWaterMark: 0 })
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers })
}

/**
 * Streams one request through `client` (whose `fetch` is a {@link fetchWithReadHook}). The SDK
 * parses the SSE stream; its events reach the Effect side in chunks of one network read each (see
 * `internal/chunkedStream.ts`), so the Effect cost is per read, not per event. A read that yields no
 * event (a `ping`, or part of an event) is passed on as one `ping`, so a watchdog above sees the
 * connection alive. Closing the stream (end, failure, interruption) aborts the HTTP request.
 */
const streamWith = (client: Anthropic, request: ModelRequest) =>
  ChunkedStream.make<Item, ModelError.ModelError>((sink) => {
    const controller = new AbortController()
    let received = false
    let settled = false
    let pushed = 0
    let bytes = false
    const hook: ReadHook = {
      beforeRead: () => {
        if (bytes && pushed === 0) sink.push(ping)
        bytes = false
        pushed = 0
        sink.flush()
      },
      afterRead: () => {
        bytes = true
      }
    }
    const run = async () => {
      try {
        const events = await client.messages.create(toBody(request), {
          signal: controller.signal,
          fetchOptions: { [ON_READ]: hook } as Anthropic.RequestOptions["fetchOptions"] & {}
        })
        let stopped = false
        received = true
        for await (const event of events) {
          sink.push(event)
          pushed++
          if (event.type === "message_stop") stopped = true
          const full = sink.ready()
          if (full !== undefined) await full
        }
        settled = true
        if (controller.signal.aborted) return
        if (stopped) sink.end()
        else sink.fail(new ModelError.StreamTruncated({ message: "The stream ended before message_stop" }))
      } catch (cause) {
        settled = true
        if (controller.signal.aborted) return
        const error = ModelError.fromUnknown(cause)
        // After a 200 the stream is under way: a broken connection now means a truncated stream.
        sink.fail(
          received && error._tag === "ConnectionError"
            ? new ModelError.StreamTruncated({ message: `The stream broke off before message_stop: ${error.cause ?? error.message}` })
            : error
        )
      }
    }
    void run()
    // Abort only a request still open: an abort builds a DOMException and wakes every listener.
    return () => {
      if (!settled) controller.abort()
    }
  })

/**
 * A `ModelClient` over an SDK client with fixed credentials. `baseFetch` is the `fetch` the client
 * was given, if not the global one.
 *
 * @category Constructors
 */
export const fromClient = (client: Anthropic, baseFetch: typeof fetch = globalThis.fetch): ModelClient["Type"] => {
  const hooked = client.withOptions({ fetch: fetchWithReadHook(baseFetch) })
  return ModelClient.of({ stream: (request) => streamWith(hooked, request) })
}

/**
 * The SDK client for `options` and `auth`, with its retries off.
 *
 * @category Constructors
 */
export const makeClient = (options: Options, auth: Credentials.Auth = options): Anthropic =>
  new Anthropic({
    apiKey: auth.apiKey !== undefined ? Redacted.value(auth.apiKey) : null,
    // The SDK refuses both at once; like the SDK's own environment lookup, the API key wins.
    authToken: auth.apiKey === undefined && auth.authToken !== undefined ? Redacted.value(auth.authToken) : null,
    ...(options.baseURL !== undefined ? { baseURL: options.baseURL } : {}),
    timeout: options.timeoutMs ?? 600_000,
    maxRetries: 0,
    fetch: fetchWithReadHook(globalThis.fetch)
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
    const clientFor = (auth: Credentials.Auth): Anthropic => {
      if (cached === undefined || !Credentials.equals(cached.auth, auth)) cached = { auth, client: makeClient(options, auth) }
      return cached.client
    }
    return ModelClient.of({
      stream: (request) => Stream.unwrap(Effect.map(credentials.current, (auth) => streamWith(clientFor(auth), request)))
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
