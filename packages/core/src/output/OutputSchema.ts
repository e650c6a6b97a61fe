/**
 * The JSON Schema a session's final answer must match (`--json-schema`, `query()`'s `outputFormat`):
 * read from JSON text or taken as a value, checked and compiled once (`JsonSchemaCompiler`, loaded
 * on demand), strict as Claude Code's: an unknown keyword or format, a `$ref` that resolves nowhere,
 * a draft Keel has no validator for, or a schema that does not describe an object (the answer is a
 * tool call's input, which the API requires to be an object) is refused with an
 * {@link InvalidOutputSchema} saying which and what to give instead. Never half-checked.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

const EXAMPLE = `{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`

/**
 * A schema that cannot be used: not JSON (`NotJson`), not an object (`NotObject`), not an object
 * schema (`NotObjectType`), of a `$schema` draft Keel has no validator for (`UnsupportedDraft`), or
 * not a valid JSON Schema (`NotJsonSchema`: the validator's own words in `detail`). `source` names
 * where it came from (`--json-schema`, `outputFormat.schema`).
 *
 * @category Errors
 */
export class InvalidOutputSchema extends Schema.TaggedError<InvalidOutputSchema>("@keel/core/InvalidOutputSchema")(
  "InvalidOutputSchema",
  {
    source: Schema.String,
    reason: Schema.Literal("NotJson", "NotObject", "NotObjectType", "UnsupportedDraft", "NotJsonSchema"),
    detail: Schema.String
  }
) {
  /** What is wrong and what to give instead, in one line. */
  override get message(): string {
    switch (this.reason) {
      case "NotJson":
        return `${this.source} is not valid JSON (${this.detail}); give a JSON Schema object, e.g. ${EXAMPLE}`
      case "NotObject":
        return `${this.source} must be a JSON Schema object, got ${this.detail}; e.g. ${EXAMPLE}`
      case "NotObjectType":
        return `${this.source} must describe an object ("type": "object" at its top, got ${this.detail}): ` +
          `the answer is the input of a tool call, which is always an object; wrap a single value in a property`
      case "UnsupportedDraft":
        return `${this.source} names $schema ${this.detail}, which Keel has no validator for; ` +
          `use draft-07 (the default), 2019-09 or 2020-12`
      case "NotJsonSchema":
        return `${this.source} is not a valid JSON Schema: ${this.detail}`
    }
  }
}

/** A checked, compiled output schema. @category Models */
export interface OutputSchema {
  /** The schema as given: the `input_schema` of the `StructuredOutput` tool. */
  readonly schema: Readonly<Record<string, unknown>>
  /** What is wrong with `value` (`/path: problem`, `root: problem`), each problem once; empty when it matches. */
  readonly validate: (value: unknown) => ReadonlyArray<string>
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const describeType = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "an array" : typeof value === "string" ? "a string" : typeof value

/**
 * Checks and compiles `schema` (a value already parsed), refusing what cannot be honoured.
 *
 * @category Constructors
 */
export const make = (schema: unknown, source: string): Effect.Effect<OutputSchema, InvalidOutputSchema> =>
  Effect.gen(function*() {
    const invalid = (reason: InvalidOutputSchema["reason"], detail: string) =>
      Effect.fail(new InvalidOutputSchema({ source, reason, detail }))
    if (!isRecord(schema)) return yield* invalid("NotObject", describeType(schema))
    if (schema.type !== "object") {
      return yield* invalid("NotObjectType", schema.type === undefined ? "no \"type\"" : JSON.stringify(schema.type))
    }
    const compiler = yield* Effect.promise(() => import("./JsonSchemaCompiler.js"))
    const draft = schema.$schema
    const uri = typeof draft === "string" && draft.endsWith("#") ? draft.slice(0, -1) : draft
    if (uri !== undefined && (typeof uri !== "string" || !compiler.DRAFTS.includes(uri))) {
      return yield* invalid("UnsupportedDraft", JSON.stringify(draft))
    }
    const compiled = compiler.compile(schema, uri)
    if (compiled._tag === "Invalid") return yield* invalid("NotJsonSchema", compiled.detail)
    return { schema, validate: compiled.check }
  })

/**
 * Reads `text` as JSON, then as {@link make} does.
 *
 * @category Constructors
 */
export const parse = (text: string, source: string): Effect.Effect<OutputSchema, InvalidOutputSchema> =>
  Effect.flatMap(
    Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: (error) => {
        const detail = error instanceof Error ? error.message : String(error)
        return new InvalidOutputSchema({ source, reason: "NotJson", detail })
      }
    }),
    (value) => make(value, source)
  )

/**
 * The problems `validate` found, as one line: `root: must have required property 'answer', /n: must be number`.
 *
 * @category Rendering
 */
export const describe = (problems: ReadonlyArray<string>): string => problems.join(", ")
