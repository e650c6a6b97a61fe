/**
 * The raw Messages API stream events, exactly as the API sends them (`message_start`,
 * `content_block_start`, `content_block_delta`, `content_block_stop`, `message_delta`, `message_stop`).
 *
 * @since 0.1.0
 */
import type Anthropic from "@anthropic-ai/sdk"
import { AssistantMessage, type ContentBlock, TextBlock, ThinkingBlock, ToolUseBlock, Usage } from "../message/Message.js"

/** One raw stream event. @category Models */
export type StreamEvent = Anthropic.Messages.RawMessageStreamEvent

/**
 * Activity on the wire that carried no event: the API's `ping` keep-alives (which the SDK drops) or
 * the first bytes of an event still arriving. The base model layer emits one for a network read that
 * yielded no event, so an idle watchdog above it sees the connection is alive.
 *
 * @category Models
 */
export interface Ping {
  readonly type: "ping"
}

/** The one `Ping` value. @category Constructors */
export const ping: Ping = { type: "ping" }

/** Options for {@link fromMessage}. @category Models */
export interface FromMessageOptions {
  /** Split text, thinking and tool input into deltas of at most this many characters (default 16). */
  readonly chunkSize?: number
}

const chunks = (s: string, size: number): Array<string> => {
  if (s.length === 0) return []
  const out: Array<string> = []
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size))
  return out
}

/**
 * The event sequence the API would stream for a finished assistant message: the inverse of the
 * accumulator. Used by `TestModel` and the loopback fake server to script realistic responses.
 *
 * @category Constructors
 */
export const fromMessage = (message: AssistantMessage, options: FromMessageOptions = {}): Array<StreamEvent> => {
  const size = options.chunkSize ?? 16
  const usage = message.usage ?? Usage.zero
  const events: Array<StreamEvent> = [{
    type: "message_start",
    message: {
      id: message.id ?? "msg_test",
      type: "message",
      role: "assistant",
      model: message.model ?? "claude-test",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      stop_details: null,
      container: null,
      diagnostics: null,
      usage: {
        input_tokens: usage.input_tokens,
        output_tokens: 1,
        cache_creation_input_tokens: usage.cache_creation_input_tokens ?? null,
        cache_read_input_tokens: usage.cache_read_input_tokens ?? null,
        cache_creation: usage.cache_creation ?? null,
        server_tool_use: usage.server_tool_use ?? null,
        service_tier: usage.service_tier ?? null
      }
    } as unknown as Anthropic.Messages.Message
  }]
  message.content.forEach((block: ContentBlock, index) => {
    if (block instanceof TextBlock) {
      events.push({ type: "content_block_start", index, content_block: { type: "text", text: "", citations: null } })
      for (const text of chunks(block.text, size)) {
        events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text } })
      }
      for (const citation of block.citations ?? []) {
        events.push({
          type: "content_block_delta",
          index,
          delta: { type: "citations_delta", citation: citation as Anthropic.Messages.CitationsDelta["citation"] }
        })
      }
    } else if (block instanceof ThinkingBlock) {
      events.push({ type: "content_block_start", index, content_block: { type: "thinking", thinking: "", signature: "" } })
      for (const thinking of chunks(block.thinking, size)) {
        events.push({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking } })
      }
      events.push({ type: "content_block_delta", index, delta: { type: "signature_delta", signature: block.signature } })
    } else if (block instanceof ToolUseBlock) {
      events.push({
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } as Anthropic.Messages.ToolUseBlock
      })
      for (const partial_json of chunks(JSON.stringify(block.input), size)) {
        events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json } })
      }
    } else {
      events.push({ type: "content_block_start", index, content_block: block as any })
    }
    events.push({ type: "content_block_stop", index })
  })
  events.push({
    type: "message_delta",
    delta: { stop_reason: message.stop_reason ?? "end_turn", stop_sequence: message.stop_sequence ?? null },
    usage: {
      output_tokens: usage.output_tokens,
      input_tokens: usage.input_tokens,
      cache_creation_input_tokens: usage.cache_creation_input_tokens ?? null,
      cache_read_input_tokens: usage.cache_read_input_tokens ?? null
    }
  } as Anthropic.Messages.RawMessageDeltaEvent)
  events.push({ type: "message_stop" })
  return events
}
