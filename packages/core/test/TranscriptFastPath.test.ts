/**
 * The fast path for message entries decodes exactly what their Schema decodes: on entries of every
 * block type and field the kernel writes, and on thousands of random mutations of them (a field
 * removed, a value replaced), whatever it accepts the Schema accepts, decoded to an equal value
 * (same classes, same keys in the same order); what it does not take goes to the Schema.
 */
import { assert, describe, it } from "@effect/vitest"
import { Message, TranscriptEntry } from "@keel/core"
import { Either, Schema } from "effect"
import { entry, messageEntry } from "../src/session/TranscriptFastPath.js"
import { TokenUsage } from "../src/session/TokenUsage.js"

const envelope = (uuid: string) => ({
  uuid,
  parentUuid: "p-" + uuid,
  sessionId: "s1",
  timestamp: "2026-01-01T00:00:00.000Z",
  cwd: "/w",
  version: TranscriptEntry.VERSION
})

const entryOf = (message: Message.Message, uuid: string): TranscriptEntry.Entry =>
  ({ type: message.role, ...envelope(uuid), message }) as TranscriptEntry.Entry

const samples: ReadonlyArray<Message.Message> = [
  Message.user("hello"),
  Message.user([new Message.TextBlock({ text: "a", citations: null }), new Message.TextBlock({ text: "b" })]),
  new Message.UserMessage({
    content: [
      new Message.ToolResultBlock({ tool_use_id: "t1", content: "ok", toolUseResult: { file: { path: "/a" } } }),
      new Message.ToolResultBlock({ tool_use_id: "t2", content: "no", is_error: true, toolUseResult: "Error: no" }),
      new Message.ToolResultBlock({ tool_use_id: "t3", content: [new Message.TextBlock({ text: "x", citations: [] })] }),
      new Message.ToolResultBlock({ tool_use_id: "t4" }),
      new Message.TextBlock({ text: "and a prompt" })
    ]
  }),
  new Message.UserMessage({
    content: [new Message.ImageBlock({ source: { type: "base64", media_type: "image/png", data: "AAAA" } })]
  }),
  new Message.UserMessage({ content: [new Message.TextBlock({ text: "marked", cache_control: { type: "ephemeral" } })] }),
  new Message.AssistantMessage({
    content: [
      new Message.ThinkingBlock({ thinking: "hmm", signature: "sig" }),
      new Message.TextBlock({ text: "I will read it.", citations: null }),
      new Message.ToolUseBlock({ id: "t1", name: "Read", input: { file_path: "a.txt", limit: 3 } }),
      new Message.ToolUseBlock({ id: "t2", name: "Bash", input: null })
    ],
    id: "msg_1",
    model: "claude-test",
    stop_reason: "tool_use",
    stop_sequence: null,
    usage: new Message.Usage({
      input_tokens: 10,
      output_tokens: 5,
      cache_creation_input_tokens: null,
      cache_read_input_tokens: 3,
      cache_creation: { ephemeral_5m_input_tokens: 1, ephemeral_1h_input_tokens: 2 },
      server_tool_use: { web_search_requests: 1 },
      service_tier: "standard"
    })
  }),
  new Message.AssistantMessage({ content: [new Message.TextBlock({ text: "Done." })] }),
  new Message.AssistantMessage({
    content: [new Message.RedactedThinkingBlock({ data: "zzz" }), new Message.TextBlock({ text: "x" })],
    stop_reason: "something_new"
  })
]

const decoders: Record<"user" | "assistant", (u: unknown) => Either.Either<TranscriptEntry.Entry, unknown>> = {
  user: Schema.decodeUnknownEither(TranscriptEntry.schemas.user),
  assistant: Schema.decodeUnknownEither(TranscriptEntry.schemas.assistant)
}

/** The same value, built the same way: equal JSON, and the same class at every object. */
const assertSame = (fast: unknown, slow: unknown, where = "entry") => {
  if (typeof fast !== "object" || fast === null) return assert.strictEqual(fast, slow, where)
  assert.strictEqual(Object.getPrototypeOf(fast), Object.getPrototypeOf(slow), `the class at ${where}`)
  assert.deepStrictEqual(Object.keys(fast), Object.keys(slow as object), `the keys at ${where}`)
  for (const key of Object.keys(fast)) assertSame((fast as any)[key], (slow as any)[key], `${where}.${key}`)
}

/** A deterministic pseudo-random generator (a 32-bit LCG). */
const random = (seed: number) => () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32

/** Every path to a value inside `json`. */
const paths = (json: unknown, at: Array<string | number> = []): Array<Array<string | number>> =>
  typeof json !== "object" || json === null
    ? [at]
    : [at, ...Object.entries(json).flatMap(([k, v]) => paths(v, [...at, Array.isArray(json) ? Number(k) : k]))]

const replacements: ReadonlyArray<unknown> = [null, 0, 1.5, "", "text", "tool_use", true, [], {}, [1], { type: "text" }]

