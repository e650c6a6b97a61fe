/**
 * Typed model failures. Each failure of a model call is one of these tags, classified from the HTTP
 * status, the headers and the API's error body (`error.type`), never from free text, except the one
 * message the API documents ("prompt is too long"): see `ModelErrorClassifier`. Retry, fallback and
 * compaction decide on the tag.
 *
 * @since 0.1.0
 */
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"

/** Headers that matter for retry decisions, lower-cased. @category Schemas */
export const RetryHeaders = Schema.Struct({
  "retry-after": Schema.optional(Schema.String),
  "retry-after-ms": Schema.optional(Schema.String),
  "x-should-retry": Schema.optional(Schema.String)
})

const api = {
  message: Schema.String,
  status: Schema.optional(Schema.Number),
  requestId: Schema.optional(Schema.String),
  /** Cloudflare's `cf-ray` header, when a Cloudflare proxy answered (its pages carry no request id). */
  cfRay: Schema.optional(Schema.String),
  errorType: Schema.optional(Schema.String),
  headers: Schema.optional(RetryHeaders),
  /** How many requests were made before giving up (set by the retry layer). */
  attempts: Schema.optional(Schema.Number),
  /**
   * The delay the server asked for (`retry-after`), when it was longer than the retry policy waits
   * and the call gave up at once for that (set by the retry layer).
   */
  refusedDelayMs: Schema.optional(Schema.Number)
}

/** 429, or a `rate_limit_error` event mid-stream. @category Errors */
export class RateLimited extends Schema.TaggedError<RateLimited>("@keel/ModelError/RateLimited")("RateLimited", api) {}
/** 529, or an `overloaded_error` event that arrives mid-stream after a 200. @category Errors */
export class Overloaded extends Schema.TaggedError<Overloaded>("@keel/ModelError/Overloaded")("Overloaded", api) {}
/** Any other 5xx, or an `api_error` event mid-stream. @category Errors */
export class ServerError extends Schema.TaggedError<ServerError>("@keel/ModelError/ServerError")("ServerError", api) {}
/**
 * The request never got an HTTP answer: reset, refused, DNS, TLS, timeout. `code` is the system
 * error's (`ECONNREFUSED`, `ENOTFOUND`, ...), `url` the API's base URL, and `firstContact` says that
 * no request to it had been answered yet (see {@link isUnreachable}).
 *
 * @category Errors
 */
export class ConnectionError extends Schema.TaggedError<ConnectionError>("@keel/ModelError/ConnectionError")(
  "ConnectionError",
  {
    message: Schema.String,
    cause: Schema.optional(Schema.String),
    attempts: Schema.optional(Schema.Number),
    code: Schema.optional(Schema.String),
    url: Schema.optional(Schema.String),
    firstContact: Schema.optional(Schema.Boolean)
  }
) {}
/** 401: the key or token was refused. @category Errors */
export class Unauthorized extends Schema.TaggedError<Unauthorized>("@keel/ModelError/Unauthorized")("Unauthorized", api) {}
/** 403: the key may not do this. @category Errors */
export class Forbidden extends Schema.TaggedError<Forbidden>("@keel/ModelError/Forbidden")("Forbidden", api) {}
/** The conversation does not fit the model's context window (400 "prompt is too long"). @category Errors */
export class PromptTooLong extends Schema.TaggedError<PromptTooLong>("@keel/ModelError/PromptTooLong")(
  "PromptTooLong",
  api
) {}
/**
 * 413, or `error.type` `request_too_large`: the request is over the API's size limit in bytes (not
 * in tokens: compacting a short conversation will not shrink it; large images or files will).
 *
 * @category Errors
 */
export class RequestTooLarge extends Schema.TaggedError<RequestTooLarge>("@keel/ModelError/RequestTooLarge")(
  "RequestTooLarge",
  api
) {}
/**
 * A 200 answer that is neither an event stream nor a JSON message (an HTML page, a proxy's text):
 * most likely `ANTHROPIC_BASE_URL` points at something that is not the Messages API. `contentType`
 * is the answer's, `excerpt` its title or first line (bounded).
 *
 * @category Errors
 */
