/**
 * The encoding side of `TranscriptFastPath`: the entries that carry messages (`user`, `assistant`,
 * and `rewrite` with its inline messages) encoded without Schema, when every message holds only
 * text, tool_use, tool_result (of a string or text blocks) and thinking blocks without cache marks.
 * Each value is checked as its Schema's encoding checks it and copied with the same keys in the
 * same order, so `JSON.stringify` of the result is byte for byte the Schema's line; anything else
 * answers `undefined`, and the entry goes through the Schema encoder.
 *
 * Why: the first turn of a resumed session may rewrite most of its history (a stage such as snip
 * replacing thousands of old tool results): a Schema encode of a message costs ~15 µs, a copy a
 * small fraction of that. Tested against the Schema on random messages.
 *
 * @since 0.1.0
 */
import {
  AssistantMessage,
  type Message,
  TextBlock,
  ThinkingBlock,
  ToolResultBlock,
  ToolUseBlock,
  Usage,
  UserMessage
} from "../message/Message.js"
type Json = Record<string, unknown>

/**
 * A transcript entry as far as this encoder reads it (the entry types are `TranscriptEntry`'s,
 * which encodes its lines with this module: the fields are checked here, not assumed).
 *
 * @category Models
 */
export interface Encodable {
  readonly type: string
  readonly message?: unknown
  readonly trigger?: unknown
  readonly from?: unknown
  readonly length?: unknown
  readonly ops?: unknown
}

const has = (o: object, key: string) => Object.prototype.hasOwnProperty.call(o, key)
const isString = (u: unknown): u is string => typeof u === "string"
const isNumber = (u: unknown): u is number => typeof u === "number"
const isNullOr = (u: unknown, check: (u: unknown) => boolean) => u === null || check(u)
/** A field that is absent, or present and undefined (an optional field's "absent") or passing `check`. */
const optional = (o: Json, key: string, check: (u: unknown) => boolean) => !has(o, key) || o[key] === undefined || check(o[key])
/** Copies `keys` of `from` that are present onto `to`, in order. */
const copy = (to: Json, from: Json, keys: ReadonlyArray<string>) => {
  for (const key of keys) if (has(from, key)) to[key] = from[key]
  return to
}
/** No cache mark: a mark takes the Schema path (its encoding drops the keys it does not know). */
const unmarked = (o: Json) => !has(o, "cache_control") || o["cache_control"] == null

const text = (b: Json): Json | undefined =>
  b["type"] === "text" && isString(b["text"]) && optional(b, "citations", (u) => isNullOr(u, Array.isArray)) && unmarked(b)
    ? copy({ type: "text", text: b["text"] }, b, ["citations", "cache_control"])
    : undefined

const block = (b: unknown): Json | undefined => {
  if (b instanceof TextBlock) return text(b as unknown as Json)
  if (b instanceof ToolUseBlock) {
    const o = b as unknown as Json
    return o["type"] === "tool_use" && isString(o["id"]) && isString(o["name"]) && unmarked(o)
      ? copy({ type: "tool_use", id: o["id"], name: o["name"], input: o["input"] }, o, ["cache_control"])
      : undefined
  }
  if (b instanceof ToolResultBlock) {
    const o = b as unknown as Json
    if (o["type"] !== "tool_result" || !isString(o["tool_use_id"]) || !optional(o, "is_error", (v) => typeof v === "boolean") || !unmarked(o)) return undefined
    const out: Json = { type: "tool_result", tool_use_id: o["tool_use_id"] }
    if (has(o, "content")) {
      const content = o["content"]
      if (Array.isArray(content)) {
        const texts: Array<Json> = []
        for (const c of content) {
          const t = c instanceof TextBlock ? text(c as unknown as Json) : undefined
          if (t === undefined) return undefined
          texts.push(t)
        }
        out["content"] = texts
      } else if (isString(content) || content === undefined) {
        out["content"] = content
      } else {
        return undefined
      }
    }
    return copy(out, o, ["is_error", "cache_control", "toolUseResult"])
  }
  if (b instanceof ThinkingBlock) {
    const o = b as unknown as Json
    return o["type"] === "thinking" && isString(o["thinking"]) && isString(o["signature"])
      ? { type: "thinking", thinking: o["thinking"], signature: o["signature"] }
      : undefined
  }
  return undefined
}

const blocks = (u: unknown): Array<Json> | undefined => {
  if (!Array.isArray(u)) return undefined
  const out: Array<Json> = []
  for (const b of u) {
    const encoded = block(b)
    if (encoded === undefined) return undefined
    out.push(encoded)
  }
  return out
}