/** One to three mutations of `json`, in place: a value replaced, or a key removed. */
const mutate = (json: unknown, next: () => number) => {
  for (let n = 1 + Math.floor(next() * 3); n > 0; n--) {
    const all = paths(json).filter((p) => p.length > 0)
    const path = all[Math.floor(next() * all.length)]!
    const parent = path.slice(0, -1).reduce((o: any, k) => o[k], json)
    const key = path.at(-1)!
    if (next() < 0.3 && !Array.isArray(parent)) delete parent[key]
    else parent[key] = structuredClone(replacements[Math.floor(next() * replacements.length)])
  }
}

describe("TranscriptFastPath", () => {
  it("decodes the common shapes as the Schema does, and leaves the others to it", () => {
    const taken = samples.map((m, i) => {
      const json = JSON.parse(TranscriptEntry.encodeLine(entryOf(m, `u${i}`)))
      const fast = messageEntry(json)
      const slow = decoders[json.type as "user" | "assistant"](json)
      assert.isTrue(Either.isRight(slow))
      if (fast !== undefined) assertSame(fast, Either.getOrThrow(slow))
      return fast !== undefined
    })
    // Image blocks, cache marks and redacted thinking take the Schema path; the rest the fast one.
    assert.deepStrictEqual(taken, [true, true, true, false, false, true, true, false])
  })

  it("on random mutations of those entries, what it accepts the Schema accepts and decodes alike", () => {
    const next = random(18)
    let accepted = 0
    let left = 0
    for (let round = 0; round < 4000; round++) {
      const json = JSON.parse(TranscriptEntry.encodeLine(entryOf(samples[round % samples.length]!, `u${round}`)))
      mutate(json, next)
      const fast = typeof json === "object" && json !== null ? messageEntry(json) : undefined
      if (fast === undefined) {
        left++
        continue
      }
      accepted++
      const slow = decoders[fast.type as "user" | "assistant"](json)
      assert.isTrue(Either.isRight(slow), `the Schema rejects what the fast path took: ${JSON.stringify(json)}`)
      assertSame(fast, Either.getOrThrow(slow))
    }
    // Both paths were exercised.
    assert.isAbove(accepted, 100)
    assert.isAbove(left, 500)
  })

  describe("the usage and file_state entries a tool round writes", () => {
    const rounds: ReadonlyArray<TranscriptEntry.Entry> = [
      { type: "file_state", ...envelope("f1"), files: { "/w/a.txt": 1767225600000, "/w/b c.txt": 1.5 } },
      { type: "file_state", ...envelope("f2"), files: {} },
      {
        type: "usage",
        ...envelope("n1"),
        models: {
          "claude-sonnet-4-6": new TokenUsage({ inputTokens: 10, outputTokens: 3, requests: 2 }),
          "claude-haiku-4-5": TokenUsage.make({})
        }
      },
      { type: "usage", ...envelope("n2"), models: {} }
    ] as any
    const decodersByType: Record<string, (u: unknown) => Either.Either<TranscriptEntry.Entry, unknown>> = {
      file_state: Schema.decodeUnknownEither(TranscriptEntry.schemas.file_state),
      usage: Schema.decodeUnknownEither(TranscriptEntry.schemas.usage),
      ...decoders
    }

    it("decodes them as the Schema does, counters the line leaves out defaulting to 0", () => {
      for (const e of rounds) {
        const json = JSON.parse(TranscriptEntry.encodeLine(e))
        const fast = entry(json)
        assert.isDefined(fast, JSON.stringify(json))
        assertSame(fast, Either.getOrThrow(decodersByType[json.type]!(json)))
      }
      // A line written with fewer counters (an older writer) gets the Schema's defaults.
      const short = { type: "usage", ...envelope("n3"), models: { m: { inputTokens: 4 } } }
      assertSame(entry(short), Either.getOrThrow(decodersByType["usage"]!(short)))
      // `__proto__` as a file name is left to the Schema.
      assert.isUndefined(entry(JSON.parse(`{"type":"file_state",${JSON.stringify(envelope("f3")).slice(1, -1)},"files":{"__proto__":1}}`)))
    })

    it("on random mutations, what it accepts the Schema accepts and decodes alike", () => {
      const next = random(7)
      let accepted = 0
      let left = 0
      for (let round = 0; round < 3000; round++) {
        const json = JSON.parse(TranscriptEntry.encodeLine(rounds[round % rounds.length]!))
        mutate(json, next)
        const fast = typeof json === "object" && json !== null ? entry(json) : undefined
        if (fast === undefined) {
          left++
          continue
        }
        accepted++
        const slow = decodersByType[fast.type]!(json)
        assert.isTrue(Either.isRight(slow), `the Schema rejects what the fast path took: ${JSON.stringify(json)}`)
        assertSame(fast, Either.getOrThrow(slow))
      }
      assert.isAbove(accepted, 100)
      assert.isAbove(left, 300)
    })
  })
})