export class MalformedResponse extends Schema.TaggedError<MalformedResponse>("@keel/ModelError/MalformedResponse")(
  "MalformedResponse",
  {
    message: Schema.String,
    status: Schema.optional(Schema.Number),
    requestId: Schema.optional(Schema.String),
    contentType: Schema.optional(Schema.String),
    attempts: Schema.optional(Schema.Number)
  }
) {}
/**
 * The base URL cannot be fetched whatever the network does: not a URL, not http(s), or a port the
 * fetch standard blocks (`:1`, `:9`, `:6000`, ...). A configuration error, never retried.
 *
 * @category Errors
 */
export class InvalidBaseUrl extends Schema.TaggedError<InvalidBaseUrl>("@keel/ModelError/InvalidBaseUrl")(
  "InvalidBaseUrl",
  { message: Schema.String, url: Schema.String, attempts: Schema.optional(Schema.Number) }
) {}
/** Any other 4xx: the request itself is wrong and retrying will not help (408 and 409 excepted, by status). @category Errors */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>("@keel/ModelError/InvalidRequest")(
  "InvalidRequest",
  api
) {}
/** No stream event arrived within the idle timeout. @category Errors */
export class StreamIdle extends Schema.TaggedError<StreamIdle>("@keel/ModelError/StreamIdle")("StreamIdle", {
  message: Schema.String,
  idleMs: Schema.Number,
  attempts: Schema.optional(Schema.Number)
}) {}
/** The stream ended, or its connection broke after the 200, before `message_stop`. @category Errors */
export class StreamTruncated extends Schema.TaggedError<StreamTruncated>("@keel/ModelError/StreamTruncated")(
  "StreamTruncated",
  { message: Schema.String, attempts: Schema.optional(Schema.Number) }
) {}

/** Every way a model call can fail. @category Errors */
export const ModelError = Schema.Union(
  RateLimited,
  Overloaded,
  ServerError,
  ConnectionError,
  Unauthorized,
  Forbidden,
  PromptTooLong,
  InvalidRequest,
  StreamIdle,
  StreamTruncated,
  RequestTooLarge,
  MalformedResponse,
  InvalidBaseUrl
)
/** @category Errors */
export type ModelError = typeof ModelError.Type

const modelErrorTags = new Set([
  "RateLimited",
  "Overloaded",
  "ServerError",
  "ConnectionError",
  "Unauthorized",
  "Forbidden",
  "PromptTooLong",
  "InvalidRequest",
  "StreamIdle",
  "StreamTruncated",
  "RequestTooLarge",
  "MalformedResponse",
  "InvalidBaseUrl"
])

/** Whether a value is a `ModelError`. @category Guards */
export const isModelError = (u: unknown): u is ModelError =>
  Predicate.hasProperty(u, "_tag") && typeof u._tag === "string" && modelErrorTags.has(u._tag)

/**
 * A one-line description for people: what failed, with status and request id when known.
 *
 * @category Formatting
 */
export const describe = (error: ModelError): string => {
  const status = "status" in error && error.status !== undefined ? ` (HTTP ${error.status})` : ""
  const ids = [
    "requestId" in error && error.requestId !== undefined ? `request ${error.requestId}` : undefined,
    "cfRay" in error && error.cfRay !== undefined ? `cf-ray ${error.cfRay}` : undefined
  ].filter((id) => id !== undefined)
  const request = ids.length > 0 ? ` [${ids.join(", ")}]` : ""
  const refused = "refusedDelayMs" in error && error.refusedDelayMs !== undefined
    ? `; the server asked to retry after ${waitFor(error.refusedDelayMs)}, longer than Keel waits, so it gave up`
    : ""
  const attempts = (error.attempts !== undefined && error.attempts > 1 ? ` after ${error.attempts} attempts` : "") + refused
  const base = `${error._tag}${status}: ${error.message}${request}`
  switch (error._tag) {
    case "Overloaded":
      return error.attempts !== undefined && error.attempts > 1 ? `Repeated 529 Overloaded errors${attempts}: ${base}` : base
    case "Unauthorized":
      return `Authentication failed${attempts}: ${base}. Check ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN).`
    case "RequestTooLarge":
      return `Request too large (max ${REQUEST_LIMIT}${status})${attempts}: ${error.message}${request}. ` +
        "Compacting will not help unless the conversation holds large images, files or tool results: " +
        "remove them (or /compact), or start a new session."
    case "MalformedResponse":
      return `malformed response (HTTP ${error.status ?? 200}): check ANTHROPIC_BASE_URL or your proxy (${error.message})${request}`
    case "InvalidBaseUrl":
      return `ANTHROPIC_BASE_URL ${JSON.stringify(error.url)} cannot be used: ${error.message}. Check ANTHROPIC_BASE_URL.`
    case "ConnectionError": {
      if (error.url === undefined) return `${base}${attempts}`
      const what = error.code !== undefined ? `${error.code}${CODE_MEANING[error.code] ?? ""}` : error.cause ?? error.message
      // The advice goes with the final failure (attempts set), not with each retry's notice.
      const advice = error.attempts !== undefined ? ". Check ANTHROPIC_BASE_URL and your network connection." : ""
      return `Could not reach the API at ${error.url} (${what})${attempts}${advice}`
    }
    default:
      return `${base}${attempts}`
  }
}

