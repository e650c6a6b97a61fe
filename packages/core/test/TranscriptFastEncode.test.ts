/**
 * The fast encoding of message entries and rewrites writes exactly the Schema's line: on entries of
 * every block type and field the kernel writes, and on random messages drawn from the Schema's own
 * arbitraries, whatever it encodes is byte for byte `JSON.stringify` of the Schema's encoding; what
 * it does not take (marks, images, values of the wrong type) is left to the Schema.
 */
import { assert, describe, it } from "@effect/vitest"
import { Message, TranscriptEntry } from "@keel/core"
import { Arbitrary, FastCheck, Schema } from "effect"
import * as TranscriptFastEncode from "../src/session/TranscriptFastEncode.js"

const schemaLine = (e: TranscriptEntry.Entry) => JSON.stringify(Schema.encodeSync(TranscriptEntry.Entry)(e)) + "\n"
const fastLine = (e: TranscriptEntry.Entry) => {
  const encoded = TranscriptFastEncode.entry(e, TranscriptEntry.VERSION)
  return encoded === undefined ? undefined : JSON.stringify(encoded) + "\n"
}

const envelope = (uuid: string) => ({
  uuid,
  parentUuid: uuid === "u0" ? null : "p-" + uuid,
  sessionId: "s1",
  timestamp: "2026-01-01T00:00:00.000Z",
  cwd: "/w",
  version: TranscriptEntry.VERSION
})
const messageEntry = (message: Message.Message, uuid: string): TranscriptEntry.Entry =>
  ({ type: message.role, ...envelope(uuid), message }) as TranscriptEntry.Entry
const rewriteEntry = (messages: ReadonlyArray<Message.Message>, uuid: string): TranscriptEntry.Entry =>
  ({
    type: "rewrite",
    ...envelope(uuid),
    trigger: "snip",
    from: 4,
    length: messages.length + 2,
    ops: [{ keep: [0, 1] }, ...messages.map((message) => ({ message })), { keep: [3, 4] }]
  }) as TranscriptEntry.Entry

const unchecked = { disableValidation: true } as const
const samples: ReadonlyArray<Message.Message> = [
  Message.user("hello"),
  Message.user([new Message.TextBlock({ text: "a", citations: null }), new Message.TextBlock({ text: "b", citations: [{ x: 1 }] })]),
  new Message.UserMessage({
    content: [
      new Message.ToolResultBlock({ tool_use_id: "t1", content: "ok", toolUseResult: { file: { path: "/a" } } }),
      new Message.ToolResultBlock({ tool_use_id: "t2", content: "no", is_error: true, toolUseResult: "Error: no" }),
      new Message.ToolResultBlock({ tool_use_id: "t3", content: [new Message.TextBlock({ text: "x", citations: [] })] }),
      new Message.ToolResultBlock({ tool_use_id: "t4" }),
      new Message.TextBlock({ text: "and a prompt" })
    ]
  }),
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
      // A key the Schema does not know, which its encoding drops.
      cache_creation: { ephemeral_5m_input_tokens: 1, ephemeral_1h_input_tokens: 2, extra: 3 } as any,
      server_tool_use: { web_search_requests: 1 },
      service_tier: "standard"
    }, unchecked)
  }),
  new Message.AssistantMessage({ content: [new Message.TextBlock({ text: "Done." })], stop_reason: "something_new" }),
  // Left to the Schema: a cache mark, an image, redacted thinking.
  new Message.UserMessage({ content: [new Message.TextBlock({ text: "marked", cache_control: { type: "ephemeral" } })] }),
  new Message.UserMessage({
    content: [new Message.ImageBlock({ source: { type: "base64", media_type: "image/png", data: "AAAA" } })]
  }),
  new Message.AssistantMessage({ content: [new Message.RedactedThinkingBlock({ data: "zzz" }), new Message.TextBlock({ text: "x" })] })
]

describe("TranscriptFastEncode", () => {
  it("encodes the common shapes as the Schema does, and leaves the others to it", () => {
    const taken = samples.map((m, i) => {
      const e = messageEntry(m, `u${i}`)
      const fast = fastLine(e)
      if (fast !== undefined) assert.strictEqual(fast, schemaLine(e))
      assert.strictEqual(TranscriptEntry.encodeLine(e), schemaLine(e))
      return fast !== undefined
    })
    assert.deepStrictEqual(taken, [true, true, true, true, true, false, false, false])
    const rewrite = rewriteEntry(samples.slice(0, 5), "r1")
    assert.strictEqual(fastLine(rewrite), schemaLine(rewrite))
    // One message of another shape sends the whole rewrite to the Schema, which encodes it.
    const mixed = rewriteEntry(samples, "r2")
    assert.isUndefined(fastLine(mixed))
    assert.strictEqual(TranscriptEntry.encodeLine(mixed), schemaLine(mixed))
  })

  it("a value of the wrong type is left to the Schema, which refuses it", () => {
    const bad: ReadonlyArray<Message.Message> = [
      new Message.UserMessage({ content: [new Message.TextBlock({ text: 5 as any }, unchecked)] }, unchecked),
      new Message.UserMessage({ content: [new Message.ToolResultBlock({ tool_use_id: "t", is_error: "yes" as any }, unchecked)] }, unchecked),
      new Message.AssistantMessage({ content: [], stop_reason: 3 as any }, unchecked),
      new Message.AssistantMessage({ content: [], usage: new Message.Usage({ input_tokens: "1" as any, output_tokens: 1 }, unchecked) }, unchecked)
    ]
    for (const m of bad) {
      assert.isUndefined(fastLine(messageEntry(m, "u1")))
      assert.throws(() => TranscriptEntry.encodeLine(messageEntry(m, "u1")))
    }
    assert.isUndefined(fastLine({ ...messageEntry(samples[0]!, "u1"), version: 2 } as any))
  })

  it("on random messages, what it encodes is the Schema's line", () => {
    const messages = FastCheck.sample(Arbitrary.make(Message.Message), { numRuns: 400, seed: 18 })
    let taken = 0
    messages.forEach((m, i) => {
      for (const e of [messageEntry(m, `u${i}`), rewriteEntry([m, samples[2]!], `r${i}`)]) {
        const fast = fastLine(e)
        if (fast === undefined) continue
        taken++
        assert.strictEqual(fast, schemaLine(e))
      }
    })
    assert.isAbove(taken, 40)
  })
})
