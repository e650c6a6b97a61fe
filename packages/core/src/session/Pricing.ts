/**
 * What tokens cost, per model, in USD per million tokens: input, output, cache writes (5-minute and
 * 1-hour TTL) and cache reads. One table, easy to update; embedders pass their own (the Session's
 * `pricing` option) and users override entries with a JSON file (`KEEL_PRICING_FILE`). A model the
 * table does not know prices at zero rather than at a wrong price.
 *
 * Per-request premiums (long-context rates above 200K input tokens, server tools such as web search)
 * are not modelled.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Config from "effect/Config"
import type { ConfigError } from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type { TokenUsage } from "./TokenUsage.js"

/** Prices of one model, USD per million tokens. @category Models */
export interface Price {
  readonly input: number
  readonly output: number
  /** Cache writes with the default 5-minute TTL (1.25 × input on Anthropic's list). */
  readonly cacheWrite5m: number
  /** Cache writes with the 1-hour TTL (2 × input). */
  readonly cacheWrite1h: number
  /** Cache reads (0.1 × input). */
  readonly cacheRead: number
}

/** Prices by model id prefix; the longest matching prefix wins. @category Models */
export type Table = Readonly<Record<string, Price>>

/**
 * The token counts a cost is computed from: the counters of a `TokenUsage` that have a price.
 * Cache writes the API did not split by TTL count as 5-minute writes, its default.
 *
 * @category Models
 */
export type Tokens =
  & Pick<TokenUsage, "inputTokens" | "outputTokens" | "cacheReadInputTokens" | "cacheCreationInputTokens">
  & Partial<Pick<TokenUsage, "cacheCreationEphemeral5mInputTokens" | "cacheCreationEphemeral1hInputTokens">>

const row = (input: number, output: number, cacheWrite5m: number, cacheWrite1h: number, cacheRead: number): Price => ({
  input,
  output,
  cacheWrite5m,
  cacheWrite1h,
  cacheRead
})

/**
 * Anthropic's published list prices (input, output, 5-minute write, 1-hour write, read). Prefixes
 * are specific on purpose: a newer model that merely shares a family name (say a future
 * `claude-opus-4-9`) is unknown, and prices at zero, rather than inheriting an older model's price.
 *
 * @category Constants
 */
export const defaultTable: Table = {
  "claude-opus-4-6": row(5, 25, 6.25, 10, 0.5),
  "claude-opus-4-5": row(5, 25, 6.25, 10, 0.5),
  "claude-opus-4-1": row(15, 75, 18.75, 30, 1.5),
  "claude-opus-4-0": row(15, 75, 18.75, 30, 1.5),
  "claude-opus-4-2025": row(15, 75, 18.75, 30, 1.5),
  "claude-3-opus": row(15, 75, 18.75, 30, 1.5),
  "claude-sonnet-4-6": row(3, 15, 3.75, 6, 0.3),
  "claude-sonnet-4-5": row(3, 15, 3.75, 6, 0.3),
  "claude-sonnet-4-0": row(3, 15, 3.75, 6, 0.3),
  "claude-sonnet-4-2025": row(3, 15, 3.75, 6, 0.3),
  "claude-3-7-sonnet": row(3, 15, 3.75, 6, 0.3),
  "claude-haiku-4-5": row(1, 5, 1.25, 2, 0.1),
  "claude-3-5-haiku": row(0.8, 4, 1, 1.6, 0.08),
  "claude-3-haiku": row(0.25, 1.25, 0.3, 0.5, 0.03)
}

/** The price of a model, if the table knows it (longest matching prefix). @category Lookup */
export const priceOf = (model: string, table: Table = defaultTable): Price | undefined => {
  let best: string | undefined
  for (const prefix in table) {
    if (model.startsWith(prefix) && (best === undefined || prefix.length > best.length)) best = prefix
  }
  return best === undefined ? undefined : table[best]
}

/** The cost in USD of a model's tokens; zero for a model the table does not know. @category Lookup */
export const costOf = (model: string, tokens: Tokens, table: Table = defaultTable): number => {
  const price = priceOf(model, table)
  if (price === undefined) return 0
  const write1h = tokens.cacheCreationEphemeral1hInputTokens ?? 0
  const write5m = Math.max(0, tokens.cacheCreationInputTokens - write1h)
  return (tokens.inputTokens * price.input + tokens.outputTokens * price.output + write5m * price.cacheWrite5m +
    write1h * price.cacheWrite1h + tokens.cacheReadInputTokens * price.cacheRead) / 1_000_000
}

