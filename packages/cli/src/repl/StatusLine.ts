/**
 * The status line shown after each turn: model, context used and left, and the session's cost.
 *
 * @since 0.1.0
 */
import type { SdkMessage } from "@keel/core"

/** What the status line shows. @category Models */
export interface Status {
  readonly model: string
  /** Tokens the conversation held at the last model response (its input, cached or not, plus its output). */
  readonly contextTokens: number
  readonly contextWindow: number
  readonly costUsd: number
}

/** Tokens in context after a response with this usage. @category Measuring */
export const contextTokens = (usage: SdkMessage.NonNullableUsage): number =>
  usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens + usage.output_tokens

const compact = (n: number): string =>
  n >= 1_000_000 ? `${(n / 1_000_000).toFixed(1)}M` : n >= 1_000 ? `${(n / 1_000).toFixed(1)}k` : String(n)

/** `claude-sonnet-4-6 · 12.3k/200k tokens · 94% context left · $0.0123`. @category Rendering */
export const format = (status: Status): string => {
  const left = status.contextWindow > 0
    ? Math.max(0, Math.round(100 * (1 - status.contextTokens / status.contextWindow)))
    : 100
  const cost = status.costUsd < 1 ? status.costUsd.toFixed(4) : status.costUsd.toFixed(2)
  return `${status.model} · ${compact(status.contextTokens)}/${compact(status.contextWindow)} tokens · ${left}% context left · $${cost}`
}
