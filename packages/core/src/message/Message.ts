/**
 * The message model: Schema classes that mirror the Messages API content blocks, user and assistant
 * messages, usage and stop reasons. Every class is shaped like its wire form (`type` / `role` fields,
 * snake_case), so `toParam` / `fromParam` round-trip losslessly, including thinking signatures.
 *
 * @since 0.1.0
 */
import type Anthropic from "@anthropic-ai/sdk"
import * as Schema from "effect/Schema"
import { constructorCheck } from "../internal/constructorCheck.js"

/** Prompt-cache breakpoint attached to a block. @category Schemas */
export const CacheControl = Schema.Struct({
  type: Schema.Literal("ephemeral"),
  ttl: Schema.optional(Schema.Literal("5m", "1h"))
})

const cacheControl = Schema.optional(Schema.NullOr(CacheControl))
const citations = Schema.optional(Schema.NullOr(Schema.Array(Schema.Unknown)))

/** A text block. @category Content */
export class TextBlock extends Schema.Class<TextBlock>("TextBlock")({
  type: Schema.tag("text"),
  text: Schema.String,
  citations,
  cache_control: cacheControl
}) {}

/** The source of an image: inline base64, a URL or an uploaded file. @category Schemas */
export const ImageSource = Schema.Union(
  Schema.Struct({
    type: Schema.Literal("base64"),
    media_type: Schema.Literal("image/jpeg", "image/png", "image/gif", "image/webp"),
    data: Schema.String
  }),
  Schema.Struct({ type: Schema.Literal("url"), url: Schema.String }),
  Schema.Struct({ type: Schema.Literal("file"), file_id: Schema.String })
)

/** An image block. @category Content */
export class ImageBlock extends Schema.Class<ImageBlock>("ImageBlock")({
  type: Schema.tag("image"),
  source: ImageSource,
  cache_control: cacheControl
}) {}

/** The source of a document: base64 PDF, plain text, content blocks, a URL or an uploaded file. @category Schemas */
export const DocumentSource = Schema.Union(
  Schema.Struct({ type: Schema.Literal("base64"), media_type: Schema.Literal("application/pdf"), data: Schema.String }),
  Schema.Struct({ type: Schema.Literal("text"), media_type: Schema.Literal("text/plain"), data: Schema.String }),
  Schema.Struct({ type: Schema.Literal("content"), content: Schema.Union(Schema.String, Schema.Array(Schema.Unknown)) }),
  Schema.Struct({ type: Schema.Literal("url"), url: Schema.String }),
  Schema.Struct({ type: Schema.Literal("file"), file_id: Schema.String })
)

/** A document block (PDF, text, ...). @category Content */
export class DocumentBlock extends Schema.Class<DocumentBlock>("DocumentBlock")({
  type: Schema.tag("document"),
  source: DocumentSource,
  title: Schema.optional(Schema.NullOr(Schema.String)),
  context: Schema.optional(Schema.NullOr(Schema.String)),
  citations: Schema.optional(Schema.NullOr(Schema.Unknown)),
  cache_control: cacheControl
}) {}

/** A tool call made by the model. `input` is the parsed JSON object. @category Content */
export class ToolUseBlock extends Schema.Class<ToolUseBlock>("ToolUseBlock")({
  type: Schema.tag("tool_use"),
  id: Schema.String,
  name: Schema.String,
  input: Schema.Unknown,
  cache_control: cacheControl
}) {}

/** The content a tool result may carry besides a plain string. @category Schemas */
export const ToolResultContent = Schema.Union(TextBlock, ImageBlock, DocumentBlock)

const toolResultFields = {
  type: Schema.tag("tool_result"),
  tool_use_id: Schema.String,
  content: Schema.optional(Schema.Union(Schema.String, Schema.Array(ToolResultContent))),
  is_error: Schema.optional(Schema.Boolean),
  cache_control: cacheControl,
  /**
   * The call's structured result (`Tool.Structured`; for a failure, its message as Claude Code
   * gives it: `Error: ...`), for the transcript and hosts (`tool_use_result`). Never sent to the API.
   */
  toolUseResult: Schema.optional(Schema.Unknown)
}
const checkToolResult = constructorCheck("ToolResultBlock", toolResultFields, { type: "tool_result" })