/** `table` with `overrides` added; an override of a prefix replaces its price. @category Combinators */
export const merge = (table: Table, overrides: Table): Table => ({ ...table, ...overrides })

const usd = Schema.Number.pipe(
  Schema.filter((n) => Number.isFinite(n) && n >= 0, { message: () => "a price in USD per million tokens, 0 or more" })
)

/**
 * One model's prices in a pricing file. The cache prices may be left out: they then follow
 * Anthropic's multipliers of the input price (5-minute writes 1.25 ×, 1-hour writes 2 ×, reads 0.1 ×).
 *
 * @category Schemas
 */
export const PriceEntry = Schema.Struct({
  input: usd,
  output: usd,
  cacheWrite5m: Schema.optional(usd),
  cacheWrite1h: Schema.optional(usd),
  cacheRead: Schema.optional(usd)
})

/**
 * A pricing file: model id prefixes to prices, USD per million tokens, e.g.
 * `{"claude-sonnet-4-6": {"input": 3, "output": 15}, "my-proxy-model": {"input": 1, "output": 2, "cacheRead": 0.1}}`.
 *
 * @category Schemas
 */
export const PricingFile = Schema.Record({
  key: Schema.String.pipe(Schema.minLength(1, { message: () => "a model id prefix, not empty" })),
  value: PriceEntry
})

/** The table a pricing file's entries describe. @category Conversions */
export const fromEntries = (entries: typeof PricingFile.Type): Table => {
  const table: Record<string, Price> = {}
  for (const [prefix, e] of Object.entries(entries)) {
    table[prefix] = {
      input: e.input,
      output: e.output,
      cacheWrite5m: e.cacheWrite5m ?? e.input * 1.25,
      cacheWrite1h: e.cacheWrite1h ?? e.input * 2,
      cacheRead: e.cacheRead ?? e.input * 0.1
    }
  }
  return table
}

/** A pricing file that cannot be used. @category Errors */
export class InvalidPricing extends Schema.TaggedError<InvalidPricing>("@keel/core/InvalidPricing")("InvalidPricing", {
  message: Schema.String
}) {}

const decodeFile = Schema.decodeUnknownEither(Schema.parseJson(PricingFile))

/**
 * Parses the text of a pricing file named `file` (for messages) into a table of its entries.
 *
 * @category Loading
 */
export const parse = (file: string, text: string): Effect.Effect<Table, InvalidPricing> => {
  const decoded = decodeFile(text)
  return decoded._tag === "Right" ? Effect.succeed(fromEntries(decoded.right)) : Effect.fail(
    new InvalidPricing({
      message: `${file} is not a valid pricing file: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}\n` +
        "Write model id prefixes to prices in USD per million tokens, e.g. " +
        "{\"claude-sonnet-4-6\": {\"input\": 3, \"output\": 15, \"cacheWrite5m\": 3.75, \"cacheWrite1h\": 6, \"cacheRead\": 0.3}}."
    })
  )
}

/** The default table with the entries of the pricing file at `file` over it. @category Loading */
export const load = (file: string): Effect.Effect<Table, InvalidPricing, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(file).pipe(
      Effect.mapError((e) => new InvalidPricing({ message: `Cannot read the pricing file ${file}: ${e.message}` }))
    )
    return merge(defaultTable, yield* parse(file, text))
  })

/** `KEEL_PRICING_FILE`: a JSON pricing file whose entries override the default prices. @category Configuration */
export const fileConfig: Config.Config<string | undefined> = Config.string("KEEL_PRICING_FILE").pipe(
  Config.option,
  Config.map(Option.getOrUndefined)
)

/**
 * The table to price a session with: the default table, with the entries of `KEEL_PRICING_FILE`
 * over it when that is set.
 *
 * @category Loading
 */
export const tableConfig: Effect.Effect<Table, InvalidPricing | ConfigError, FileSystem.FileSystem> = Effect.flatMap(
  fileConfig,
  (file) => file === undefined || file.trim() === "" ? Effect.succeed(defaultTable) : load(file)
)
