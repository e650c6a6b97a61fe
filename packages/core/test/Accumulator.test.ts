import type Anthropic from "@anthropic-ai/sdk"
import { MessageStream } from "@anthropic-ai/sdk/lib/MessageStream"
import { assert, describe, it, vi } from "@effect/vitest"
import { Accumulator, Message, StreamEvent } from "@keel/core"
import { FastCheck as fc } from "effect"

// ---------------------------------------------------------------------------------------------
// Generators: a finished assistant message, plus a plan for how to stream it
// ---------------------------------------------------------------------------------------------

/** How to cut one string into deltas. */
type Cut =
  | { readonly mode: "whole" }
  | { readonly mode: "chars" }
  | { readonly mode: "cuts"; readonly seeds: Array<number> }

/** How to render a tool input as JSON text before cutting it. */
type JsonFormat = "compact" | "pretty" | "ascii" | "none"

interface CharCitation {
  readonly type: "char_location"
  readonly cited_text: string
  readonly document_index: number
  readonly document_title: string | null
  readonly start_char_index: number
  readonly end_char_index: number
  readonly file_id: string | null
}

type Spec =
  | {
    readonly type: "text"
    readonly text: string
    readonly prefix: number | null
    readonly cut: Cut
    readonly citations: Array<CharCitation> | null
    readonly citationSeeds: Array<number>
  }
  | {
    readonly type: "thinking"
    readonly thinking: string
    readonly signature: string
    readonly prefix: number | null
    readonly cut: Cut
    readonly signatureInStart: boolean
  }
  | { readonly type: "redacted_thinking"; readonly data: string }
  | {
    readonly type: "tool_use"
    readonly id: string
    readonly name: string
    readonly input: Record<string, unknown>
    readonly format: JsonFormat
    readonly cut: Cut
  }
  | {
    readonly type: "server_tool_use"
    readonly id: string
    readonly input: Record<string, unknown>
    readonly format: JsonFormat
    readonly cut: Cut
  }
  | { readonly type: "web_search_tool_result"; readonly tool_use_id: string; readonly content: Array<unknown> }

interface StartUsage {
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cache_creation_input_tokens?: number | null
  readonly cache_read_input_tokens?: number | null
  readonly cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number } | null
  readonly server_tool_use?: { web_search_requests: number } | null
  readonly service_tier?: "standard" | "priority" | null
}

interface DeltaUsage {
  readonly output_tokens: number
  readonly input_tokens?: number | null
  readonly cache_creation_input_tokens?: number | null
  readonly cache_read_input_tokens?: number | null
  readonly server_tool_use?: { web_search_requests: number } | null
}

interface Scenario {
  readonly id: string
  readonly model: string
  readonly blocks: Array<Spec>
  readonly startUsage: StartUsage
  readonly deltaUsage: DeltaUsage
  readonly stopReason: Message.StopReason
  readonly stopSequence: string | null
  /** Cuts of the NDJSON byte stream handed to the SDK. */
  readonly byteSeeds: Array<number>
}

const arbString: fc.Arbitrary<string> = fc.oneof(
  fc.constant(""),
  fc.string({ unit: "grapheme", maxLength: 30 }),
  // every code point, control characters and astral planes included
  fc.string({ unit: "binary", maxLength: 30 }),
  // emoji (astral, ZWJ sequences, flags), combining marks, and characters JSON must escape
  fc.array(
    fc.oneof(
      fc.constantFrom("😀", "👨‍👩‍👧‍👦", "🇫🇷", "é", "e\u0301", "中文", "a"),
      fc.constantFrom("\u0000", "\n", "\r\n", "\t", "\"", "\\", "\u2028", " ")
    ),
    { maxLength: 25 }
  ).map((parts) => parts.join(""))
)

const arbCut: fc.Arbitrary<Cut> = fc.oneof(
  fc.constant({ mode: "whole" as const }),
  fc.constant({ mode: "chars" as const }),
  fc.record({ mode: fc.constant("cuts" as const), seeds: fc.array(fc.nat(), { maxLength: 12 }) })
)

const arbJsonInput: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.constant({}),
  fc.dictionary(
    fc.string({ unit: "grapheme", maxLength: 8 }),
    fc.jsonValue({ maxDepth: 3, stringUnit: "binary" }),
    { maxKeys: 5 }
  ),
  fc.record({ nested: fc.record({ deeper: fc.array(fc.dictionary(fc.string(), arbString, { maxKeys: 3 })) }) })
)