/** The Messages API's request size limit. */
const REQUEST_LIMIT = "32 MB"

/** `45 s`, `12 min`, `3 h`: a server's requested delay, for people. */
const waitFor = (ms: number): string =>
  ms < 120_000 ? `${Math.ceil(ms / 1000)} s` : ms < 7_200_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 3_600_000)} h`

const CODE_MEANING: Readonly<Record<string, string>> = {
  ECONNREFUSED: ": connection refused",
  ENOTFOUND: ": no such host",
  EAI_AGAIN: ": host name lookup failed",
  EHOSTUNREACH: ": host unreachable",
  ENETUNREACH: ": network unreachable"
}

/** System error codes of a request that found no server to answer it. */
const UNREACHABLE_CODES: ReadonlySet<string> = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"])

/**
 * Whether the API looks unreachable as configured: a connection error that found no server (refused,
 * no such host, no route: by its system error code) on first contact, before any request to that
 * base URL had been answered. Most likely a mistyped `ANTHROPIC_BASE_URL` or no network, which
 * retrying for minutes will not mend (the retry policy gives it a short budget).
 *
 * @category Predicates
 */
export const isUnreachable = (error: ModelError): boolean =>
  error._tag === "ConnectionError" && error.firstContact === true && error.code !== undefined &&
  UNREACHABLE_CODES.has(error.code)

/** The HTTP status of a failure, or `null` when there was no HTTP answer. @category Accessors */
export const statusOf = (error: ModelError): number | null =>
  "status" in error && error.status !== undefined ? error.status : null

/**
 * The same failure, recording how many requests were made (and, when the retries ended because the
 * server asked for a longer delay than the policy waits, that delay).
 *
 * @category Combinators
 */
export const withAttempts = (error: ModelError, attempts: number, refusedDelayMs?: number): ModelError => {
  // Schema classes validate on construction: copy the declared fields, then set `attempts`.
  const C = error.constructor as (new(fields: object) => ModelError) & { readonly fields: Record<string, unknown> }
  const props: Record<string, unknown> = {}
  for (const key of Object.keys(C.fields)) {
    const value = (error as unknown as Record<string, unknown>)[key]
    if (key !== "_tag" && value !== undefined) props[key] = value
  }
  return new C({ ...props, attempts, ...(refusedDelayMs !== undefined && "refusedDelayMs" in C.fields ? { refusedDelayMs } : {}) })
}

/**
 * The failure's category as Claude Code's SDK names it (`SDKAssistantMessageError`), for the
 * `error` field of `system`/`api_retry` messages.
 *
 * @category Accessors
 */
export const category = (
  error: ModelError
):
  | "rate_limit"
  | "overloaded"
  | "server_error"
  | "authentication_failed"
  | "invalid_request"
  | "model_not_found"
  | "unknown" =>
{
  switch (error._tag) {
    case "RateLimited":
      return "rate_limit"
    case "Overloaded":
      return "overloaded"
    case "ServerError":
      return "server_error"
    case "Unauthorized":
    case "Forbidden":
      return "authentication_failed"
    case "InvalidRequest":
      return error.errorType === "not_found_error" ? "model_not_found" : "invalid_request"
    case "PromptTooLong":
    case "RequestTooLarge":
    case "InvalidBaseUrl":
      return "invalid_request"
    case "MalformedResponse":
      return "unknown"
    case "ConnectionError":
    case "StreamIdle":
    case "StreamTruncated":
      return "unknown"
  }
}
