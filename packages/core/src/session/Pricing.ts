/**
 * What tokens cost, per model, in USD per million tokens. One table, easy to update; callers can
 * pass their own. A model the table does not know prices at zero rather than at a wrong price.
 *
 * @since 0.1.0
 */
import type { ModelUsage } from "./SessionState.js"

/** Prices of one model, USD per million tokens. @category Models */
export interface Price {
  readonly input: number
  readonly output: number
  /** Cache writes (5-minute TTL). */
  readonly cacheWrite: number
  readonly cacheRead: number
}

/** Prices by model id prefix; the longest matching prefix wins. @category Models */
export type Table = ReadonlyArray<readonly [prefix: string, price: Price]>

/**
 * Anthropic's published list prices. Prefixes are specific on purpose: a newer model that merely
 * shares a family name (say a future `claude-opus-4-9`) is unknown, and prices at zero, rather than
 * inheriting an older model's price. Pass a table of your own to price others.
 *
 * @category Constants
 */
export const defaultTable: Table = [
  ["claude-opus-4-6", { input: 5, output: 25, cacheWrite: 6.25, cacheRead: 0.5 }],
  ["claude-opus-4-5", { input: 5, output: 25, cacheWrite: 6.25, cacheRead: 0.5 }],
  ["claude-opus-4-1", { input: 15, output: 75, cacheWrite: 18.75, cacheRead: 1.5 }],
  ["claude-opus-4-2025", { input: 15, output: 75, cacheWrite: 18.75, cacheRead: 1.5 }],
  ["claude-sonnet-4-6", { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 }],
  ["claude-sonnet-4-5", { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 }],
  ["claude-sonnet-4-2025", { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 }],
  ["claude-3-7-sonnet", { input: 3, output: 15, cacheWrite: 3.75, cacheRead: 0.3 }],
  ["claude-haiku-4-5", { input: 1, output: 5, cacheWrite: 1.25, cacheRead: 0.1 }],
  ["claude-3-5-haiku", { input: 0.8, output: 4, cacheWrite: 1, cacheRead: 0.08 }]
]

/** The price of a model, if the table knows it. @category Lookup */
export const priceOf = (model: string, table: Table = defaultTable): Price | undefined => {
  let best: readonly [string, Price] | undefined
  for (const entry of table) {
    if (model.startsWith(entry[0]) && (best === undefined || entry[0].length > best[0].length)) best = entry
  }
  return best?.[1]
}

/** The cost in USD of a model's usage; zero for a model the table does not know. @category Lookup */
export const costOf = (model: string, usage: ModelUsage, table: Table = defaultTable): number => {
  const price = priceOf(model, table)
  if (price === undefined) return 0
  return (usage.inputTokens * price.input + usage.outputTokens * price.output +
    usage.cacheCreationInputTokens * price.cacheWrite + usage.cacheReadInputTokens * price.cacheRead) / 1_000_000
}