const usage = (u: unknown): Json | undefined => {
  if (!(u instanceof Usage)) return undefined
  const o = u as unknown as Json
  const nullOrNumber = (v: unknown) => isNullOr(v, isNumber)
  if (!isNumber(o["input_tokens"]) || !isNumber(o["output_tokens"])) return undefined
  if (!optional(o, "cache_creation_input_tokens", nullOrNumber) || !optional(o, "cache_read_input_tokens", nullOrNumber)) {
    return undefined
  }
  if (!optional(o, "service_tier", (v) => isNullOr(v, isString))) return undefined
  const out = copy({ input_tokens: o["input_tokens"], output_tokens: o["output_tokens"] }, o, [
    "cache_creation_input_tokens",
    "cache_read_input_tokens"
  ])
  if (has(o, "cache_creation")) {
    const c = o["cache_creation"]
    if (c === null || c === undefined) {
      out["cache_creation"] = c
    } else {
      const r = c as Json
      if (typeof c !== "object" || !isNumber(r["ephemeral_5m_input_tokens"]) || !isNumber(r["ephemeral_1h_input_tokens"])) {
        return undefined
      }
      out["cache_creation"] = {
        ephemeral_5m_input_tokens: r["ephemeral_5m_input_tokens"],
        ephemeral_1h_input_tokens: r["ephemeral_1h_input_tokens"]
      }
    }
  }
  return copy(out, o, ["server_tool_use", "service_tier"])
}

/**
 * A message's encoding without Schema, for the common shapes (see the module's doc); `undefined`
 * for any other message.
 *
 * @category Encoding
 */
export const message = (m: Message): Json | undefined => {
  if (m instanceof UserMessage) {
    if (m.role !== "user") return undefined
    const content = isString(m.content) ? m.content : blocks(m.content)
    return content === undefined ? undefined : { role: "user", content }
  }
  if (!(m instanceof AssistantMessage) || m.role !== "assistant") return undefined
  const o = m as unknown as Json
  const content = blocks(o["content"])
  if (content === undefined) return undefined
  const nullOrString = (v: unknown) => isNullOr(v, isString)
  if (!optional(o, "id", isString) || !optional(o, "model", isString)) return undefined
  if (!optional(o, "stop_reason", nullOrString) || !optional(o, "stop_sequence", nullOrString)) return undefined
  const out = copy({ role: "assistant", content }, o, ["id", "model", "stop_reason", "stop_sequence"])
  if (has(o, "usage") && o["usage"] !== undefined) {
    const encoded = usage(o["usage"])
    if (encoded === undefined) return undefined
    out["usage"] = encoded
  } else if (has(o, "usage")) {
    out["usage"] = undefined
  }
  return out
}

/** The fields every entry carries, checked, in the Schema's order, after `type`; `undefined` if one is off. */
const envelope = (entry: Json, version: number): Json | undefined => {
  const { cwd, parentUuid, sessionId, timestamp, uuid } = entry
  if (!isString(uuid) || !isNullOr(parentUuid, isString) || !isString(sessionId)) return undefined
  if (!isString(timestamp) || !isString(cwd) || entry["version"] !== version) return undefined
  return { type: entry["type"], uuid, parentUuid, sessionId, timestamp, cwd, version }
}

/**
 * An entry's encoding without Schema: a `user` or `assistant` entry, or a `rewrite` without a
 * compaction record, whose messages all have a common shape; `undefined` for any other entry, to
 * be encoded by its Schema. `version` is the format version the Schema requires.
 *
 * @category Encoding
 */
export const entry = (e: Encodable, version: number): Json | undefined => {
  const o = e as unknown as Json
  if (e.type === "user" || e.type === "assistant") {
    if (!(e.message instanceof (e.type === "user" ? UserMessage : AssistantMessage))) return undefined
    const head = envelope(o, version)
    const encoded = head && message(e.message as Message)
    if (encoded === undefined) return undefined
    head!["message"] = encoded
    return head
  }
  if (e.type !== "rewrite" || (has(o, "compaction") && o["compaction"] !== undefined)) return undefined
  const head = envelope(o, version)
  if (head === undefined || !isString(e.trigger) || !Number.isInteger(e.from) || !Number.isInteger(e.length)) return undefined
  if (!Array.isArray(e.ops)) return undefined
  const ops: Array<Json> = []
  for (const op of e.ops as ReadonlyArray<{ readonly keep?: unknown; readonly message?: unknown }>) {
    if ("keep" in op) {
      const keep: unknown = op.keep
      if (!Array.isArray(keep) || keep.length !== 2 || !Number.isInteger(keep[0]) || !Number.isInteger(keep[1])) return undefined
      ops.push({ keep: [keep[0], keep[1]] })
    } else {
      if (!(op.message instanceof UserMessage || op.message instanceof AssistantMessage)) return undefined
      const encoded = message(op.message)
      if (encoded === undefined) return undefined
      ops.push({ message: encoded })
    }
  }
  head["trigger"] = e.trigger
  if (has(o, "compaction")) head["compaction"] = undefined
  head["from"] = e.from
  head["length"] = e.length
  head["ops"] = ops
  return head
}
