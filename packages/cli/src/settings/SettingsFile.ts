/**
 * One settings file as Claude Code writes it (`settings.json`): the keys Keel reads, each with the
 * message its invalid value gets (`env.FOO must be a string`). Every other key is kept as it is and
 * ignored, never rejected.
 *
 * @since 0.1.0
 */
import { Permissions } from "@keel/core"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { HooksSetting } from "../hook/HooksSetting.js"

/** `schema` whose own failure reads `message` (a failure inside it keeps its own message). */
const must = <S extends Schema.Schema.Any>(schema: S, message: string): S => schema.annotations({ message: () => message }) as S

/** `schema` whose every failure reads `message` (for a union of literals, whose members would each speak). */
const mustBe = <S extends Schema.Schema.Any>(schema: S, message: string): S =>
  schema.annotations({ message: () => ({ message, override: true }) }) as S

const text = must(Schema.String, "must be a string")
const nonBlank = Schema.String.pipe(Schema.filter((s) => s.trim().length > 0))
const texts = must(Schema.Array(text), "must be an array of strings")
const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/** The `permissions` key: rules, the default mode and more folders (unknown keys kept). @category Schemas */
export const PermissionsSettings = must(
  Schema.Struct({
    allow: optional(texts),
    deny: optional(texts),
    ask: optional(texts),
    defaultMode: optional(mustBe(Schema.Literal(...Permissions.MODES), `must be one of ${Permissions.MODES.join(", ")}`)),
    additionalDirectories: optional(texts)
  }),
  "must be an object"
)

/**
 * The keys of a settings file Keel reads:
 * - `permissions`: allow / deny / ask rules, `defaultMode`, `additionalDirectories`;
 * - `env`: variables set in the environment at start (tools' processes and the model client see them);
 * - `model`: the default model (`--model` and `ANTHROPIC_MODEL` come first);
 * - `additionalDirectories`: more folders the file tools may use (as under `permissions`);
 * - `apiKeyHelper`: a shell command whose output is the API key;
 * - `hooks`: command hooks by event (each file's run, least local first; see `hook/HooksLayer`).
 *
 * @category Schemas
 */
export const SettingsFile = must(
  Schema.Struct({
    permissions: optional(PermissionsSettings),
    env: optional(must(Schema.Record({ key: Schema.String, value: text }), "must be an object of strings")),
    model: optional(mustBe(nonBlank, "must be a model name (a non-empty string)")),
    additionalDirectories: optional(texts),
    apiKeyHelper: optional(mustBe(nonBlank, "must be a shell command (a non-empty string)")),
    hooks: optional(must(HooksSetting, "must be an object of event names, each an array of matchers"))
  }),
  "must be an object"
)

/** A settings file's content: the keys Keel reads, and every other key as it was. @category Models */
export type SettingsFile = typeof SettingsFile.Type & { readonly [key: string]: unknown }

/** What is wrong with one value: where (`env.FOO`, `permissions.allow[0]`; empty for the whole file) and what. @category Models */
export interface Problem {
  readonly path: string
  readonly message: string
}

const pathOf = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (out, key) => typeof key === "number" ? `${out}[${key}]` : out === "" ? String(key) : `${out}.${String(key)}`,
    ""
  )

const decode = Schema.decodeUnknownEither(SettingsFile, { onExcessProperty: "preserve", errors: "all" })

/**
 * Validates parsed JSON as a settings file: the file's content (unknown keys kept), or its problems,
 * one per key path, in the file's order.
 *
 * @category Decoding
 */
export const validate = (json: unknown): Either.Either<SettingsFile, ReadonlyArray<Problem>> =>
  Either.mapLeft(decode(json), (error) => {
    const seen = new Set<string>()
    const problems: Array<Problem> = []
    for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
      const path = pathOf(issue.path)
      if (seen.has(path)) continue
      seen.add(path)
      problems.push({ path, message: issue.message })
    }
    return problems
  })
