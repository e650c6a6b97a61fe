/**
 * A 200 answer that is not an event stream. Some proxies answer a streaming request with the whole
 * `Message` as JSON: it is validated and turned into the events a stream of it would have carried,
 * so the rest of the kernel sees no difference. An error body (`{"type":"error",...}`) is the API's
 * error; anything else (an HTML page, text, JSON of another shape) is a `MalformedResponse`, which
 * is not retried: the base URL or a proxy is wrong, and asking again will not mend it.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as ErrorPage from "./ErrorPage.js"
import { MalformedResponse } from "./ModelError.js"
import type { StreamEvent } from "./StreamEvent.js"

/** The most bytes of a non-streamed answer read. @category Constants */
export const MAX_BYTES = 32 * 1024 * 1024

/** How the body of a 200 answer is to be read, from its content type. @category Models */
export type Kind = "stream" | "json" | "other"

/**
 * `stream` for `text/event-stream` (or no content type, as the SDK reads it), `json` for a JSON
 * type, `other` for anything else.
 *
 * @category Classification
 */
export const kindOf = (contentType: string | null): Kind => {
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase()
  if (type === "" || type === "text/event-stream") return "stream"
  return type === "application/json" || type.endsWith("+json") ? "json" : "other"
}

/** A content block as the API sends it: a `type` and whatever else it carries (kept as is). */
const WireBlock = Schema.Struct({ type: Schema.String }, Schema.Record({ key: Schema.String, value: Schema.Unknown }))

/** The API's `Message`, with unknown fields and block types allowed (they are carried through). @category Schemas */
export const WireMessage = Schema.Struct({
  type: Schema.Literal("message"),
  id: Schema.String,
  role: Schema.Literal("assistant"),
  model: Schema.String,
  content: Schema.Array(WireBlock),
  stop_reason: Schema.optional(Schema.NullOr(Schema.String)),
  stop_sequence: Schema.optional(Schema.NullOr(Schema.String)),
  usage: Schema.Struct(
    { input_tokens: Schema.Number, output_tokens: Schema.Number },
    Schema.Record({ key: Schema.String, value: Schema.Unknown })
  )
}, Schema.Record({ key: Schema.String, value: Schema.Unknown }))

const decodeMessage = Schema.decodeUnknownEither(WireMessage)

/**
 * The events a stream of `message` would carry: each block whole in its `content_block_start`
 * (text, thinking and tool input included), then the stop reason and usage.
 *
 * @category Conversions
 */
export const toEvents = (message: typeof WireMessage.Type): Array<StreamEvent> => {
  const { content, stop_reason, stop_sequence, usage, ...rest } = message
  const events: Array<unknown> = [{
    type: "message_start",
    message: { ...rest, content: [], stop_reason: null, stop_sequence: null, usage }
  }]
  content.forEach((block, index) => {
    events.push({ type: "content_block_start", index, content_block: block }, { type: "content_block_stop", index })
  })
  events.push(
    { type: "message_delta", delta: { stop_reason: stop_reason ?? null, stop_sequence: stop_sequence ?? null }, usage },
    { type: "message_stop" }
  )
  return events as Array<StreamEvent>
}

/** What a non-streamed body holds. @category Models */
export type Read =
  | { readonly _tag: "Message"; readonly events: Array<StreamEvent> }
  | { readonly _tag: "Error"; readonly body: string }
  | { readonly _tag: "Malformed"; readonly error: MalformedResponse }

/**
 * Reads a 200 body that is not an event stream: a `Message` (as its events), the API's error body,
 * or a `MalformedResponse` naming the content type and an excerpt.
 *
 * @category Conversions
 */
export const read = (
  body: string,
  kind: Exclude<Kind, "stream">,
  meta: { readonly contentType: string | null; readonly requestId: string | null; readonly truncated: boolean }
): Read => {
  const malformed = (what: string) =>
    ({
      _tag: "Malformed",
      error: new MalformedResponse({
        message: what,
        status: 200,
        ...(meta.requestId !== null ? { requestId: meta.requestId } : {}),
        ...(meta.contentType !== null ? { contentType: meta.contentType } : {})
      })
    }) as const
  const type = meta.contentType ?? "no content type"
  if (kind === "other") return malformed(`${type}, not an event stream: ${ErrorPage.excerpt(body, meta.contentType ?? undefined)}`)
  if (meta.truncated) return malformed(`a JSON body over ${MAX_BYTES} bytes`)
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch {
    return malformed(`${type} that is not JSON: ${ErrorPage.excerpt(body)}`)
  }
  if (typeof json === "object" && json !== null && (json as { type?: unknown }).type === "error") {
    return { _tag: "Error", body }
  }
  const decoded = decodeMessage(json)
  if (Either.isLeft(decoded)) {
    const issue = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]
    const where = issue !== undefined ? ` (${issue.path.join(".") || "the body"}: ${issue.message})` : ""
    return malformed(`JSON that is not a Message${where}`)
  }
  return { _tag: "Message", events: toEvents(decoded.right) }
}
