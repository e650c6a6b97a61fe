/**
 * The REPL's live indicator while a turn runs: `✻ working… 12 s · ↓ 340 tokens`, the time since
 * the turn started and the output tokens streamed so far (the API's count once a response reports
 * it, an estimate from the streamed text until then), and, while a failed request waits to be
 * retried, its countdown `⚠ retrying in 3 s (2/10): overloaded`. Pure: the renderer keeps the
 * state and draws it again each second.
 *
 * @since 0.1.0
 */
import type { SdkMessage } from "@keel/core"
import * as Notice from "./Notice.js"

/** What the working line counts for one turn. @category Models */
export interface Turn {
  readonly startedAt: number
  /** Output tokens of the turn's finished responses. */
  readonly settled: number
  /** Characters streamed so far by the response under way (text, thinking, tool input). */
  readonly streamedChars: number
  /** The output tokens the response under way reported (its `message_delta` usage), if it has. */
  readonly reported: number | undefined
}

/** A failed request waiting to be retried. @category Models */
export interface Retry {
  readonly message: SdkMessage.ApiRetry
  /** When the retry starts, in milliseconds. */
  readonly at: number
}

/** A turn starting at `now`. @category Constructors */
export const start = (now: number): Turn => ({ startedAt: now, settled: 0, streamedChars: 0, reported: undefined })

/** A retry waiting from `now` for its delay. @category Constructors */
export const retry = (message: SdkMessage.ApiRetry, now: number): Retry => ({ message, at: now + message.retry_delay_ms })

/** About four characters a token, for a response that has not reported its count yet. */
const estimate = (chars: number): number => Math.ceil(chars / 4)

/** The output tokens streamed so far in the turn. @category Measuring */
export const tokens = (turn: Turn): number => turn.settled + (turn.reported ?? estimate(turn.streamedChars))

/**
 * The turn after one streamed event of the model's response: deltas add their characters, a
 * `message_delta` reports the response's count, `message_stop` settles it.
 *
 * @category Updating
 */
export const onEvent = (turn: Turn, event: SdkMessage.PartialAssistant["event"]): Turn => {
  const e = event as { type: string; delta?: Record<string, unknown>; usage?: { output_tokens?: number } }
  switch (e.type) {
    case "content_block_delta": {
      const d = e.delta ?? {}
      const text = d.text ?? d.thinking ?? d.partial_json
      return typeof text === "string" ? { ...turn, streamedChars: turn.streamedChars + text.length } : turn
    }
    case "message_delta":
      return typeof e.usage?.output_tokens === "number" ? { ...turn, reported: e.usage.output_tokens } : turn
    case "message_stop":
      return { startedAt: turn.startedAt, settled: tokens(turn), streamedChars: 0, reported: undefined }
    default:
      return turn
  }
}

/** `12 s`, `3 m 05 s`. @category Rendering */
export const elapsed = (ms: number): string => {
  const total = Math.max(0, Math.floor(ms / 1_000))
  return total < 60 ? `${total} s` : `${Math.floor(total / 60)} m ${String(total % 60).padStart(2, "0")} s`
}

/** `✻ working… 12 s · ↓ 340 tokens · Esc or Ctrl+C to interrupt`. @category Rendering */
export const line = (turn: Turn, now: number): string => {
  const n = tokens(turn)
  return `✻ working… ${elapsed(now - turn.startedAt)}${n > 0 ? ` · ↓ ${n} tokens` : ""} · Esc or Ctrl+C to interrupt`
}

/** `⚠ retrying in 3 s (2/10): overloaded`, or `undefined` once the retry has started. @category Rendering */
export const countdown = (waiting: Retry, now: number): string | undefined =>
  now >= waiting.at ? undefined : `⚠ ${Notice.retryIn(waiting.message, Math.ceil((waiting.at - now) / 1_000))}`
