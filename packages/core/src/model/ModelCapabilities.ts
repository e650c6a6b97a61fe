/**
 * What each model can do, in one table by model id: its context window, its output limits (the
 * `max_tokens` a request gets by default and the most it may ask for), how it thinks, and the beta
 * headers every request to it needs. The thinking column is `Thinking`'s table (its styles and
 * efforts, resolved per request by `Thinking.resolve`), referenced here, not repeated: an entry sets
 * `thinking` only to override it.
 *
 * The output limits are Claude Code's (Opus 4.6: 64,000 by default, up to 128,000; Sonnet 4.6:
 * 32,000 up to 128,000; the other Claude 4 models 32,000 up to 64,000, Opus 4 and 4.1 32,000 flat)
 * and, for Claude 3, the API's documented maximum. A request's `max_tokens` is its model's default
 * unless the user set one (`CLAUDE_CODE_MAX_OUTPUT_TOKENS`, the Session's `maxTokens` option), which
 * is capped at the model's upper limit. A model the table does not know gets a 200,000-token window
 * and 32,000 output tokens, and a cap the user set is sent as given.
 *
 * Users add or override models with a JSON file (`KEEL_MODELS_FILE`), embedders with a table of
 * their own (`merge`), as with prices (`Pricing`).
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
import * as Thinking from "./Thinking.js"

/** A model's output limits, in tokens. @category Models */
export interface OutputLimits {
  /** The `max_tokens` of a request when the user set none. */
  readonly default: number
  /** The most a request may ask for; `undefined` when unknown (a cap the user set is sent as given). */
  readonly upper?: number | undefined
}

/** Everything Keel knows of one model. @category Models */
export interface Capabilities {
  /** The context window in tokens. */
  readonly contextWindow: number
  readonly maxOutputTokens: OutputLimits
  /** How it thinks (`Thinking`'s table unless the entry overrides it); `undefined` when unknown. */
  readonly thinking: Thinking.Capability | undefined
  /** Beta headers every request to it needs (besides the thinking parameters' own). */
  readonly betas: ReadonlyArray<string>
}

/** One row of the table: what it sets; the rest is the defaults'. @category Models */
export interface Entry {
  readonly contextWindow?: number | undefined
  readonly maxOutputTokens?: OutputLimits | undefined
  readonly thinking?: Thinking.Capability | undefined
  readonly betas?: ReadonlyArray<string> | undefined
}

/** Entries by model id part; the longest key the model id contains wins. @category Models */
export type Table = Readonly<Record<string, Entry>>

/** The context window of a model without a row, or whose row does not say. @category Constants */
export const DEFAULT_CONTEXT_WINDOW = 200_000

/** The context window of a model named with Claude Code's `[1m]` suffix. @category Constants */
export const LONG_CONTEXT_WINDOW = 1_000_000

/** The output limits of a model without a row: Claude Code's 32,000 by default, no known upper limit. @category Constants */
export const DEFAULT_OUTPUT: OutputLimits = { default: 32_000, upper: undefined }

const output = (byDefault: number, upper: number): Entry => ({ maxOutputTokens: { default: byDefault, upper } })

/**
 * The models Keel knows. Keys match anywhere in the id, so dated ids (`claude-sonnet-4-20250514`)
 * and provider prefixes (`us.anthropic.claude-sonnet-4-6`) find theirs.
 *
 * @category Constants
 */
export const defaultTable: Table = {
  "claude-opus-4-7": output(64_000, 128_000),
  "claude-opus-4-6": output(64_000, 128_000),
  "claude-sonnet-4-6": output(32_000, 128_000),
  "claude-opus-4-5": output(32_000, 64_000),
  "claude-sonnet-4-5": output(32_000, 64_000),
  "claude-sonnet-4": output(32_000, 64_000),
  "claude-haiku-4-5": output(32_000, 64_000),
  "claude-opus-4-1": output(32_000, 32_000),
  "claude-opus-4": output(32_000, 32_000),
  "claude-3-7-sonnet": output(32_000, 64_000),
  "claude-3-5-sonnet": output(8_192, 8_192),
  "claude-3-5-haiku": output(8_192, 8_192),
  "claude-3-opus": output(4_096, 4_096),
  "claude-3-haiku": output(4_096, 4_096)
}

/** The row of the longest key `model` contains, if any. */
const rowOf = (model: string, table: Table): Entry | undefined => {
  const id = model.toLowerCase()
  let best: string | undefined
  for (const key of Object.keys(table)) {
    if (id.includes(key.toLowerCase()) && (best === undefined || key.length > best.length)) best = key
  }
  return best === undefined ? undefined : table[best]
}

/**
 * What {@link of} found, per table and model: a turn asks several times per round (max_tokens, the
 * context window, thinking), and tables do not change once made.
 */
const known = new WeakMap<Table, Map<string, Capabilities>>()

const lookUp = (model: string, table: Table): Capabilities => {
  const row = rowOf(model, table)
  return {
    contextWindow: row?.contextWindow ?? (/\[1m\]$/i.test(model) ? LONG_CONTEXT_WINDOW : DEFAULT_CONTEXT_WINDOW),
    maxOutputTokens: row?.maxOutputTokens ?? DEFAULT_OUTPUT,
    thinking: Thinking.capabilityFor(model, thinkingTable(table)),
    betas: row?.betas ?? []
  }
}

