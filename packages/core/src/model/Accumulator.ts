/**
 * The accumulator: a fold from raw stream events to the final assistant message. Text, thinking and
 * tool-input JSON are collected as chunks (see `Chunks`) and joined at `content_block_stop`, and tool input is
 * parsed once, so the cost is linear in the bytes streamed whatever the number of deltas.
 *
 * The state is mutable but private to one fold: `make` a state, `step` every event through it in
 * order, then `finish`. `fold` does all three for a finished sequence.
 *
 * @since 0.1.0
 */
import type Anthropic from "@anthropic-ai/sdk"
import {
  AssistantMessage,
  type ContentBlock,
  type OtherBlock,
  RedactedThinkingBlock,
  type StopReason,
  TextBlock,
  ThinkingBlock,
  ToolUseBlock,
  Usage
} from "../message/Message.js"
import type { StreamEvent } from "./StreamEvent.js"

/**
 * Collects a block's string chunks. Every `SEGMENT` chunks are joined into one segment, so a long
 * stream keeps a few large strings alive instead of one small string per delta (which the garbage
 * collector would otherwise promote and trace); the segments are joined once at the end. Every
 * character is copied at most twice: linear in the bytes streamed.
 */
export class Chunks {
  /** Chunks joined into one segment at a time. */
  static readonly SEGMENT = 512
  private segments: Array<string> = []
  private pending: Array<string> = []
  /** Chunks pushed so far. */
  count = 0

  constructor(first?: string) {
    if (first) this.push(first)
  }

  push(chunk: string): void {
    this.count++
    this.pending.push(chunk)
    if (this.pending.length === Chunks.SEGMENT) {
      this.segments.push(this.pending.join(""))
      this.pending = []
    }
  }

  /** Everything pushed, as one string. */
  join(): string {
    if (this.pending.length > 0) {
      this.segments.push(this.pending.join(""))
      this.pending = []
    }
    if (this.segments.length > 1) this.segments = [this.segments.join("")]
    return this.segments[0] ?? ""
  }
}

type Builder =
  | { kind: "text"; chunks: Chunks; citations: Array<unknown> | null; block: ContentBlock | undefined }
  | { kind: "thinking"; chunks: Chunks; signature: string; block: ContentBlock | undefined }
  | { kind: "tool_use"; id: string; name: string; start: unknown; json: Chunks; block: ContentBlock | undefined }
  | { kind: "server_tool_use"; start: OtherBlock; json: Chunks; block: ContentBlock | undefined }
  | { kind: "done"; block: ContentBlock }

/** The fold's state for one message. @category Models */
export interface State {
  started: boolean
  stopped: boolean
  id: string
  model: string
  stopReason: StopReason | null
  stopSequence: string | null
  usage: {
    input_tokens: number
    output_tokens: number
    cache_creation_input_tokens: number | null
    cache_read_input_tokens: number | null
    cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number } | null
    server_tool_use: unknown
    service_tier: string | null
  }
  readonly blocks: Array<Builder | undefined>
  /** Tool inputs whose JSON did not parse, by tool_use id, with the raw text. */
  readonly malformedToolInput: Map<string, string>
}

/** What the fold produced. @category Models */
export interface Result {
  readonly message: AssistantMessage
  /** Tool calls whose streamed input was not valid JSON (their `input` is `{}`), with the raw text. */
  readonly malformedToolInput: ReadonlyMap<string, string>
  /** Whether `message_stop` was seen. */
  readonly complete: boolean
}

/** A fresh state. @category Constructors */
export const make = (): State => ({
  started: false,
  stopped: false,
  id: "",
  model: "",
  stopReason: null,
  stopSequence: null,
  usage: {
    input_tokens: 0,
    output_tokens: 0,
    cache_creation_input_tokens: null,
    cache_read_input_tokens: null,
    cache_creation: null,
    server_tool_use: null,
    service_tier: null
  },
  blocks: [],
  malformedToolInput: new Map()
})

const startBlock = (block: Anthropic.Messages.RawContentBlockStartEvent["content_block"]): Builder => {
  switch (block.type) {
    case "text":
      return {
        kind: "text",
        chunks: new Chunks(block.text),
        citations: block.citations ? [...block.citations] : null,
        block: undefined
      }
    case "thinking":
      return { kind: "thinking", chunks: new Chunks(block.thinking), signature: block.signature, block: undefined }
    case "tool_use":
      return { kind: "tool_use", id: block.id, name: block.name, start: block.input, json: new Chunks(), block: undefined }
    case "server_tool_use":
      // its input streams as input_json_delta like a tool_use's; the block is otherwise kept verbatim
      return { kind: "server_tool_use", start: { ...block } as OtherBlock, json: new Chunks(), block: undefined }
    case "redacted_thinking":
      return { kind: "done", block: new RedactedThinkingBlock({ data: block.data }) }
    default:
      return { kind: "done", block: { ...(block as object) } as OtherBlock }
  }
}

const parseInput = (state: State, id: string, json: Chunks, start: unknown): unknown => {
  const raw = json.join()
  if (raw.length === 0) return start ?? {}
  try {
    return JSON.parse(raw)
  } catch {
    state.malformedToolInput.set(id, raw)
    return {}
  }
}

