/**
 * `EventJson.parse` is `JSON.parse`, only faster on the common delta shapes: on generated event
 * data, in the API's shape and mutated out of it (whitespace, key order, extra fields, cut short,
 * characters replaced or inserted), it returns the same value with its keys in the same order, or
 * throws the same error.
 */
import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as EventJson from "../../src/model/EventJson.js"

/** What `f` makes of `data`: its value with every object's keys in order, or the error's message. */
const outcome = (f: (data: string) => unknown, data: string): string => {
  try {
    // `JSON.stringify` writes keys in their order, so equal strings mean equal values, equal order.
    return `value ${JSON.stringify(f(data))}`
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`
  }
}

const same = (data: string) => assert.strictEqual(outcome(EventJson.parse, data), outcome(JSON.parse, data), data)

/** Strings as a model streams them: mostly plain text, with quotes, backslashes, control and astral characters. */
const text = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme" }),
  fc.string({ unit: fc.constantFrom("a", " ", "\"", "\\", "\n", "\t", "\u0000", "\u001f", "é", "😀", "\ud800", "}") })
)

const deltas = [
  (s: string) => ({ type: "text_delta", text: s }),
  (s: string) => ({ type: "input_json_delta", partial_json: s }),
  (s: string) => ({ type: "thinking_delta", thinking: s }),
  (s: string) => ({ type: "signature_delta", signature: s }),
  (s: string) => ({ type: "citations_delta", citation: { cited_text: s } })
]

/** The data line of a delta event, as the API writes it. */
const apiData = fc.tuple(fc.nat({ max: 1e12 }), fc.integer({ min: 0, max: deltas.length - 1 }), text).map(
  ([index, kind, s]) => JSON.stringify({ type: "content_block_delta", index, delta: deltas[kind]!(s) })
)

/** `data` changed the ways a hand-written fast path could get wrong. */
const mutated = fc.tuple(apiData, fc.nat(), fc.nat(), fc.constantFrom(" ", "\"", "\\", "}", "0", "-", ".", "e", ",", "\u0001", "x", "")).map(
  ([data, at, kind, char]) => {
    const i = at % (data.length + 1)
    switch (kind % 4) {
      case 0:
        return data.slice(0, i) + char + data.slice(i)
      case 1:
        return data.slice(0, i) + char + data.slice(i + 1)
      case 2:
        return data.slice(0, i)
      default:
        return data.slice(0, i) + data.slice(i + 1)
    }
  }
)

describe("EventJson.parse", () => {
  it("reads the API's delta shapes as JSON.parse does", () => {
    fc.assert(fc.property(apiData, same), { numRuns: 2000 })
  })

  it("is JSON.parse on data out of those shapes, invalid JSON included", () => {
    fc.assert(fc.property(mutated, same), { numRuns: 5000 })
  })

  it("is JSON.parse on the shapes around the fast path", () => {
    const cases = [
      `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"token. "}}`,
      `{"type":"content_block_delta","index":12,"delta":{"type":"text_delta","text":"a\\"b\\\\c\\n\\u00e9"}}`,
      `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\\"path\\": \\"a"}}`,
      `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":""}}`,
      `{"type":"content_block_delta","index":01,"delta":{"type":"text_delta","text":"x"}}`,
      `{"type":"content_block_delta","index":-1,"delta":{"type":"text_delta","text":"x"}}`,
      `{"type":"content_block_delta","index":1.5,"delta":{"type":"text_delta","text":"x"}}`,
      `{"type":"content_block_delta","index":1e2,"delta":{"type":"text_delta","text":"x"}}`,
      `{"type":"content_block_delta","index":12345678901234567890,"delta":{"type":"text_delta","text":"x"}}`,
      `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x","extra":1}}`,
      `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"},"extra":1}`,
      `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}} `,
      `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}}`,
      `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}`,
      `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x\\"}}`,
      `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x\\q"}}`,
      `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x\u0001"}}`,
      `{"type":"content_block_delta","index":0,"delta":{"text":"x","type":"text_delta"}}`,
      `{"index":0,"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}`,
      `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"__proto__"}}`,
      `{"type":"message_stop"}`,
      ``
    ]
    for (const data of cases) same(data)
  })
})
