/**
 * The session's cost, from its usage per model and a pricing table: the `modelUsage` and
 * `total_cost_usd` of every `result` (cumulative over the session, subagents included), the models
 * the table does not know (they count as $0, and the session warns once about each), and the text
 * `/cost` prints.
 *
 * @since 0.1.0
 */
import { windowFor } from "../context/TokenEstimate.js"
import * as Pricing from "./Pricing.js"
import type { ModelUsageReport } from "./SdkMessage.js"
import type { PerModel } from "./TokenUsage.js"

/** What a session has spent so far. @category Models */
export interface Report {
  /** Per model, as the `result` message's `modelUsage` reports it. */
  readonly modelUsage: Readonly<Record<string, ModelUsageReport>>
  /** USD, every model summed. */
  readonly totalCostUsd: number
  /** The models used that the pricing table does not know (priced at zero). */
  readonly unpriced: ReadonlyArray<string>
}

/** What a report needs besides the usage. @category Models */
export interface Options {
  readonly pricing: Pricing.Table
  /** The output-token cap per request to a model (`maxOutputTokens`). */
  readonly maxOutputTokens: number | ((model: string) => number)
  /** The context window of a model (default `TokenEstimate.windowFor`). */
  readonly contextWindow?: ((model: string) => number) | undefined
}

/** The report for a session's usage per model. @category Constructors */
export const report = (usage: PerModel, options: Options): Report => {
  const modelUsage: Record<string, ModelUsageReport> = {}
  const unpriced: Array<string> = []
  const contextWindow = options.contextWindow ?? windowFor
  let total = 0
  for (const [model, u] of usage) {
    if (Pricing.priceOf(model, options.pricing) === undefined) unpriced.push(model)
    const costUSD = Pricing.costOf(model, u, options.pricing)
    total += costUSD
    modelUsage[model] = {
      inputTokens: u.inputTokens,
      outputTokens: u.outputTokens,
      cacheReadInputTokens: u.cacheReadInputTokens,
      cacheCreationInputTokens: u.cacheCreationInputTokens,
      cacheCreationEphemeral5mInputTokens: u.cacheCreationEphemeral5mInputTokens,
      cacheCreationEphemeral1hInputTokens: u.cacheCreationEphemeral1hInputTokens,
      webSearchRequests: 0,
      costUSD,
      contextWindow: contextWindow(model),
      maxOutputTokens: typeof options.maxOutputTokens === "number" ? options.maxOutputTokens : options.maxOutputTokens(model)
    }
  }
  return { modelUsage, totalCostUsd: total, unpriced }
}

/** The session's total cost in USD (every model). @category Constructors */
export const total = (usage: PerModel, pricing: Pricing.Table): number => {
  let sum = 0
  for (const [model, u] of usage) sum += Pricing.costOf(model, u, pricing)
  return sum
}

/** The warning for a model without a price (shown once per model and session). @category Rendering */
export const unpricedWarning = (model: string): string =>
  `No price is known for model ${model}: its tokens count as $0 in total_cost_usd. ` +
  "Give its prices in a pricing file named by KEEL_PRICING_FILE (or, embedding Keel, the Session's pricing option)."

/** Dollars as `/cost` shows them: four decimals under $1, two above. @category Rendering */
export const formatUsd = (usd: number): string => `$${usd >= 1 ? usd.toFixed(2) : usd.toFixed(4)}`

const count = (n: number): string => n.toLocaleString("en-US")

const duration = (ms: number): string => {
  const seconds = ms / 1000
  if (seconds < 60) return `${seconds.toFixed(1)}s`
  const minutes = Math.floor(seconds / 60)
  return `${minutes}m ${(seconds - minutes * 60).toFixed(1)}s`
}

/**
 * What `/cost` prints (Claude Code's layout): the total, the time spent on the API and in the
 * session, and per model its tokens and cost.
 *
 * @category Rendering
 */
export const format = (r: Report, times: { readonly apiMs: number; readonly wallMs: number }): string => {
  const lines = [
    `Total cost:            ${formatUsd(r.totalCostUsd)}`,
    `Total duration (API):  ${duration(times.apiMs)}`,
    `Total duration (wall): ${duration(times.wallMs)}`
  ]
  const models = Object.entries(r.modelUsage)
  if (models.length === 0) {
    lines.push("Usage:                 no model calls yet")
    return lines.join("\n")
  }
  lines.push("Usage by model:")
  for (const [model, u] of models) {
    const price = r.unpriced.includes(model) ? "no price known, counted as $0" : formatUsd(u.costUSD)
    lines.push(
      `  ${model}: ${count(u.inputTokens)} input, ${count(u.outputTokens)} output, ` +
        `${count(u.cacheReadInputTokens)} cache read, ${count(u.cacheCreationInputTokens)} cache write ` +
        `(5m ${count(u.cacheCreationEphemeral5mInputTokens)}, 1h ${count(u.cacheCreationEphemeral1hInputTokens)}) (${price})`
    )
  }
  return lines.join("\n")
}