const arbFormat: fc.Arbitrary<JsonFormat> = fc.constantFrom("compact", "pretty", "ascii", "none")

const arbId = fc.string({ unit: fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz0123456789_"), minLength: 1, maxLength: 24 })

const arbCitation: fc.Arbitrary<CharCitation> = fc.record({
  type: fc.constant("char_location" as const),
  cited_text: arbString,
  document_index: fc.nat(5),
  document_title: fc.option(arbString, { nil: null }),
  start_char_index: fc.nat(100),
  end_char_index: fc.nat(100),
  file_id: fc.constant(null)
})

const arbSpec: fc.Arbitrary<Spec> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      type: fc.constant("text" as const),
      text: arbString,
      prefix: fc.option(fc.nat(), { nil: null }),
      cut: arbCut,
      citations: fc.option(fc.array(arbCitation, { minLength: 1, maxLength: 3 }), { nil: null }),
      citationSeeds: fc.array(fc.nat(), { minLength: 3, maxLength: 3 })
    })
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant("thinking" as const),
      thinking: arbString,
      signature: fc.base64String({ minLength: 4, maxLength: 80 }),
      prefix: fc.option(fc.nat(), { nil: null }),
      cut: arbCut,
      signatureInStart: fc.boolean()
    })
  },
  {
    weight: 1,
    arbitrary: fc.record({ type: fc.constant("redacted_thinking" as const), data: fc.base64String({ maxLength: 80 }) })
  },
  {
    weight: 4,
    arbitrary: fc.record({
      type: fc.constant("tool_use" as const),
      id: arbId.map((s) => `toolu_${s}`),
      name: arbId,
      input: arbJsonInput,
      format: arbFormat,
      cut: arbCut
    })
  },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant("server_tool_use" as const),
      id: arbId.map((s) => `srvtoolu_${s}`),
      input: fc.record({ query: arbString }),
      format: arbFormat,
      cut: arbCut
    })
  },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constant("web_search_tool_result" as const),
      tool_use_id: arbId.map((s) => `srvtoolu_${s}`),
      content: fc.array(
        fc.record({
          type: fc.constant("web_search_result"),
          url: arbString,
          title: arbString,
          encrypted_content: fc.base64String({ maxLength: 40 }),
          page_age: fc.option(arbString, { nil: null })
        }),
        { maxLength: 2 }
      )
    })
  }
)

const arbCount = fc.nat(100_000)
const arbOptCount = fc.option(arbCount, { nil: null })

const arbStartUsage: fc.Arbitrary<StartUsage> = fc.record({
  input_tokens: arbCount,
  output_tokens: fc.nat(5),
  cache_creation_input_tokens: arbOptCount,
  cache_read_input_tokens: arbOptCount,
  cache_creation: fc.option(
    fc.record({ ephemeral_5m_input_tokens: arbCount, ephemeral_1h_input_tokens: arbCount }),
    { nil: null }
  ),
  server_tool_use: fc.option(fc.record({ web_search_requests: fc.nat(5) }), { nil: null }),
  service_tier: fc.constantFrom("standard" as const, "priority" as const, null)
}, { requiredKeys: ["input_tokens", "output_tokens"] })

const arbDeltaUsage: fc.Arbitrary<DeltaUsage> = fc.record({
  output_tokens: arbCount,
  input_tokens: arbOptCount,
  cache_creation_input_tokens: arbOptCount,
  cache_read_input_tokens: arbOptCount,
  server_tool_use: fc.option(fc.record({ web_search_requests: fc.nat(5) }), { nil: null })
}, { requiredKeys: ["output_tokens"] })

const stopReasons: ReadonlyArray<Message.StopReason> = [...Message.KnownStopReason.literals, "some_future_reason"]

const arbScenario: fc.Arbitrary<Scenario> = fc.record({
  id: arbId.map((s) => `msg_${s}`),
  model: fc.constantFrom("claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5"),
  blocks: fc.array(arbSpec, { maxLength: 7 }),
  startUsage: arbStartUsage,
  deltaUsage: arbDeltaUsage,
  stopReason: fc.constantFrom(...stopReasons),
  stopSequence: fc.option(arbString, { nil: null }),
  byteSeeds: fc.array(fc.nat(), { maxLength: 20 })
})

