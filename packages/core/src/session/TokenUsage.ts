/**
 * Token counts, in one shape everywhere: one response's, a turn's, and each model's totals over a
 * session (`SessionState.usage`), as transcripts store them (`usage` entries) and as costs are
 * computed from them. The SDK shapes (`usage`, `modelUsage`) are projections of it.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import type { Usage } from "../message/Message.js"

/** A counter that an older transcript may not have written: it reads as 0. */
const counter = Schema.optionalWith(Schema.Number, { default: () => 0 })

/** Token counts. Cache writes are split by TTL; API answers that do not split them count as 5-minute writes. @category Schemas */
export class TokenUsage extends Schema.Class<TokenUsage>("TokenUsage")({
  inputTokens: counter,
  outputTokens: counter,
  cacheReadInputTokens: counter,
  /** Cache writes of every TTL. */
  cacheCreationInputTokens: counter,
  /** The cache writes with the 5-minute TTL. */
  cacheCreationEphemeral5mInputTokens: counter,
  /** The cache writes with the 1-hour TTL. */
  cacheCreationEphemeral1hInputTokens: counter,
  /** Model requests these tokens are the sum of. */
  requests: counter
}) {}

/**
 * Counts the kernel computes from numbers it already holds: built without validating them again
 * (a validation per response would cost more than the rest of the bookkeeping).
 */
const counted = (fields: typeof TokenUsage.Type): TokenUsage => new TokenUsage(fields, true)

/** Every counter at zero. @category Constants */
export const zero: TokenUsage = TokenUsage.make({})

/** The counts of one response (the API's `usage`): one request. @category Constructors */
export const fromResponse = (usage: Usage): TokenUsage => {
  const split = usage.cache_creation
  const written1h = split?.ephemeral_1h_input_tokens ?? 0
  const written = usage.cache_creation_input_tokens ?? (split != null ? split.ephemeral_5m_input_tokens + written1h : 0)
  return counted({
    inputTokens: usage.input_tokens,
    outputTokens: usage.output_tokens,
    cacheReadInputTokens: usage.cache_read_input_tokens ?? 0,
    cacheCreationInputTokens: written,
    cacheCreationEphemeral5mInputTokens: Math.max(0, written - written1h),
    cacheCreationEphemeral1hInputTokens: written1h,
    requests: 1
  })
}

/** The sum of two counts. @category Combinators */
export const add = (a: TokenUsage, b: TokenUsage): TokenUsage =>
  counted({
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens,
    cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
    cacheCreationEphemeral5mInputTokens: a.cacheCreationEphemeral5mInputTokens + b.cacheCreationEphemeral5mInputTokens,
    cacheCreationEphemeral1hInputTokens: a.cacheCreationEphemeral1hInputTokens + b.cacheCreationEphemeral1hInputTokens,
    requests: a.requests + b.requests
  })

/** Totals per model. @category Models */
export type PerModel = ReadonlyMap<string, TokenUsage>

/** `totals` with `usage` added to `model`'s. @category Combinators */
export const addTo = (totals: PerModel, model: string, usage: TokenUsage): PerModel =>
  new Map(totals).set(model, add(totals.get(model) ?? zero, usage))

/** Two sets of totals per model added up (a subagent's into its parent's). @category Combinators */
export const merge = (totals: PerModel, more: PerModel): PerModel => {
  if (more.size === 0) return totals
  const next = new Map(totals)
  for (const [model, usage] of more) next.set(model, add(next.get(model) ?? zero, usage))
  return next
}