/**
 * The capabilities of `model`: its row's, the defaults for what the row does not say, and its
 * thinking from `Thinking`'s table (or the row's override).
 *
 * @category Lookup
 */
export const of = (model: string, table: Table = defaultTable): Capabilities => {
  let perModel = known.get(table)
  if (perModel === undefined) known.set(table, perModel = new Map())
  let capabilities = perModel.get(model)
  if (capabilities === undefined) perModel.set(model, capabilities = lookUp(model, table))
  return capabilities
}

/**
 * The `max_tokens` of a request to `model`: `asked` (a cap the user set) up to the model's upper
 * limit, else the model's default.
 *
 * @category Lookup
 */
export const maxTokensFor = (model: string, asked: number | undefined, table: Table = defaultTable): number => {
  const limits = of(model, table).maxOutputTokens
  if (asked === undefined) return limits.default
  return limits.upper === undefined ? asked : Math.min(asked, limits.upper)
}

/**
 * `Thinking`'s table with the thinking of the rows of `table` that set one over it (the same table
 * when none does).
 *
 * @category Lookup
 */
export const thinkingTable = (table: Table): Thinking.Table => {
  const overrides = Object.entries(table).filter(([, e]) => e.thinking !== undefined)
  if (overrides.length === 0) return Thinking.defaultTable
  return { ...Thinking.defaultTable, ...Object.fromEntries(overrides.map(([k, e]) => [k, e.thinking!])) }
}

/** `table` with `overrides` added; an override of a key replaces its row. @category Combinators */
export const merge = (table: Table, overrides: Table): Table => ({ ...table, ...overrides })

const tokens = Schema.Int.pipe(Schema.positive({ message: () => "a whole number of tokens, more than 0" }))

/**
 * A models file: model id parts to what the model can do, every field optional, e.g.
 * `{"my-proxy-model": {"contextWindow": 400000, "maxOutputTokens": {"default": 16000, "upper": 32000},
 * "thinking": {"style": "budget", "efforts": []}, "betas": ["some-beta-2025-01-01"]}}`.
 *
 * @category Schemas
 */
export const ModelsFile = Schema.Record({
  key: Schema.String.pipe(Schema.minLength(1, { message: () => "a model id part, not empty" })),
  value: Schema.Struct({
    contextWindow: Schema.optional(tokens),
    maxOutputTokens: Schema.optional(
      Schema.Struct({ default: tokens, upper: Schema.optional(tokens) }).pipe(
        Schema.filter((o) => o.upper === undefined || o.default <= o.upper, {
          message: () => "the default may not exceed the upper limit"
        })
      )
    ),
    thinking: Schema.optional(Schema.Struct({
      style: Schema.Literal("adaptive", "budget", "none"),
      efforts: Schema.Array(Thinking.Effort),
      defaultEffort: Schema.optional(Thinking.Effort)
    })),
    betas: Schema.optional(Schema.Array(Schema.String))
  })
})

/** A models file that cannot be used. @category Errors */
export class InvalidModels extends Schema.TaggedError<InvalidModels>("@keel/core/InvalidModels")("InvalidModels", {
  message: Schema.String
}) {}

const decodeFile = Schema.decodeUnknownEither(Schema.parseJson(ModelsFile))

/** Parses the text of a models file named `file` (for messages) into a table of its rows. @category Loading */
export const parse = (file: string, text: string): Effect.Effect<Table, InvalidModels> => {
  const decoded = decodeFile(text)
  if (decoded._tag === "Left") {
    return Effect.fail(
      new InvalidModels({
        message: `${file} is not a valid models file: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}\n` +
          "Write model id parts to what the model can do, e.g. " +
          "{\"my-model\": {\"contextWindow\": 400000, \"maxOutputTokens\": {\"default\": 16000, \"upper\": 32000}}}."
      })
    )
  }
  return Effect.succeed(decoded.right)
}

/** `KEEL_MODELS_FILE`: a JSON models file whose rows add to or override the default table. @category Configuration */
export const fileConfig: Config.Config<string | undefined> = Config.string("KEEL_MODELS_FILE").pipe(
  Config.option,
  Config.map(Option.getOrUndefined)
)

/**
 * The table a session runs with: the default table, with the rows of `KEEL_MODELS_FILE` over it
 * when that is set.
 *
 * @category Loading
 */
export const tableConfig: Effect.Effect<Table, InvalidModels | ConfigError, FileSystem.FileSystem> = Effect.flatMap(
  fileConfig,
  (file) =>
    file === undefined || file.trim() === "" ? Effect.succeed(defaultTable) : Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const text = yield* fs.readFileString(file).pipe(
        Effect.mapError((e) => new InvalidModels({ message: `Cannot read the models file ${file}: ${e.message}` }))
      )
      return merge(defaultTable, yield* parse(file, text))
    })
)

/**
 * `CLAUDE_CODE_MAX_OUTPUT_TOKENS` (Claude Code's variable): the `max_tokens` of every request, capped
 * at each model's upper limit; unset, each model's default.
 *
 * @category Configuration
 */
export const maxOutputTokensConfig: Config.Config<number | undefined> = Config.integer("CLAUDE_CODE_MAX_OUTPUT_TOKENS").pipe(
  Config.validate({ message: "must be a whole number of tokens, more than 0", validation: (n) => n > 0 }),
  Config.option,
  Config.map(Option.getOrUndefined)
)
