/**
 * The classifier of model failures: anything the SDK or the transport threw becomes one typed
 * `ModelError`, decided by the HTTP status, the `error.type` of the API's error body and the
 * headers (a mid-stream `error` event by its `error.type` alone), never by free text except the
 * one message the API documents ("prompt is too long"). A body that is not the API's error JSON
 * (a proxy's page) is summarised by its status's reason and its title or first line.
 *
 * @since 0.1.0
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError } from "@anthropic-ai/sdk"
import * as ErrorPage from "./ErrorPage.js"
import {
  ConnectionError,
  Forbidden,
  InvalidRequest,
  isModelError,
  type ModelError,
  Overloaded,
  PromptTooLong,
  RateLimited,
  RequestTooLarge,
  type RetryHeaders,
  ServerError,
  StreamTruncated,
  Unauthorized
} from "./ModelError.js"

const headerValue = (headers: unknown, name: string): string | undefined => {
  if (headers === null || headers === undefined) return undefined
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined
  const v = (headers as Record<string, unknown>)[name]
  return typeof v === "string" ? v : undefined
}

const retryHeaders = (headers: unknown): typeof RetryHeaders.Type | undefined => {
  const out: { -readonly [K in keyof typeof RetryHeaders.Type]: string } = {}
  for (const name of ["retry-after", "retry-after-ms", "x-should-retry"] as const) {
    const v = headerValue(headers, name)
    if (v !== undefined) out[name] = v
  }
  return Object.keys(out).length > 0 ? out : undefined
}

const PROMPT_TOO_LONG = "prompt is too long"

/** The most characters of a server's error message kept. */
const MAX_MESSAGE = 2_000

/**
 * The message of an error answer whose body is not the API's error JSON (an HTML page from a proxy,
 * plain text, another JSON shape): the status's reason and the page's title or first line, bounded.
 * The SDK gave such a body as the message, after `"<status> "`.
 */
const foreignBody = (error: APIError, status: number | undefined): string => {
  const prefix = status !== undefined ? `${status} ` : ""
  const text = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message
  if (status === undefined) return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text
  const page = ErrorPage.excerpt(text, headerValue(error.headers, "content-type"))
  return `${ErrorPage.reason(status)}: ${page}`
}

/**
 * Classifies an `APIError` by status, `error.type` and headers. A mid-stream `error` event arrives
 * as an `APIError` without a status; its `error.type` decides.
 */
const fromApiError = (error: APIError): ModelError => {
  const body = error.error as { error?: { type?: string; message?: string } } | undefined
  const errorType = error.type ?? body?.error?.type ?? undefined
  const status = typeof error.status === "number" ? error.status : undefined
  const serverMessage = body?.error?.message ?? foreignBody(error, status)
  const cfRay = headerValue(error.headers, "cf-ray")
  const fields = {
    message: serverMessage,
    ...(status !== undefined ? { status } : {}),
    ...(error.requestID ? { requestId: error.requestID } : {}),
    ...(cfRay ? { cfRay } : {}),
    ...(errorType ? { errorType } : {}),
    ...(retryHeaders(error.headers) ? { headers: retryHeaders(error.headers)! } : {})
  }
  if (status === undefined) {
    switch (errorType) {
      case "overloaded_error":
        return new Overloaded(fields)
      case "rate_limit_error":
        return new RateLimited(fields)
      case "invalid_request_error":
        return new InvalidRequest(fields)
      case "authentication_error":
        return new Unauthorized(fields)
      case "permission_error":
        return new Forbidden(fields)
      case "request_too_large":
        return new RequestTooLarge(fields)
      default:
        return new ServerError(fields)
    }
  }
  if (status === 401) return new Unauthorized(fields)
  if (status === 403) return new Forbidden(fields)
  if (status === 429) return new RateLimited(fields)
  if (status === 529 || errorType === "overloaded_error") return new Overloaded(fields)
  if (status === 413 || errorType === "request_too_large") return new RequestTooLarge(fields)
  if (status === 400 && serverMessage.toLowerCase().startsWith(PROMPT_TOO_LONG)) {
    return new PromptTooLong(fields)
  }
  if (status >= 500) return new ServerError(fields)
  return new InvalidRequest(fields)
}

/**
 * Turns anything the SDK or the transport threw into a `ModelError`.
 *
 * @category Constructors
 */
export const fromUnknown = (error: unknown): ModelError => {
  if (isModelError(error)) return error
  if (error instanceof APIConnectionTimeoutError) {
    return new ConnectionError({ message: "Request timed out", cause: String(error.cause ?? error.message) })
  }
  if (error instanceof APIConnectionError) {
    // Node's fetch wraps the socket error: `TypeError("fetch failed")` whose `cause` has the code.
    type Cause = { code?: string; message?: string; cause?: Cause }
    const cause = error.cause as Cause | undefined
    const inner = cause?.cause
    const code = cause?.code || inner?.code
    return new ConnectionError({
      message: `Could not reach the API: ${code || inner?.message || cause?.message || error.message}`,
      cause: String(inner?.message || cause?.message || error.message),
      ...(code ? { code } : {})
    })
  }
  if (error instanceof APIError) return fromApiError(error)
  if (error instanceof SyntaxError) {
    return new StreamTruncated({ message: `The stream carried malformed JSON: ${error.message}` })
  }
  const message = error instanceof Error ? error.message : String(error)
  return new ConnectionError({ message: `The connection failed: ${message}`, cause: message })
}