/** The answer to a `tool_use`, sent in a user message. @category Content */
export class ToolResultBlock extends Schema.Class<ToolResultBlock>("ToolResultBlock")(toolResultFields) {
  constructor(props: Schema.Struct.Constructor<typeof toolResultFields>, options?: Schema.MakeOptions) {
    super(checkToolResult(props, options), true)
  }
}

/** Extended thinking; the signature must be sent back unchanged. @category Content */
export class ThinkingBlock extends Schema.Class<ThinkingBlock>("ThinkingBlock")({
  type: Schema.tag("thinking"),
  thinking: Schema.String,
  signature: Schema.String
}) {}

/** Thinking the API returned encrypted; sent back unchanged. @category Content */
export class RedactedThinkingBlock extends Schema.Class<RedactedThinkingBlock>("RedactedThinkingBlock")({
  type: Schema.tag("redacted_thinking"),
  data: Schema.String
}) {}

const knownTypes = new Set([
  "text",
  "image",
  "document",
  "tool_use",
  "tool_result",
  "thinking",
  "redacted_thinking"
])

/**
 * Any other block the API defines (server tool use, web search results, ...), kept verbatim so that
 * history with server-side tools still round-trips.
 *
 * @category Content
 */
export const OtherBlock = Schema.Struct(
  { type: Schema.String.pipe(Schema.filter((t) => !knownTypes.has(t), { message: () => "a known block type" })) },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)
/** @category Content */
export type OtherBlock = typeof OtherBlock.Type

/** Every content block. @category Content */
export const ContentBlock = Schema.Union(
  TextBlock,
  ImageBlock,
  DocumentBlock,
  ToolUseBlock,
  ToolResultBlock,
  ThinkingBlock,
  RedactedThinkingBlock,
  OtherBlock
)
/** @category Content */
export type ContentBlock = typeof ContentBlock.Type

/** The stop reasons the kernel knows the meaning of. @category Schemas */
export const KnownStopReason = Schema.Literal(
  "end_turn",
  "max_tokens",
  "stop_sequence",
  "tool_use",
  "pause_turn",
  "refusal",
  "model_context_window_exceeded",
  "compaction"
)

/**
 * Why the model stopped: one of {@link KnownStopReason}, or any other string a newer API sends,
 * carried through as is (forward compatibility: an answer is never lost for its stop reason).
 *
 * @category Schemas
 */
export const StopReason = Schema.Union(KnownStopReason, Schema.String)
/** @category Schemas */
export type StopReason = typeof StopReason.Type

/** Token usage of one response, including prompt-cache tokens. @category Schemas */
export class Usage extends Schema.Class<Usage>("Usage")({
  input_tokens: Schema.Number,
  output_tokens: Schema.Number,
  cache_creation_input_tokens: Schema.optional(Schema.NullOr(Schema.Number)),
  cache_read_input_tokens: Schema.optional(Schema.NullOr(Schema.Number)),
  cache_creation: Schema.optional(Schema.NullOr(Schema.Struct({
    ephemeral_5m_input_tokens: Schema.Number,
    ephemeral_1h_input_tokens: Schema.Number
  }))),
  server_tool_use: Schema.optional(Schema.NullOr(Schema.Unknown)),
  service_tier: Schema.optional(Schema.NullOr(Schema.String))
}) {
  /** Usage with every counter at zero. */
  static readonly zero = new Usage({ input_tokens: 0, output_tokens: 0 })
}

const userFields = {
  role: Schema.tag("user"),
  content: Schema.Union(Schema.String, Schema.Array(ContentBlock))
}
const checkUser = constructorCheck("UserMessage", userFields, { role: "user" })

