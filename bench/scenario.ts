/**
 * The benchmark's responses: a text block of N deltas, or one tool_use whose input arrives in N
 * chunks. Requests name the scenario in their model field: `bench-text-N` or `bench-tool-N`.
 */
import type { StreamEvent } from "@keel/core"

type Event = StreamEvent.StreamEvent

const head = (): Array<Event> => [{
  type: "message_start",
  message: {
    id: "msg_bench",
    type: "message",
    role: "assistant",
    model: "claude-bench",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 1, cache_creation_input_tokens: null, cache_read_input_tokens: null }
  } as any
}]

const tail = (stop: "end_turn" | "tool_use"): Array<Event> => [
  { type: "content_block_stop", index: 0 },
  { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 100 } } as any,
  { type: "message_stop" }
]

/** N text deltas of 8 characters. */
export const textEvents = (n: number): Array<Event> => {
  const events = head()
  events.push({ type: "content_block_start", index: 0, content_block: { type: "text", text: "", citations: null } })
  for (let i = 0; i < n; i++) {
    events.push({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "token. " } })
  }
  return [...events, ...tail("end_turn")]
}

/** One tool_use whose input `{"data":"xxxx..."}` arrives in N chunks. */
export const toolEvents = (n: number): Array<Event> => {
  const events = head()
  events.push({
    type: "content_block_start",
    index: 0,
    content_block: { type: "tool_use", id: "toolu_bench", name: "Sink", input: {} } as any
  })
  const json = JSON.stringify({ data: "x".repeat(n * 8) })
  const size = Math.ceil(json.length / n)
  for (let i = 0; i < json.length; i += size) {
    events.push({
      type: "content_block_delta",
      index: 0,
      delta: { type: "input_json_delta", partial_json: json.slice(i, i + size) }
    })
  }
  return [...events, ...tail("tool_use")]
}

const cache = new Map<string, Array<Event>>()

/** The events for a model name `bench-<shape>-<n>` (built once per name). */
export const eventsFor = (model: string): Array<Event> => {
  let events = cache.get(model)
  if (events === undefined) {
    const [, shape, n] = model.split("-")
    events = shape === "tool" ? toolEvents(Number(n)) : textEvents(Number(n))
    cache.set(model, events)
  }
  return events
}

const sizes = new Map<string, number>()

/** The size in bytes of the SSE body for a model name (as bench/serve.ts frames it). */
export const bodyBytes = (model: string): number => {
  let size = sizes.get(model)
  if (size === undefined) {
    size = 0
    for (const event of eventsFor(model)) size += `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`.length
    sizes.set(model, size)
  }
  return size
}
