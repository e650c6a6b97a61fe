/**
 * A fast path for the entries most of a transcript is made of: `user` and `assistant` entries whose
 * messages hold only text, tool_use, tool_result (of a string or text blocks) and thinking blocks,
 * and the `usage` and `file_state` entries each tool round writes beside them.
 * Such a line is checked field by field, exactly as its Schema checks it, and built with the same
 * classes, the same fields and the same key order as a Schema decode builds; anything else (another
 * block type, a cache mark, a field of the wrong type, a missing one) answers `undefined`, and the
 * line goes through the Schema decoder, which accepts or rejects it and says why.
 *
 * Why: resuming a long session replays every line, and a Schema decode of a message entry costs
 * ~20 µs (most of a 10,000-message replay); these checks cost a small fraction of that. Validation
 * is the same: what this accepts, the Schema accepts and decodes to an equal value (tested on
 * random mutations of real entries).
 *
 * @since 0.1.0
 */
import {
  AssistantMessage,
  type ContentBlock,
  TextBlock,
  ThinkingBlock,
  ToolResultBlock,
  ToolUseBlock,
  Usage,
  UserMessage
} from "../message/Message.js"
import { TokenUsage } from "./TokenUsage.js"
import * as TranscriptEntry from "./TranscriptEntry.js"

type Json = Record<string, unknown>

/**
 * An instance of Schema class `C` from fields that are already checked and complete (every field
 * with a constructor default, the `type`/`role` tag included, is present), with what its
 * constructor with validation off makes: the class's prototype, `fields` assigned in their order.
 * The constructor would copy the fields, look each field's default up and copy them again (a third
 * of a 10,000-message replay); here they are assigned once.
 */
const build = <A>(C: { readonly prototype: A }, fields: Json): A => Object.assign(Object.create(C.prototype as object), fields)
const has = (o: Json, key: string) => Object.prototype.hasOwnProperty.call(o, key)
const isRecord = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)
const isString = (u: unknown): u is string => typeof u === "string"
const isNumber = (u: unknown): u is number => typeof u === "number"
const isNullOr = (u: unknown, check: (u: unknown) => boolean) => u === null || check(u)
/** A field that is absent, or present and passes `check`. */
const optional = (o: Json, key: string, check: (u: unknown) => boolean) => !has(o, key) || check(o[key])
/** Copies `keys` of `from` that are present onto `to`, in order. */
const copy = (to: Json, from: Json, keys: ReadonlyArray<string>) => {
  for (const key of keys) if (has(from, key)) to[key] = from[key]
  return to
}

/** A mark or citations would need their own decoding: those blocks take the Schema path. */
const plain = (o: Json) => !has(o, "cache_control") || o["cache_control"] === null

const text = (o: Json): TextBlock | undefined =>
  isString(o["text"]) && optional(o, "citations", (u) => isNullOr(u, Array.isArray)) && plain(o)
    ? build(TextBlock, copy({ type: "text", text: o["text"] }, o, ["citations", "cache_control"]))
    : undefined

const block = (u: unknown): ContentBlock | undefined => {
  if (!isRecord(u)) return undefined
  switch (u["type"]) {
    case "text":
      return text(u)
    case "tool_use":
      return isString(u["id"]) && isString(u["name"]) && has(u, "input") && plain(u)
        ? build(ToolUseBlock, copy({ type: "tool_use", id: u["id"], name: u["name"], input: u["input"] }, u, ["cache_control"]))
        : undefined
    case "tool_result": {
      if (!isString(u["tool_use_id"]) || !optional(u, "is_error", (v) => typeof v === "boolean") || !plain(u)) return undefined
      let content: unknown = u["content"]
      if (Array.isArray(content)) {
        const blocks: Array<TextBlock> = []
        for (const b of content) {
          const t = isRecord(b) && b["type"] === "text" ? text(b) : undefined
          if (t === undefined) return undefined
          blocks.push(t)
        }
        content = blocks
      } else if (has(u, "content") && !isString(content)) {
        return undefined
      }
      const out: Json = { type: "tool_result", tool_use_id: u["tool_use_id"] }
      if (has(u, "content")) out["content"] = content
      return build(ToolResultBlock, copy(out, u, ["is_error", "cache_control", "toolUseResult"]))
    }
    case "thinking":
      return isString(u["thinking"]) && isString(u["signature"])
        ? build(ThinkingBlock, { type: "thinking", thinking: u["thinking"], signature: u["signature"] })
        : undefined
    default:
      return undefined
  }
}

const blocks = (u: unknown): Array<ContentBlock> | undefined => {
  if (!Array.isArray(u)) return undefined
  const out: Array<ContentBlock> = []
  for (const b of u) {
    const decoded = block(b)
    if (decoded === undefined) return undefined
    out.push(decoded)
  }
  return out
}

const cacheCreation = (u: unknown): unknown =>
  u === null ? null : isRecord(u) && isNumber(u["ephemeral_5m_input_tokens"]) && isNumber(u["ephemeral_1h_input_tokens"])
  ? { ephemeral_5m_input_tokens: u["ephemeral_5m_input_tokens"], ephemeral_1h_input_tokens: u["ephemeral_1h_input_tokens"] }
  : undefined