// ---------------------------------------------------------------------------------------------
// From a scenario to events, and to what the message must come out as
// ---------------------------------------------------------------------------------------------

/** Cuts a string at arbitrary UTF-16 positions (surrogate pairs and escapes may be split). */
const split = (s: string, cut: Cut): Array<string> => {
  switch (cut.mode) {
    case "whole":
      return [s]
    case "chars":
      return Array.from({ length: s.length }, (_, i) => s[i]!)
    case "cuts": {
      const positions = cut.seeds.map((n) => n % (s.length + 1)).sort((a, b) => a - b)
      const out: Array<string> = []
      let previous = 0
      for (const p of positions) {
        out.push(s.slice(previous, p))
        previous = p
      }
      out.push(s.slice(previous))
      return out
    }
  }
}

/** JSON text for a tool input; `ascii` escapes every non-ASCII unit, so cuts land inside `\uXXXX`. */
const renderJson = (input: Record<string, unknown>, format: JsonFormat): string => {
  switch (format) {
    case "compact":
      return JSON.stringify(input)
    case "pretty":
      return JSON.stringify(input, null, 2)
    case "ascii":
      return JSON.stringify(input).replace(
        /[\u007f-\uffff]/g,
        (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`
      )
    case "none":
      // the API streams no JSON text at all for a tool without arguments
      return Object.keys(input).length === 0 ? "" : JSON.stringify(input)
  }
}

const normalise = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

const splitPrefix = (s: string, prefix: number | null): [string, string] => {
  if (prefix === null) return ["", s]
  const k = prefix % (s.length + 1)
  return [s.slice(0, k), s.slice(k)]
}

const delta = (index: number, d: Anthropic.Messages.RawContentBlockDeltaEvent["delta"]): StreamEvent.StreamEvent => ({
  type: "content_block_delta",
  index,
  delta: d
})

const toEvents = (sc: Scenario): Array<StreamEvent.StreamEvent> => {
  const events: Array<StreamEvent.StreamEvent> = [{
    type: "message_start",
    message: {
      id: sc.id,
      type: "message",
      role: "assistant",
      model: sc.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      stop_details: null,
      container: null,
      diagnostics: null,
      usage: sc.startUsage
    } as unknown as Anthropic.Messages.Message
  }]
  sc.blocks.forEach((spec, index) => {
    switch (spec.type) {
      case "text": {
        const [head, tail] = splitPrefix(spec.text, spec.prefix)
        events.push({ type: "content_block_start", index, content_block: { type: "text", text: head, citations: null } })
        const texts = split(tail, spec.cut)
        // each citation goes after a random number of text deltas, in order
        const positions = spec.citationSeeds.map((n) => n % (texts.length + 1)).sort((x, y) => x - y)
        const citationsAt = (spec.citations ?? []).map((c, i) => ({ c, at: positions[i]! }))
        for (let k = 0; k <= texts.length; k++) {
          for (const { at, c } of citationsAt) {
            if (at === k) events.push(delta(index, { type: "citations_delta", citation: c }))
          }
          if (k < texts.length) events.push(delta(index, { type: "text_delta", text: texts[k]! }))
        }
        break
      }
      case "thinking": {
        const [head, tail] = splitPrefix(spec.thinking, spec.prefix)
        events.push({
          type: "content_block_start",
          index,
          content_block: { type: "thinking", thinking: head, signature: spec.signatureInStart ? spec.signature : "" }
        })
        for (const thinking of split(tail, spec.cut)) events.push(delta(index, { type: "thinking_delta", thinking }))
        if (!spec.signatureInStart) events.push(delta(index, { type: "signature_delta", signature: spec.signature }))
        break
      }
      case "redacted_thinking":
        events.push({ type: "content_block_start", index, content_block: { type: "redacted_thinking", data: spec.data } })
        break
      case "tool_use":
      case "server_tool_use": {
        const content_block = spec.type === "tool_use"
          ? { type: "tool_use", id: spec.id, name: spec.name, input: {}, caller: { type: "direct" } }
          : { type: "server_tool_use", id: spec.id, name: "web_search", input: {}, caller: { type: "direct" } }
        events.push({
          type: "content_block_start",
          index,
          content_block: content_block as Anthropic.Messages.RawContentBlockStartEvent["content_block"]
        })
        for (const partial_json of split(renderJson(spec.input, spec.format), spec.cut)) {
          events.push(delta(index, { type: "input_json_delta", partial_json }))
        }
        break
      }
      case "web_search_tool_result":
        events.push({
          type: "content_block_start",
          index,
          content_block: {
            type: "web_search_tool_result",
            tool_use_id: spec.tool_use_id,
            content: spec.content
          } as Anthropic.Messages.RawContentBlockStartEvent["content_block"]
        })
        break
    }
    events.push({ type: "content_block_stop", index })
  })
  events.push({
    type: "message_delta",
    delta: { stop_reason: sc.stopReason, stop_sequence: sc.stopSequence, stop_details: null, container: null },
    usage: sc.deltaUsage
  } as unknown as Anthropic.Messages.RawMessageDeltaEvent)
  events.push({ type: "message_stop" })
  return events
}

/** The request-side content the scenario describes, field for field. */
const expectedContent = (sc: Scenario): Array<unknown> =>
  sc.blocks.map((spec) => {
    switch (spec.type) {
      case "text":
        return { type: "text", text: spec.text, citations: spec.citations }
      case "thinking":
        return { type: "thinking", thinking: spec.thinking, signature: spec.signature }
      case "redacted_thinking":
        return { type: "redacted_thinking", data: spec.data }
      case "tool_use":
        return { type: "tool_use", id: spec.id, name: spec.name, input: normalise(spec.input) }
      case "server_tool_use":
        // unknown blocks are kept verbatim, `caller` included
        return {
          type: "server_tool_use",
          id: spec.id,
          name: "web_search",
          input: normalise(spec.input),
          caller: { type: "direct" }
        }
      case "web_search_tool_result":
        return { type: "web_search_tool_result", tool_use_id: spec.tool_use_id, content: spec.content }
    }
  })

/** The SDK's response blocks cut down to the fields Keel's message model keeps. */
const sdkBlockAsParam = (block: Anthropic.Messages.ContentBlock): unknown => {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text, citations: block.citations }
    case "thinking":
      return { type: "thinking", thinking: block.thinking, signature: block.signature }
    case "redacted_thinking":
      return { type: "redacted_thinking", data: block.data }
    case "tool_use":
      // Keel's ToolUseBlock has no `caller` (optional on the request side)
      return { type: "tool_use", id: block.id, name: block.name, input: block.input }
    default:
      return { ...block }
  }
}

/** Streams NDJSON (one `JSON.stringify(event)` a line) in arbitrary byte chunks, as `toReadableStream` does. */
const ndjson = (events: ReadonlyArray<StreamEvent.StreamEvent>, seeds: ReadonlyArray<number>): ReadableStream => {
  const bytes = new TextEncoder().encode(events.map((e) => JSON.stringify(e) + "\n").join(""))
  const cuts = [...new Set(seeds.map((n) => n % (bytes.length + 1)))].sort((a, b) => a - b)
  const chunks: Array<Uint8Array> = []
  let previous = 0
  for (const c of [...cuts, bytes.length]) {
    if (c > previous) chunks.push(bytes.subarray(previous, c))
    previous = c
  }
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk)
      controller.close()
    }
  })
}

const sdkFinalMessage = (events: ReadonlyArray<StreamEvent.StreamEvent>, seeds: ReadonlyArray<number>) =>
  MessageStream.fromReadableStream(ndjson(events, seeds)).finalMessage()

const usageTokens = (u: {
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cache_creation_input_tokens?: number | null | undefined
  readonly cache_read_input_tokens?: number | null | undefined
  readonly cache_creation?: unknown
  readonly server_tool_use?: unknown
}) => ({
  input_tokens: u.input_tokens,
  output_tokens: u.output_tokens,
  cache_creation_input_tokens: u.cache_creation_input_tokens ?? null,
  cache_read_input_tokens: u.cache_read_input_tokens ?? null,
  cache_creation: u.cache_creation ?? null,
  server_tool_use: u.server_tool_use ?? null
})

const expectedUsage = (sc: Scenario) => ({
  input_tokens: sc.deltaUsage.input_tokens ?? sc.startUsage.input_tokens,
  output_tokens: sc.deltaUsage.output_tokens,
  cache_creation_input_tokens: sc.deltaUsage.cache_creation_input_tokens ??
    sc.startUsage.cache_creation_input_tokens ?? null,
  cache_read_input_tokens: sc.deltaUsage.cache_read_input_tokens ?? sc.startUsage.cache_read_input_tokens ?? null,
  cache_creation: sc.startUsage.cache_creation ?? null,
  server_tool_use: sc.deltaUsage.server_tool_use ?? sc.startUsage.server_tool_use ?? null
})

// ---------------------------------------------------------------------------------------------
// Helpers for the unit tests
// ---------------------------------------------------------------------------------------------

const start = (usage: Partial<StartUsage> = {}): StreamEvent.StreamEvent => ({
  type: "message_start",
  message: {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "claude-test",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 0, output_tokens: 1, ...usage }
  } as unknown as Anthropic.Messages.Message
})

const textStart = (index: number): StreamEvent.StreamEvent => ({
  type: "content_block_start",
  index,
  content_block: { type: "text", text: "", citations: null }
})

const toolStart = (index: number, id: string): StreamEvent.StreamEvent => ({
  type: "content_block_start",
  index,
  content_block: { type: "tool_use", id, name: "lookup", input: {} } as Anthropic.Messages.ToolUseBlock
})

const textDelta = (index: number, text: string) => delta(index, { type: "text_delta", text })
const jsonDelta = (index: number, partial_json: string) => delta(index, { type: "input_json_delta", partial_json })
const stop = (index: number): StreamEvent.StreamEvent => ({ type: "content_block_stop", index })

const messageDelta = (usage: DeltaUsage, stop_reason: Message.StopReason = "end_turn"): StreamEvent.StreamEvent =>
  ({
    type: "message_delta",
    delta: { stop_reason, stop_sequence: null },
    usage
  }) as unknown as StreamEvent.StreamEvent

const messageStop: StreamEvent.StreamEvent = { type: "message_stop" }

// ---------------------------------------------------------------------------------------------

describe("Accumulator", () => {
  it("folds random event sequences to the same message as the SDK's MessageStream", async () => {
    await fc.assert(
      fc.asyncProperty(arbScenario, async (sc) => {
        const events = toEvents(sc)
        const result = Accumulator.fold(events)
        const sdk = await sdkFinalMessage(events, sc.byteSeeds)

        assert.isTrue(result.complete)
        assert.strictEqual(result.malformedToolInput.size, 0)

        const ours: unknown = Message.toParam(result.message).content
        assert.deepStrictEqual(ours, sdk.content.map(sdkBlockAsParam))
        assert.deepStrictEqual(ours, expectedContent(sc))

        const message = result.message
        assert.strictEqual(message.id, sdk.id)
        assert.strictEqual(message.id, sc.id)
        assert.strictEqual(message.model, sdk.model)
        assert.strictEqual(message.stop_reason, sdk.stop_reason)
        assert.strictEqual(message.stop_reason, sc.stopReason)
        assert.strictEqual(message.stop_sequence, sdk.stop_sequence)
        assert.strictEqual(message.stop_sequence, sc.stopSequence)
        assert.isDefined(message.usage)
        assert.deepStrictEqual(usageTokens(message.usage!), usageTokens(sdk.usage))
        assert.deepStrictEqual(usageTokens(message.usage!), expectedUsage(sc))
      }),
      { numRuns: 300 }
    )
  })

  it("folds StreamEvent.fromMessage back to the message it came from", () => {
    fc.assert(
      fc.property(arbScenario, fc.integer({ min: 1, max: 40 }), (sc, chunkSize) => {
        // the message the scenario describes, as a finished API response
        const content = Message.fromParam({
          role: "assistant",
          content: expectedContent(sc) as Array<Anthropic.Messages.ContentBlockParam>
        }).content as ReadonlyArray<Message.ContentBlock>
        const usage = new Message.Usage({
          ...expectedUsage(sc),
          service_tier: sc.startUsage.service_tier ?? null
        })
        const original = new Message.AssistantMessage({
          content,
          id: sc.id,
          model: sc.model,
          stop_reason: sc.stopReason,
          stop_sequence: sc.stopSequence,
          usage
        })
        const result = Accumulator.fold(StreamEvent.fromMessage(original, { chunkSize }))
        assert.isTrue(result.complete)
        assert.deepStrictEqual(Message.toParam(result.message), Message.toParam(original))
        assert.strictEqual(result.message.id, original.id)
        assert.strictEqual(result.message.model, original.model)
        assert.strictEqual(result.message.stop_reason, original.stop_reason)
        assert.strictEqual(result.message.stop_sequence, original.stop_sequence)
        assert.deepStrictEqual(usageTokens(result.message.usage!), usageTokens(usage))
        assert.strictEqual(result.message.usage!.service_tier ?? null, usage.service_tier ?? null)
      }),
      { numRuns: 200 }
    )
  })

  it("joins text across many deltas", () => {
    const pieces = Array.from({ length: 500 }, (_, i) => ["a", "é", "😀", "", "中"][i % 5]!)
    const result = Accumulator.fold([
      start(),
      textStart(0),
      ...pieces.map((p) => textDelta(0, p)),
      stop(0),
      messageDelta({ output_tokens: 3 }),
      messageStop
    ])
    assert.strictEqual(result.message.text, pieces.join(""))
    assert.strictEqual(result.message.content.length, 1)
    assert.instanceOf(result.message.content[0], Message.TextBlock)
  })

  it("keeps tool input JSON as string chunks and parses it once, at content_block_stop", () => {
    const json = "{\"path\": \"/tmp/a b\", \"n\": [1, 2.5e3, {\"q\": \"\\\"\\u00e9\\\"\"}]}"
    const chunks = split(json, { mode: "chars" })
    const state = Accumulator.make()
    const parse = vi.spyOn(JSON, "parse")
    try {
      Accumulator.step(state, start())
      Accumulator.step(state, toolStart(0, "toolu_1"))
      for (const c of chunks) Accumulator.step(state, jsonDelta(0, c))

      const builder = state.blocks[0]
      assert.isDefined(builder)
      assert.strictEqual(builder!.kind, "tool_use")
      if (builder!.kind !== "tool_use") return
      assert.strictEqual(builder.json.count, chunks.length)
      assert.isUndefined(builder.block)
      assert.strictEqual(parse.mock.calls.length, 0)

      Accumulator.step(state, stop(0))
      assert.strictEqual(parse.mock.calls.length, 1)
      assert.deepStrictEqual(parse.mock.calls[0], [json])
      assert.instanceOf(builder.block, Message.ToolUseBlock)

      Accumulator.step(state, messageDelta({ output_tokens: 9 }, "tool_use"))
      Accumulator.step(state, messageStop)
      const result = Accumulator.finish(state)
      // finish reuses the block built at stop
      assert.strictEqual(parse.mock.calls.length, 1)
      assert.deepStrictEqual(result.message.toolUses[0]!.input, { path: "/tmp/a b", n: [1, 2500, { q: "\"é\"" }] })
      assert.strictEqual(result.malformedToolInput.size, 0)
    } finally {
      parse.mockRestore()
    }
  })

  it("gives a tool_use with no or empty partial_json the input {}", () => {
    const result = Accumulator.fold([
      start(),
      toolStart(0, "toolu_none"),
      stop(0),
      toolStart(1, "toolu_empty"),
      jsonDelta(1, ""),
      stop(1),
      toolStart(2, "toolu_empties"),
      jsonDelta(2, ""),
      jsonDelta(2, ""),
      stop(2),
      messageDelta({ output_tokens: 3 }, "tool_use"),
      messageStop
    ])
    assert.deepStrictEqual(result.message.toolUses.map((t) => [t.id, t.input]), [
      ["toolu_none", {}],
      ["toolu_empty", {}],
      ["toolu_empties", {}]
    ])
    assert.strictEqual(result.malformedToolInput.size, 0)
  })

  it("records malformed tool JSON in malformedToolInput and gives the call the input {}", () => {
    const result = Accumulator.fold([
      start(),
      toolStart(0, "toolu_bad"),
      jsonDelta(0, "{\"a\": "),
      jsonDelta(0, "tru"),
      jsonDelta(0, "e,}"),
      stop(0),
      // truncated JSON is malformed too (the SDK's partial-JSON parser would complete it)
      toolStart(1, "toolu_cut"),
      jsonDelta(1, "{\"a\": [1, 2"),
      stop(1),
      toolStart(2, "toolu_ok"),
      jsonDelta(2, "{\"a\": 1}"),
      stop(2),
      messageDelta({ output_tokens: 3 }, "tool_use"),
      messageStop
    ])
    assert.deepStrictEqual(result.message.toolUses.map((t) => [t.id, t.input]), [
      ["toolu_bad", {}],
      ["toolu_cut", {}],
      ["toolu_ok", { a: 1 }]
    ])
    assert.deepStrictEqual(
      [...result.malformedToolInput],
      [["toolu_bad", "{\"a\": true,}"], ["toolu_cut", "{\"a\": [1, 2"]]
    )
  })

  it("is complete only once message_stop is seen", () => {
    const events = [start(), textStart(0), textDelta(0, "partial"), stop(0), messageDelta({ output_tokens: 2 })]
    const partial = Accumulator.fold(events)
    assert.isFalse(partial.complete)
    assert.strictEqual(partial.message.text, "partial")
    assert.isTrue(Accumulator.fold([...events, messageStop]).complete)
  })

  it("closes a block still open when the stream ends, as it stands", () => {
    const result = Accumulator.fold([start(), textStart(0), textDelta(0, "cut "), textDelta(0, "off")])
    assert.isFalse(result.complete)
    assert.strictEqual(result.message.text, "cut off")
  })

  it("merges usage from message_start with message_delta", () => {
    const result = Accumulator.fold([
      start({
        input_tokens: 1200,
        output_tokens: 1,
        cache_creation_input_tokens: 300,
        cache_read_input_tokens: 50,
        cache_creation: { ephemeral_5m_input_tokens: 200, ephemeral_1h_input_tokens: 100 },
        service_tier: "standard"
      }),
      textStart(0),
      textDelta(0, "hi"),
      stop(0),
      // the delta omits input_tokens and the cache-creation count, and updates the cache reads
      messageDelta({ output_tokens: 77, cache_read_input_tokens: 60 }),
      messageStop
    ])
    const usage = result.message.usage!
    assert.strictEqual(usage.output_tokens, 77)
    assert.strictEqual(usage.input_tokens, 1200)
    assert.strictEqual(usage.cache_creation_input_tokens, 300)
    assert.strictEqual(usage.cache_read_input_tokens, 60)
    assert.deepStrictEqual(usage.cache_creation, { ephemeral_5m_input_tokens: 200, ephemeral_1h_input_tokens: 100 })
    assert.strictEqual(usage.service_tier, "standard")

    const overridden = Accumulator.fold([
      start({ input_tokens: 10, output_tokens: 1 }),
      messageDelta({ output_tokens: 5, input_tokens: 12, cache_creation_input_tokens: null }),
      messageStop
    ]).message.usage!
    assert.strictEqual(overridden.input_tokens, 12)
    assert.strictEqual(overridden.output_tokens, 5)
    assert.strictEqual(overridden.cache_creation_input_tokens, null)
    assert.strictEqual(overridden.cache_read_input_tokens, null)
  })

  it("does linear work: each streamed character is copied at most twice, and few strings stay alive", () => {
    const n = 10_000
    const state = Accumulator.make()
    const join = vi.spyOn(Array.prototype, "join")
    try {
      Accumulator.step(state, start())
      Accumulator.step(state, textStart(0))
      for (let i = 0; i < n; i++) Accumulator.step(state, textDelta(0, "ab"))
      const builder = state.blocks[0]
      assert.isDefined(builder)
      assert.strictEqual(builder!.kind, "text")
      if (builder!.kind !== "text") return
      assert.strictEqual(builder.chunks.count, n)
      assert.isUndefined(builder.block)
      // while streaming: one join per full segment, each copying that segment once
      const segments = Math.floor(n / Accumulator.Chunks.SEGMENT)
      assert.strictEqual(join.mock.calls.length, segments)

      Accumulator.step(state, stop(0))
      Accumulator.step(state, messageStop)
      const result = Accumulator.finish(state)
      // at stop: the last partial segment, then all segments once
      assert.strictEqual(join.mock.calls.length, segments + 2)
      const copied = join.mock.results.reduce((sum, r) => sum + (r.value as string).length, 0)
      assert.isAtMost(copied, 2 * (2 * n))
      assert.strictEqual(result.message.text.length, 2 * n)
      assert.strictEqual(result.message.text, "ab".repeat(n))
    } finally {
      join.mockRestore()
    }
  })
})
