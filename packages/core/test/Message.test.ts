import type Anthropic from "@anthropic-ai/sdk"
import { assert, describe, it } from "@effect/vitest"
import { Message } from "@keel/core"
import { FastCheck as fc, ParseResult, Schema } from "effect"

type Param = Anthropic.Messages.MessageParam

const signature =
  "EqQBCkgIBxABGAIiQJ5vFq3m+0cW8kZl/8p9Rr0YgQ2bXb3kT1sT4s5Pq7c0dA1xYz/+9u8v7w6x5y4z3A2B1C0D9E8F7G6H5I4J3K2L1M0N=="

const citation = {
  type: "char_location",
  cited_text: "The sky is blue.",
  document_index: 0,
  document_title: "Facts",
  start_char_index: 0,
  end_char_index: 16
}

interface Case {
  readonly name: string
  readonly param: Param
  readonly message: Message.Message
}

const png = { type: "base64" as const, media_type: "image/png" as const, data: "iVBORw0KGgoAAAANSUhEUgAAAAE=" }

const cases: ReadonlyArray<Case> = [
  {
    name: "user message with string content",
    param: { role: "user", content: "Hello 👋" },
    message: new Message.UserMessage({ content: "Hello 👋" })
  },
  {
    name: "text with citations and cache_control",
    param: {
      role: "user",
      content: [{ type: "text", text: "See [1].", citations: [citation], cache_control: { type: "ephemeral", ttl: "1h" } }]
    } as Param,
    message: new Message.UserMessage({
      content: [
        new Message.TextBlock({ text: "See [1].", citations: [citation], cache_control: { type: "ephemeral", ttl: "1h" } })
      ]
    })
  },
  {
    name: "text with citations: null",
    param: { role: "assistant", content: [{ type: "text", text: "plain", citations: null }] },
    message: new Message.AssistantMessage({ content: [new Message.TextBlock({ text: "plain", citations: null })] })
  },
  {
    name: "image from base64",
    param: { role: "user", content: [{ type: "image", source: png, cache_control: { type: "ephemeral" } }] },
    message: new Message.UserMessage({
      content: [new Message.ImageBlock({ source: png, cache_control: { type: "ephemeral" } })]
    })
  },
  {
    name: "image from url",
    param: { role: "user", content: [{ type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } }] },
    message: new Message.UserMessage({
      content: [new Message.ImageBlock({ source: { type: "url", url: "https://example.com/cat.jpg" } })]
    })
  },
  {
    name: "document: base64 pdf with title, context and citations",
    param: {
      role: "user",
      content: [{
        type: "document",
        source: { type: "base64", media_type: "application/pdf", data: "JVBERi0xLjQKJcfs" },
        title: "Spec v2",
        context: "The current specification",
        citations: { enabled: true },
        cache_control: { type: "ephemeral", ttl: "5m" }
      }]
    },
    message: new Message.UserMessage({
      content: [
        new Message.DocumentBlock({
          source: { type: "base64", media_type: "application/pdf", data: "JVBERi0xLjQKJcfs" },
          title: "Spec v2",
          context: "The current specification",
          citations: { enabled: true },
          cache_control: { type: "ephemeral", ttl: "5m" }
        })
      ]
    })
  },
  {
    name: "document: plain text source, null title",
    param: {
      role: "user",
      content: [{
        type: "document",
        source: { type: "text", media_type: "text/plain", data: "line 1\nline 2" },
        title: null,
        context: "notes"
      }]
    },
    message: new Message.UserMessage({
      content: [
        new Message.DocumentBlock({
          source: { type: "text", media_type: "text/plain", data: "line 1\nline 2" },
          title: null,
          context: "notes"
        })
      ]
    })
  },
  {
    name: "tool_use",
    param: {
      role: "assistant",
      content: [{ type: "tool_use", id: "toolu_01", name: "read_file", input: { path: "/a", range: [1, 20], opts: {} } }]
    },
    message: new Message.AssistantMessage({
      content: [new Message.ToolUseBlock({ id: "toolu_01", name: "read_file", input: { path: "/a", range: [1, 20], opts: {} } })]
    })
  },
  {
    name: "tool_result with string content",
    param: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01", content: "file body" }] },
    message: new Message.UserMessage({
      content: [new Message.ToolResultBlock({ tool_use_id: "toolu_01", content: "file body" })]
    })
  },
  {
    name: "tool_result with text + image content",
    param: {
      role: "user",
      content: [{
        type: "tool_result",
        tool_use_id: "toolu_02",
        content: [{ type: "text", text: "screenshot:" }, { type: "image", source: png }],
        is_error: false
      }]
    },
    message: new Message.UserMessage({
      content: [
        new Message.ToolResultBlock({
          tool_use_id: "toolu_02",
          content: [new Message.TextBlock({ text: "screenshot:" }), new Message.ImageBlock({ source: png })],
          is_error: false
        })
      ]
    })
  },
  {
    name: "tool_result with is_error",
    param: {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "toolu_03", content: "ENOENT", is_error: true, cache_control: null }]
    },
    message: new Message.UserMessage({
      content: [new Message.ToolResultBlock({ tool_use_id: "toolu_03", content: "ENOENT", is_error: true, cache_control: null })]
    })
  },
  {
    name: "thinking with signature",
    param: { role: "assistant", content: [{ type: "thinking", thinking: "Let me think… 🤔", signature }] },
    message: new Message.AssistantMessage({
      content: [new Message.ThinkingBlock({ thinking: "Let me think… 🤔", signature })]
    })
  },
  {
    name: "redacted_thinking",
    param: { role: "assistant", content: [{ type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5" }] },
    message: new Message.AssistantMessage({
      content: [new Message.RedactedThinkingBlock({ data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5" })]
    })
  },
  {
    name: "an unknown block type (server_tool_use), kept verbatim",
    param: {
      role: "assistant",
      content: [
        {
          type: "server_tool_use",
          id: "srvtoolu_01",
          name: "web_search",
          input: { query: "effect schema" },
          caller: { type: "direct" }
        },
        {
          type: "web_search_tool_result",
          tool_use_id: "srvtoolu_01",
          content: [{ type: "web_search_result", url: "https://effect.website", title: "Effect", encrypted_content: "Eo8B" }]
        }
      ]
    } as Param,
    message: new Message.AssistantMessage({
      content: [
        {
          type: "server_tool_use",
          id: "srvtoolu_01",
          name: "web_search",
          input: { query: "effect schema" },
          caller: { type: "direct" }
        },
        {
          type: "web_search_tool_result",
          tool_use_id: "srvtoolu_01",
          content: [{ type: "web_search_result", url: "https://effect.website", title: "Effect", encrypted_content: "Eo8B" }]
        }
      ]
    })
  }
]

// ---------------------------------------------------------------------------------------------
// Arbitrary MessageParams, within the shapes the message model covers
// ---------------------------------------------------------------------------------------------

const arbStr = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.string({ unit: "binary", maxLength: 20 }),
  // whitespace, quotes, escapes and emoji, often at the ends
  fc.array(fc.constantFrom(" ", "\n", "\t", "a", "é", "😀", "\"", "\\", "\u0000"), { maxLength: 8 }).map((cs) => cs.join(""))
)
const arbKey = fc.string({ unit: "grapheme", maxLength: 10 }).filter((k) => k !== "type" && k !== "__proto__")
const arbJsonObject = fc.dictionary(arbKey, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 })

const arbCacheControl = fc.option(
  fc.record({ type: fc.constant("ephemeral"), ttl: fc.constantFrom("5m", "1h") }, { requiredKeys: ["type"] }),
  { nil: null }
)

const arbCitation = fc.record({
  type: fc.constant("char_location"),
  cited_text: arbStr,
  document_index: fc.nat(5),
  document_title: fc.option(arbStr, { nil: null }),
  start_char_index: fc.nat(100),
  end_char_index: fc.nat(100)
})

const arbText = fc.record({
  type: fc.constant("text"),
  text: arbStr,
  citations: fc.option(fc.array(arbCitation, { maxLength: 2 }), { nil: null }),
  cache_control: arbCacheControl
}, { requiredKeys: ["type", "text"] })

const arbImage = fc.record({
  type: fc.constant("image"),
  source: fc.oneof(
    fc.record({
      type: fc.constant("base64"),
      media_type: fc.constantFrom("image/jpeg", "image/png", "image/gif", "image/webp"),
      data: fc.base64String({ maxLength: 40 })
    }),
    fc.record({ type: fc.constant("url"), url: fc.webUrl() }),
    fc.record({ type: fc.constant("file"), file_id: arbStr })
  ),
  cache_control: arbCacheControl
}, { requiredKeys: ["type", "source"] })

const arbDocument = fc.record({
  type: fc.constant("document"),
  source: fc.oneof(
    fc.record({
      type: fc.constant("base64"),
      media_type: fc.constant("application/pdf"),
      data: fc.base64String({ maxLength: 40 })
    }),
    fc.record({ type: fc.constant("text"), media_type: fc.constant("text/plain"), data: arbStr }),
    fc.record({
      type: fc.constant("content"),
      content: fc.oneof(arbStr, fc.array(fc.record({ type: fc.constant("text"), text: arbStr }), { maxLength: 2 }))
    }),
    fc.record({ type: fc.constant("url"), url: fc.webUrl() }),
    fc.record({ type: fc.constant("file"), file_id: arbStr })
  ),
  title: fc.option(arbStr, { nil: null }),
  context: fc.option(arbStr, { nil: null }),
  citations: fc.option(fc.record({ enabled: fc.boolean() }), { nil: null }),
  cache_control: arbCacheControl
}, { requiredKeys: ["type", "source"] })

const arbToolUse = fc.record({
  type: fc.constant("tool_use"),
  id: arbStr,
  name: arbStr,
  input: arbJsonObject,
  cache_control: arbCacheControl
}, { requiredKeys: ["type", "id", "name", "input"] })

const arbToolResult = fc.record({
  type: fc.constant("tool_result"),
  tool_use_id: arbStr,
  content: fc.oneof(arbStr, fc.array(fc.oneof(arbText, arbImage, arbDocument), { maxLength: 3 })),
  is_error: fc.boolean(),
  cache_control: arbCacheControl
}, { requiredKeys: ["type", "tool_use_id"] })

const arbThinking = fc.record({
  type: fc.constant("thinking"),
  thinking: arbStr,
  // kept verbatim, whatever it holds
  signature: fc.oneof(fc.base64String(), arbStr)
})

const arbRedacted = fc.record({ type: fc.constant("redacted_thinking"), data: fc.base64String() })

const arbOther = fc.tuple(
  fc.constantFrom("server_tool_use", "web_search_tool_result", "search_result", "container_upload"),
  arbJsonObject
).map(([type, rest]) => ({ ...rest, type }))

const arbBlock = fc.oneof(
  arbText,
  arbImage,
  arbDocument,
  arbToolUse,
  arbToolResult,
  arbThinking,
  arbRedacted,
  arbOther
)

const arbParam: fc.Arbitrary<Param> = fc.record({
  role: fc.constantFrom("user" as const, "assistant" as const),
  content: fc.oneof(arbStr, fc.array(arbBlock, { maxLength: 6 }))
}) as fc.Arbitrary<Param>

// ---------------------------------------------------------------------------------------------

const parseErrorOf = (input: unknown): ParseResult.ParseError => {
  try {
    Message.fromParam(input as Param)
  } catch (error) {
    if (ParseResult.isParseError(error)) return error
    throw error
  }
  return assert.fail("fromParam accepted malformed input")
}

describe("Message", () => {
  describe("round trips every block type", () => {
    for (const c of cases) {
      it(c.name, () => {
        // toParam gives exactly the wire form, and fromParam the classes
        assert.deepStrictEqual(Message.toParam(c.message), c.param)
        const decoded = Message.fromParam(c.param)
        assert.deepStrictEqual(decoded, c.message)
        assert.strictEqual(Object.getPrototypeOf(decoded), Object.getPrototypeOf(c.message))
        if (typeof decoded.content !== "string" && typeof c.message.content !== "string") {
          decoded.content.forEach((block, i) => {
            assert.strictEqual(Object.getPrototypeOf(block), Object.getPrototypeOf(c.message.content[i]))
          })
        }

        assert.deepStrictEqual(Message.fromParam(Message.toParam(c.message)), c.message)
        assert.deepStrictEqual(Message.toParam(Message.fromParam(c.param)), c.param)
        // and through the wire
        const wire = JSON.parse(JSON.stringify(Message.toParam(c.message))) as Param
        assert.deepStrictEqual(Message.fromParam(wire), c.message)
      })
    }
  })

  it("keeps a thinking signature unchanged across a tool round trip", () => {
    const thinking = new Message.ThinkingBlock({ thinking: "I should read the file first.", signature })
    const call = new Message.ToolUseBlock({ id: "toolu_01", name: "read_file", input: { path: "/etc/hosts" } })
    const conversation: ReadonlyArray<Message.Message> = [
      Message.user("What is in /etc/hosts?"),
      new Message.AssistantMessage({ content: [thinking, call] }),
      new Message.UserMessage({
        content: [new Message.ToolResultBlock({ tool_use_id: "toolu_01", content: "127.0.0.1 localhost" })]
      }),
      new Message.AssistantMessage({ content: [Message.text("It maps localhost to 127.0.0.1.")] })
    ]

    const params = conversation.map(Message.toParam)
    const assistant = params[1]!
    assert.strictEqual(assistant.role, "assistant")
    assert.deepStrictEqual(assistant.content, [
      { type: "thinking", thinking: "I should read the file first.", signature },
      { type: "tool_use", id: "toolu_01", name: "read_file", input: { path: "/etc/hosts" } }
    ])

    const wire = JSON.parse(JSON.stringify(params)) as Array<Param>
    assert.deepStrictEqual(wire, params)
    const back = wire.map(Message.fromParam)
    assert.deepStrictEqual(back, conversation)

    const resent = back[1]!
    assert.instanceOf(resent, Message.AssistantMessage)
    const block = (resent as Message.AssistantMessage).content[0]
    assert.instanceOf(block, Message.ThinkingBlock)
    assert.strictEqual((block as Message.ThinkingBlock).signature, signature)
    assert.strictEqual(
      ((Message.toParam(resent).content as Array<Anthropic.Messages.ContentBlockParam>)[0] as
        Anthropic.Messages.ThinkingBlockParam).signature,
      signature
    )
    assert.deepStrictEqual(back.map(Message.toParam), params)
  })

  it("fromParam then toParam is the identity on arbitrary MessageParams", () => {
    fc.assert(
      fc.property(arbParam, (param) => {
        const message = Message.fromParam(param)
        // assistant messages hold blocks: a string prefill comes back as its one text block
        const expected = param.role === "assistant" && typeof param.content === "string"
          ? { role: "assistant", content: [{ type: "text", text: param.content }] }
          : param
        assert.deepStrictEqual(Message.toParam(message), expected)
        assert.deepStrictEqual(Message.fromParam(Message.toParam(message)), message)
      }),
      { numRuns: 300 }
    )
  })

  it("toParam's copy of the common blocks is the Schema's encoding, byte for byte (key order too)", () => {
    const encode = Schema.encodeSync(Schema.Array(Message.ContentBlock))
    const bySchema = (message: Message.Message) =>
      typeof message.content === "string"
        ? message.content
        : encode(message.content).map((b) => {
          const { toolUseResult: _, ...rest } = b as Record<string, unknown>
          return rest
        })
    fc.assert(
      fc.property(arbParam, (param) => {
        const message = Message.fromParam(param)
        assert.strictEqual(JSON.stringify(Message.toParam(message).content), JSON.stringify(bySchema(message)))
      }),
      { numRuns: 300 }
    )
    // Blocks made by their constructors without validation (as the accumulator makes an answer's)
    // hold `type` last, a mark may hold `ttl` first: the copy follows the Schema's order all the same.
    const unchecked = { disableValidation: true }
    const made = new Message.UserMessage({
      content: [
        new Message.ToolResultBlock({
          toolUseResult: { x: 1 },
          content: [new Message.TextBlock({ cache_control: { ttl: "1h", type: "ephemeral" }, text: "r" }, unchecked)],
          tool_use_id: "t",
          is_error: false
        }, unchecked),
        new Message.TextBlock({ text: "q", cache_control: { ttl: "5m", type: "ephemeral" } })
      ]
    })
    const answer = new Message.AssistantMessage({
      content: [
        new Message.ThinkingBlock({ signature: "s", thinking: "t" }, unchecked),
        new Message.ToolUseBlock({ id: "toolu_1", name: "Read", input: { a: 1 } }, unchecked),
        new Message.RedactedThinkingBlock({ data: "d" })
      ]
    })
    for (const m of [made, answer]) {
      assert.strictEqual(JSON.stringify(Message.toParam(m).content), JSON.stringify(bySchema(m)))
    }
    assert.strictEqual(
      JSON.stringify((Message.toParam(answer).content as Array<unknown>)[1]),
      `{"type":"tool_use","id":"toolu_1","name":"Read","input":{"a":1}}`
    )
    // A cache mark with a field of its own is left to the Schema, which drops it.
    const marked = new Message.UserMessage({
      content: [
        new Message.TextBlock({ text: "x", cache_control: { type: "ephemeral", extra: 1 } as any }),
        new Message.ToolResultBlock({
          tool_use_id: "t",
          content: [new Message.TextBlock({ text: "y", cache_control: { type: "ephemeral", ttl: "1h", more: 2 } as any })],
          toolUseResult: { kept: "out" }
        })
      ]
    })
    assert.deepStrictEqual(Message.toParam(marked).content, [
      { type: "text", text: "x", cache_control: { type: "ephemeral" } },
      { type: "tool_result", tool_use_id: "t", content: [{ type: "text", text: "y", cache_control: { type: "ephemeral", ttl: "1h" } }] }
    ])
  })

  it("reads an assistant prefill given as a string as one text block", () => {
    const message = Message.fromParam({ role: "assistant", content: "{\"answer\":" })
    assert.instanceOf(message, Message.AssistantMessage)
    assert.deepStrictEqual(message, new Message.AssistantMessage({ content: [Message.text("{\"answer\":")] }))
    assert.deepStrictEqual(Message.toParam(message), { role: "assistant", content: [{ type: "text", text: "{\"answer\":" }] })
  })

  describe("fromParam on malformed input throws a ParseError naming the field", () => {
    it("not an object at all", () => {
      const error = parseErrorOf(null)
      assert.include(error.message, "null")
    })

    it("tool_use missing id", () => {
      const error = parseErrorOf({ role: "assistant", content: [{ type: "tool_use", name: "read", input: {} }] })
      assert.include(error.message, "[\"id\"]")
      assert.include(error.message, "is missing")
    })

    it("image with a bad media_type", () => {
      const error = parseErrorOf({
        role: "user",
        content: [{ type: "image", source: { type: "base64", media_type: "image/bmp", data: "Qk0=" } }]
      })
      assert.include(error.message, "[\"media_type\"]")
      assert.include(error.message, "image/bmp")
    })

    it("thinking without its signature", () => {
      const error = parseErrorOf({ role: "assistant", content: [{ type: "thinking", thinking: "hmm" }] })
      assert.include(error.message, "[\"signature\"]")
    })

    it("tool_result content that is not a list of blocks", () => {
      const error = parseErrorOf({ role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: 42 }] })
      assert.include(error.message, "[\"content\"]")
      assert.include(error.message, "42")
    })

    it("an unknown role", () => {
      const error = parseErrorOf({ role: "system", content: "be terse" })
      assert.include(error.message, "[\"role\"]")
      assert.include(error.message, "system")
    })
  })

  it("AssistantMessage.toolUses and .text", () => {
    const a = new Message.ToolUseBlock({ id: "toolu_a", name: "a", input: {} })
    const b = new Message.ToolUseBlock({ id: "toolu_b", name: "b", input: { x: 1 } })
    const message = new Message.AssistantMessage({
      content: [
        new Message.ThinkingBlock({ thinking: "not text", signature }),
        Message.text("Hello, "),
        a,
        { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "q" } },
        Message.text("wörld 🌍"),
        b
      ]
    })
    assert.deepStrictEqual(message.toolUses, [a, b])
    assert.strictEqual(message.toolUses[0], a)
    assert.strictEqual(message.toolUses[1], b)
    assert.strictEqual(message.text, "Hello, wörld 🌍")

    const empty = new Message.AssistantMessage({ content: [] })
    assert.deepStrictEqual(empty.toolUses, [])
    assert.strictEqual(empty.text, "")

    // the getters work on decoded messages too
    const decoded = Message.fromParam(Message.toParam(message)) as Message.AssistantMessage
    assert.deepStrictEqual(decoded.toolUses.map((t) => t.id), ["toolu_a", "toolu_b"])
    assert.strictEqual(decoded.text, "Hello, wörld 🌍")
  })

  it("UserMessage.toolResults", () => {
    const result = new Message.ToolResultBlock({ tool_use_id: "toolu_a", content: "ok" })
    assert.deepStrictEqual(new Message.UserMessage({ content: [Message.text("and"), result] }).toolResults, [result])
    assert.deepStrictEqual(Message.user("plain").toolResults, [])
  })
  describe("the constructors of messages and tool results check their fields as Effect's own check does", () => {
    const errorOf = (f: () => unknown): string => {
      try {
        f()
      } catch (e) {
        assert.instanceOf(e, ParseResult.ParseError)
        return (e as Error).message
      }
      throw new Error("no error")
    }
    const blocks = "TextBlock | ImageBlock | DocumentBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | " +
      "RedactedThinkingBlock | { readonly type: { string | filter }; readonly [x: string]: unknown }"

    it("a wrong field: the error is titled and placed as before", () => {
      assert.strictEqual(
        errorOf(() => new Message.UserMessage({ content: 5 as any })),
        `UserMessage (Constructor)\n└─ ["content"]\n   └─ string | ReadonlyArray<${blocks}>\n` +
          `      ├─ Expected string, actual 5\n      └─ Expected ReadonlyArray<${blocks}>, actual 5`
      )
      assert.strictEqual(
        errorOf(() => new Message.UserMessage({ role: "assistant" as any, content: "x" })),
        "UserMessage (Constructor)\n└─ [\"role\"]\n   └─ Expected \"user\", actual \"assistant\""
      )
      assert.strictEqual(
        errorOf(() => new Message.AssistantMessage({ content: "x" as any })),
        `AssistantMessage (Constructor)\n└─ ["content"]\n   └─ Expected ReadonlyArray<${blocks}>, actual "x"`
      )
      assert.strictEqual(
        errorOf(() => new Message.ToolResultBlock({ tool_use_id: 1 as any, content: "x" })),
        "ToolResultBlock (Constructor)\n└─ [\"tool_use_id\"]\n   └─ Expected string, actual 1"
      )
    })

    it("blocks must be instances; unknown fields are dropped; the tags are defaulted; `true` skips the check", () => {
      assert.match(errorOf(() => new Message.UserMessage({ content: [{ type: "text", text: "x" } as any] })), /Expected TextBlock/)
      assert.match(
        errorOf(() => new Message.ToolResultBlock({ tool_use_id: "t", content: [{ type: "text", text: "x" } as any] })),
        /Expected TextBlock/
      )
      assert.strictEqual(
        JSON.stringify(new Message.UserMessage({ content: [Message.text("ok")], extra: 1 } as any)),
        "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}"
      )
      assert.strictEqual(new Message.AssistantMessage({ content: [] }).role, "assistant")
      assert.strictEqual(new Message.ToolResultBlock({ tool_use_id: "t" }).type, "tool_result")
      const unchecked = new Message.UserMessage({ content: 5 as any }, true)
      assert.strictEqual(unchecked.content as unknown, 5)
      assert.strictEqual((new Message.UserMessage({ content: 5 as any }, { disableValidation: true })).content as unknown, 5)
      // Decoding builds through the constructor unchecked, after its own decoding.
      assert.strictEqual(Schema.decodeUnknownSync(Message.Message)({ role: "user", content: "hi" }).content, "hi")
    })
  })
})