const finishBlock = (state: State, builder: Builder): ContentBlock => {
  if (builder.kind === "done") return builder.block
  if (builder.block !== undefined) return builder.block
  let block: ContentBlock
  switch (builder.kind) {
    case "text":
      block = new TextBlock({ text: builder.chunks.join(), citations: builder.citations }, { disableValidation: true })
      break
    case "thinking":
      block = new ThinkingBlock({ thinking: builder.chunks.join(), signature: builder.signature }, {
        disableValidation: true
      })
      break
    case "tool_use": {
      const input = parseInput(state, builder.id, builder.json, builder.start)
      block = new ToolUseBlock({ id: builder.id, name: builder.name, input }, { disableValidation: true })
      break
    }
    case "server_tool_use": {
      const input = parseInput(state, String(builder.start.id), builder.json, builder.start.input)
      block = { ...builder.start, input } as OtherBlock
      break
    }
  }
  builder.block = block
  return block
}

const applyUsage = (state: State, usage: Partial<Anthropic.Messages.Usage> | Anthropic.Messages.MessageDeltaUsage) => {
  const u = state.usage
  const src = usage as Partial<Anthropic.Messages.Usage>
  if (src.output_tokens != null) u.output_tokens = src.output_tokens
  if (src.input_tokens != null) u.input_tokens = src.input_tokens
  if (src.cache_creation_input_tokens != null) u.cache_creation_input_tokens = src.cache_creation_input_tokens
  if (src.cache_read_input_tokens != null) u.cache_read_input_tokens = src.cache_read_input_tokens
  if (src.cache_creation != null) u.cache_creation = { ...src.cache_creation }
  if (src.server_tool_use != null) u.server_tool_use = src.server_tool_use
  if (src.service_tier != null) u.service_tier = src.service_tier
}

/**
 * Folds one event into the state. Deltas only append a chunk to their block's list; nothing is
 * joined or parsed until the block stops.
 *
 * @category Folding
 */
export const step = (state: State, event: StreamEvent): State => {
  switch (event.type) {
    case "message_start": {
      state.started = true
      state.id = event.message.id
      state.model = event.message.model
      state.stopReason = event.message.stop_reason
      state.stopSequence = event.message.stop_sequence
      applyUsage(state, event.message.usage)
      break
    }
    case "content_block_start":
      state.blocks[event.index] = startBlock(event.content_block)
      break
    case "content_block_delta": {
      const builder = state.blocks[event.index]
      if (builder === undefined) break
      const delta = event.delta
      switch (delta.type) {
        case "text_delta":
          if (builder.kind === "text") builder.chunks.push(delta.text)
          break
        case "citations_delta":
          if (builder.kind === "text") (builder.citations ??= []).push(delta.citation)
          break
        case "input_json_delta":
          if (builder.kind === "tool_use" || builder.kind === "server_tool_use") builder.json.push(delta.partial_json)
          break
        case "thinking_delta":
          if (builder.kind === "thinking") builder.chunks.push(delta.thinking)
          break
        case "signature_delta":
          if (builder.kind === "thinking") builder.signature = delta.signature
          break
      }
      break
    }
    case "content_block_stop": {
      const builder = state.blocks[event.index]
      if (builder !== undefined) finishBlock(state, builder)
      break
    }
    case "message_delta":
      state.stopReason = event.delta.stop_reason
      state.stopSequence = event.delta.stop_sequence
      applyUsage(state, event.usage)
      break
    case "message_stop":
      state.stopped = true
      break
  }
  return state
}

/**
 * The tool_use block at `index` once its `content_block_stop` has been folded (its input parsed),
 * so its call can start before the message ends; `undefined` for any other block or an open one.
 *
 * @category Folding
 */
export const completedToolUse = (state: State, index: number): ToolUseBlock | undefined => {
  const builder = state.blocks[index]
  return builder !== undefined && builder.kind === "tool_use" && builder.block instanceof ToolUseBlock
    ? builder.block
    : undefined
}

/**
 * The assistant message the events so far describe. Blocks still open are closed as they stand.
 *
 * @category Folding
 */
export const finish = (state: State): Result => {
  const content: Array<ContentBlock> = []
  for (const builder of state.blocks) if (builder !== undefined) content.push(finishBlock(state, builder))
  const u = state.usage
  const usage = new Usage({
    input_tokens: u.input_tokens,
    output_tokens: u.output_tokens,
    cache_creation_input_tokens: u.cache_creation_input_tokens,
    cache_read_input_tokens: u.cache_read_input_tokens,
    ...(u.cache_creation !== null ? { cache_creation: u.cache_creation } : {}),
    ...(u.server_tool_use !== null ? { server_tool_use: u.server_tool_use } : {}),
    ...(u.service_tier !== null ? { service_tier: u.service_tier } : {})
  }, { disableValidation: true })
  const message = new AssistantMessage({
    content,
    id: state.id,
    model: state.model,
    stop_reason: state.stopReason,
    stop_sequence: state.stopSequence,
    usage
  }, { disableValidation: true })
  return { message, malformedToolInput: state.malformedToolInput, complete: state.stopped }
}

/** Folds a whole event sequence. @category Folding */
export const fold = (events: Iterable<StreamEvent>): Result => {
  const state = make()
  for (const event of events) step(state, event)
  return finish(state)
}