/** A user message: the prompt, or the tool results of the previous assistant message. @category Messages */
export class UserMessage extends Schema.Class<UserMessage>("UserMessage")(userFields) {
  constructor(props: Schema.Struct.Constructor<typeof userFields>, options?: Schema.MakeOptions) {
    super(checkUser(props, options), true)
  }

  /** The tool_result blocks this message carries. */
  get toolResults(): ReadonlyArray<ToolResultBlock> {
    return typeof this.content === "string"
      ? []
      : this.content.filter((b): b is ToolResultBlock => b instanceof ToolResultBlock)
  }
}

const assistantFields = {
  role: Schema.tag("assistant"),
  content: Schema.Array(ContentBlock),
  id: Schema.optional(Schema.String),
  model: Schema.optional(Schema.String),
  stop_reason: Schema.optional(Schema.NullOr(StopReason)),
  stop_sequence: Schema.optional(Schema.NullOr(Schema.String)),
  usage: Schema.optional(Usage)
}
const checkAssistant = constructorCheck("AssistantMessage", assistantFields, { role: "assistant" })

/**
 * An assistant message. `id`, `model`, `stop_reason` and `usage` are present when it came from the
 * API and absent when it was supplied as history (a prefill, an imported transcript).
 *
 * @category Messages
 */
export class AssistantMessage extends Schema.Class<AssistantMessage>("AssistantMessage")(assistantFields) {
  constructor(props: Schema.Struct.Constructor<typeof assistantFields>, options?: Schema.MakeOptions) {
    super(checkAssistant(props, options), true)
  }

  /** The tool calls in this message, in order. */
  get toolUses(): ReadonlyArray<ToolUseBlock> {
    return this.content.filter((b): b is ToolUseBlock => b instanceof ToolUseBlock)
  }

  /** The text of this message, text blocks joined. */
  get text(): string {
    let out = ""
    for (const b of this.content) if (b instanceof TextBlock) out += b.text
    return out
  }
}

/** A message in a conversation. @category Messages */
export const Message = Schema.Union(UserMessage, AssistantMessage)
/** @category Messages */
export type Message = typeof Message.Type

/** The API's request-side message shape. @category Models */
export type MessageParam = Anthropic.Messages.MessageParam

const encodeBlocks = Schema.encodeSync(Schema.Array(ContentBlock))
const decodeMessage = Schema.decodeUnknownSync(Message)
const paramCache = new WeakMap<Message, MessageParam>()

/** Encoded blocks without what is for hosts only (a tool_result's `toolUseResult`). */
const withoutHostFields = (blocks: ReadonlyArray<Record<string, unknown>>): ReadonlyArray<Record<string, unknown>> =>
  blocks.some((b) => "toolUseResult" in b)
    ? blocks.map((b) => {
      if (!("toolUseResult" in b)) return b
      const { toolUseResult: _, ...rest } = b
      return rest
    })
    : blocks

/** Whether a block's cache mark (if any) has only its own fields (the Schema's encoding drops others). */
const plainMark = (block: object): boolean => {
  const mark = (block as { readonly cache_control?: Record<string, unknown> | null }).cache_control
  return mark == null || Object.keys(mark).every((k) => k === "type" || k === "ttl")
}

const markKeys = Object.keys(CacheControl.fields)

/**
 * `source`'s own fields named in `keys`, in that order (the Schema's order: a block built by its
 * constructor holds its `type` last), a cache mark copied the same way.
 */
const copyFields = (source: object, keys: ReadonlyArray<string>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const key of keys) {
    if (!Object.hasOwn(source, key)) continue
    const value = (source as Record<string, unknown>)[key]
    out[key] = key === "cache_control" && value != null ? copyFields(value, markKeys) : value
  }
  return out
}

const keysOf = new Map<Function, ReadonlyArray<string>>([
  [TextBlock, Object.keys(TextBlock.fields)],
  [ToolUseBlock, Object.keys(ToolUseBlock.fields)],
  [ThinkingBlock, Object.keys(ThinkingBlock.fields)],
  [RedactedThinkingBlock, Object.keys(RedactedThinkingBlock.fields)],
  // Without what is for hosts only.
  [ToolResultBlock, Object.keys(ToolResultBlock.fields).filter((k) => k !== "toolUseResult")]
])

