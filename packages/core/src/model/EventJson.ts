/**
 * The JSON of one stream event, parsed. Nearly every event of a long answer is a
 * `content_block_delta` whose data the API writes in one fixed shape, e.g.
 * `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`; such data
 * is read here by comparing it with that shape and copying out the index and the one string, which
 * costs about half of what `JSON.parse` does on it. Anything else (another event, another key order,
 * whitespace, an extra field, a control character where JSON allows none) goes to `JSON.parse`, so
 * the result is always exactly `JSON.parse(data)`'s, keys in the same order, and invalid JSON throws
 * `JSON.parse`'s own error.
 *
 * @since 0.1.0
 */
import type { StreamEvent } from "./StreamEvent.js"

const PREFIX = "{\"type\":\"content_block_delta\",\"index\":"
const DELTA = ",\"delta\":{\"type\":\""

/** The delta types read here, and the key of the one string each carries. */
const TEXT = "text_delta\",\"text\":\""
const JSON_INPUT = "input_json_delta\",\"partial_json\":\""
const THINKING = "thinking_delta\",\"thinking\":\""

/** Parses one event's data: `JSON.parse(data)`, faster for the common delta shapes. @category Parsing */
export const parse = (data: string): StreamEvent => {
  if (!data.startsWith(PREFIX)) return JSON.parse(data)
  // The index: a non-negative integer without leading zeros, as the API writes it.
  let i = PREFIX.length
  let c = data.charCodeAt(i)
  if (!(c >= 48 && c <= 57)) return JSON.parse(data)
  let index = c - 48
  i++
  if (index !== 0) {
    while (i < data.length && (c = data.charCodeAt(i)) >= 48 && c <= 57 && index < 1e9) {
      index = index * 10 + c - 48
      i++
    }
  }
  if (!data.startsWith(DELTA, i)) return JSON.parse(data)
  i += DELTA.length
  let kind: 0 | 1 | 2
  if (data.startsWith(TEXT, i)) {
    kind = 0
    i += TEXT.length
  } else if (data.startsWith(JSON_INPUT, i)) {
    kind = 1
    i += JSON_INPUT.length
  } else if (data.startsWith(THINKING, i)) {
    kind = 2
    i += THINKING.length
  } else return JSON.parse(data)
  // The string: its closing quote, and whether it holds an escape. A character JSON allows only
  // escaped (below U+0020) is left to `JSON.parse` to reject.
  const from = i
  let escaped = false
  for (; i < data.length; i++) {
    c = data.charCodeAt(i)
    if (c === 34) break
    if (c === 92) {
      escaped = true
      i++
    } else if (c < 32) return JSON.parse(data)
  }
  // After the string only the two closing braces: nothing more, nothing between.
  if (i + 3 !== data.length || data.charCodeAt(i + 1) !== 125 || data.charCodeAt(i + 2) !== 125) return JSON.parse(data)
  let value: string
  if (escaped) {
    // The string literal alone, decoded by `JSON.parse` (which also rejects a bad escape).
    try {
      value = JSON.parse(data.slice(from - 1, i + 1))
    } catch {
      return JSON.parse(data)
    }
  } else value = data.slice(from, i)
  switch (kind) {
    case 0:
      return { type: "content_block_delta", index, delta: { type: "text_delta", text: value } }
    case 1:
      return { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: value } }
    case 2:
      return { type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: value } }
  }
}