const usage = (u: unknown): Usage | undefined => {
  if (!isRecord(u) || !isNumber(u["input_tokens"]) || !isNumber(u["output_tokens"])) return undefined
  const nullOrNumber = (v: unknown) => isNullOr(v, isNumber)
  if (!optional(u, "cache_creation_input_tokens", nullOrNumber) || !optional(u, "cache_read_input_tokens", nullOrNumber)) {
    return undefined
  }
  if (!optional(u, "service_tier", (v) => isNullOr(v, isString))) return undefined
  const out = copy({ input_tokens: u["input_tokens"], output_tokens: u["output_tokens"] }, u, [
    "cache_creation_input_tokens",
    "cache_read_input_tokens"
  ])
  if (has(u, "cache_creation")) {
    const c = cacheCreation(u["cache_creation"])
    if (c === undefined) return undefined
    out["cache_creation"] = c
  }
  return build(Usage, copy(out, u, ["server_tool_use", "service_tier"]))
}

const message = (type: "user" | "assistant", u: unknown): UserMessage | AssistantMessage | undefined => {
  if (!isRecord(u) || u["role"] !== type) return undefined
  if (type === "user") {
    const content = isString(u["content"]) ? u["content"] : blocks(u["content"])
    return content === undefined ? undefined : build(UserMessage, { role: "user", content })
  }
  const content = blocks(u["content"])
  if (content === undefined) return undefined
  const nullOrString = (v: unknown) => isNullOr(v, isString)
  if (!optional(u, "id", isString) || !optional(u, "model", isString)) return undefined
  if (!optional(u, "stop_reason", nullOrString) || !optional(u, "stop_sequence", nullOrString)) return undefined
  const out = copy({ role: "assistant", content }, u, ["id", "model", "stop_reason", "stop_sequence"])
  if (has(u, "usage")) {
    const decoded = usage(u["usage"])
    if (decoded === undefined) return undefined
    out["usage"] = decoded
  }
  return build(AssistantMessage, out)
}

/**
 * A `user` or `assistant` entry decoded without Schema when it has the common shape (see the
 * module's doc); `undefined` for any other line, to be decoded by its Schema.
 *
 * @category Decoding
 */
export const messageEntry = (json: Json): TranscriptEntry.Entry | undefined => {
  const type = json["type"]
  if ((type !== "user" && type !== "assistant") || !envelopeOk(json)) return undefined
  const decoded = message(type, json["message"])
  if (decoded === undefined) return undefined
  const { cwd, parentUuid, sessionId, timestamp, uuid, version } = json
  return { type, uuid, parentUuid, sessionId, timestamp, cwd, version, message: decoded } as TranscriptEntry.Entry
}

/** Whether the fields every entry carries are as the Schema requires. */
const envelopeOk = (json: Json): boolean =>
  isString(json["uuid"]) && isNullOr(json["parentUuid"], isString) && isString(json["sessionId"]) &&
  isString(json["timestamp"]) && isString(json["cwd"]) && json["version"] === TranscriptEntry.VERSION

/**
 * A record's values through `value`, in the record's order; `undefined` if one fails, or for a key
 * that would not be an own field when assigned (`__proto__`: the Schema's decoding has the say).
 */
const record = (u: unknown, value: (v: unknown) => unknown): Json | undefined => {
  if (!isRecord(u)) return undefined
  const out: Json = {}
  for (const key of Object.keys(u)) {
    if (key === "__proto__") return undefined
    const decoded = value(u[key])
    if (decoded === undefined) return undefined
    out[key] = decoded
  }
  return out
}

const tokenUsageKeys = Object.keys(TokenUsage.fields)

/** A model's token totals: each counter absent (0, the Schema's default) or a number. */
const tokenUsage = (u: unknown): TokenUsage | undefined => {
  if (!isRecord(u)) return undefined
  const out: Json = {}
  for (const key of tokenUsageKeys) {
    // A JSON value is never `undefined`: undefined here is a counter the line leaves out.
    const v = u[key] === undefined ? 0 : u[key]
    if (!isNumber(v)) return undefined
    out[key] = v
  }
  return build(TokenUsage, out)
}

/**
 * Any entry of the common shapes without Schema: `user` and `assistant` entries (see
 * {@link messageEntry}), and the `usage` and `file_state` entries a tool round writes beside them;
 * `undefined` for any other line, to be decoded by its Schema.
 *
 * @category Decoding
 */
export const entry = (json: Json): TranscriptEntry.Entry | undefined => {
  const type = json["type"]
  if (type === "user" || type === "assistant") return messageEntry(json)
  if ((type !== "usage" && type !== "file_state") || !envelopeOk(json)) return undefined
  const { cwd, parentUuid, sessionId, timestamp, uuid, version } = json
  if (type === "file_state") {
    const files = record(json["files"], (v) => (isNumber(v) ? v : undefined))
    return files === undefined
      ? undefined
      : { type, uuid, parentUuid, sessionId, timestamp, cwd, version, files } as TranscriptEntry.Entry
  }
  const models = record(json["models"], tokenUsage)
  return models === undefined
    ? undefined
    : { type, uuid, parentUuid, sessionId, timestamp, cwd, version, models } as TranscriptEntry.Entry
}