/**
 * A block's wire form without the Schema, for the classes whose fields are already their wire form
 * (text, tool_use, thinking, redacted thinking, a tool_result of a string or text blocks): their
 * instances were validated when made, so the encoding is a copy of their fields, in the Schema's
 * order. `undefined` for any other block (the Schema encodes those).
 */
const plainBlock = (block: ContentBlock): Record<string, unknown> | undefined => {
  const keys = keysOf.get(block.constructor)
  if (keys === undefined || !plainMark(block)) return undefined
  const out = copyFields(block, keys)
  if (block instanceof ToolResultBlock && typeof block.content === "object") {
    const texts: Array<Record<string, unknown>> = []
    for (const c of block.content) {
      if (!(c instanceof TextBlock) || !plainMark(c)) return undefined
      texts.push(copyFields(c, keysOf.get(TextBlock)!))
    }
    out.content = texts
  }
  return out
}

/** Blocks in their wire form: copied when every one has a plain form, else encoded by the Schema. */
const blocksToParams = (blocks: ReadonlyArray<ContentBlock>): ReadonlyArray<Record<string, unknown>> => {
  const out: Array<Record<string, unknown>> = []
  for (const block of blocks) {
    const plain = plainBlock(block)
    if (plain === undefined) return withoutHostFields(encodeBlocks(blocks))
    out.push(plain)
  }
  return out
}

/**
 * The API's `MessageParam` for a message. Messages are immutable, so the encoding is computed once
 * per message and reused by every later request. The common blocks are copied rather than encoded
 * (a resumed 10,000-message session's first request encodes them all).
 *
 * @category Conversions
 */
export const toParam = (message: Message): MessageParam => {
  const cached = paramCache.get(message)
  if (cached !== undefined) return cached
  const param = {
    role: message.role,
    content: typeof message.content === "string" ? message.content : blocksToParams(message.content)
  } as MessageParam
  paramCache.set(message, param)
  return param
}

/**
 * The API payload for a conversation: each message's `MessageParam`, with consecutive messages of
 * the same role merged into one (a prompt after an interrupted turn, a prompt after `/compact`), so
 * roles alternate. Linear in the number of messages; params are the cached ones where nothing merges.
 *
 * @category Conversions
 */
export const toParams = (messages: ReadonlyArray<Message>): Array<MessageParam> => {
  const out: Array<MessageParam> = []
  for (const m of messages) {
    const param = toParam(m)
    const last = out[out.length - 1]
    if (last === undefined || last.role !== param.role) {
      out.push(param)
      continue
    }
    const blocks = (p: MessageParam) =>
      typeof p.content === "string" ? [{ type: "text" as const, text: p.content }] : p.content
    out[out.length - 1] = { role: param.role, content: [...blocks(last), ...blocks(param)] } as MessageParam
  }
  return out
}

/**
 * A message from the API's `MessageParam` (or a response `Message`). Throws a `ParseError` that
 * names the offending field when the input is not a valid message. An assistant param whose content
 * is a plain string (a prefill) becomes one text block, since assistant messages hold blocks.
 *
 * @category Conversions
 */
export const fromParam = (param: MessageParam | Anthropic.Messages.Message): Message =>
  decodeMessage(
    param?.role === "assistant" && typeof param.content === "string"
      ? { ...param, content: [{ type: "text", text: param.content }] }
      : param
  )

/** Decodes unknown input into a message, in the Effect error channel. @category Conversions */
export const decode = Schema.decodeUnknown(Message)

/** A user message with a plain text prompt. @category Constructors */
export const user = (content: string | ReadonlyArray<ContentBlock>): UserMessage => new UserMessage({ content })

/** A text block. @category Constructors */
export const text = (value: string): TextBlock => new TextBlock({ text: value })
