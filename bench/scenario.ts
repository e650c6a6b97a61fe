/**
 * The benchmark's responses: a text block of N deltas, or one tool_use whose input arrives in N
 * chunks. Requests name the scenario in their model field: `bench-text-N` or `bench-tool-N`; the
 * `bench-loop-N` agent loop (a `Read` of {@link loopFile} per round until N rounds, then text) is
 * answered round by round with {@link loopEvents}.
 */
import type { StreamEvent } from "@keel/core"

type Event = StreamEvent.StreamEvent

const head = (): Array<Event> => [{
  type: "message_start",
  message: {
    id: "msg_bench",
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-6",
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

/**
 * The file round `k` of `bench-loop-N` reads, relative to the client's working directory: a different
 * file each round, as an agent exploring a project reads, so that no client can answer a round
 * from an earlier one (keel marks a re-read file's earlier result stale, which would shrink its requests).
 */
export const loopFile = (round: number): string => `files/${round}.txt`

/** The text of round `k`'s file: 5 short lines, so that a round's tool work is small and the same for every client. */
export const loopFileText = (round: number): string =>
  Array.from({ length: 5 }, (_, i) => `file ${round}, line ${i + 1}: the quick brown fox jumps over the lazy dog`).join("\n") + "\n"

/**
 * The answer to request `round` (1-based) of `bench-loop-n`: a `Read` of {@link loopFile} (its
 * input in 2 chunks, a fresh tool_use id) while `round <= n`, then a short text with end_turn.
 */
export const loopEvents = (round: number, n: number): Array<Event> => {
  if (round > n) return textEvents(4)
  const events = head()
  events.push({
    type: "content_block_start",
    index: 0,
    content_block: { type: "tool_use", id: `toolu_bench_${round}`, name: "Read", input: {} } as any
  })
  const json = JSON.stringify({ file_path: loopFile(round) })
  const half = Math.floor(json.length / 2)
  for (const part of [json.slice(0, half), json.slice(half)]) {
    events.push({ type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: part } })
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
