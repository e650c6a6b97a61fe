/**
 * Structured output for a run: `--json-schema <schema>` (the Claude Agent SDK passes its
 * `outputFormat: {type: "json_schema", schema}` this way, and again as `jsonSchema` in `initialize`),
 * or `query()`'s `outputFormat`. The schema goes into the kernel twice: the `StructuredOutput` tool
 * in the run's tool registry, and the session's `structuredOutput` option (with the attempt budget
 * of `KEEL_MAX_STRUCTURED_OUTPUT_RETRIES`). A schema that cannot be honoured stops the run with
 * `InvalidOutputSchema` (exit 2), before any turn.
 *
 * @since 0.1.0
 */
import { OutputSchema, StructuredOutput, StructuredOutputTool, type ToolRegistry } from "@keel/core"
import type { ConfigError } from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { isDeepStrictEqual } from "node:util"

/** Where a run's schema comes from, as errors name it. @category Constants */
export const SOURCE = "--json-schema"

/**
 * The registry below with the `StructuredOutput` tool for `jsonSchema` (JSON text) after its tools.
 *
 * @category Layers
 */
export const registryLayer = (
  jsonSchema: string
): Layer.Layer<ToolRegistry.ToolRegistry, OutputSchema.InvalidOutputSchema, ToolRegistry.ToolRegistry> =>
  Layer.unwrapEffect(Effect.map(OutputSchema.parse(jsonSchema, SOURCE), StructuredOutputTool.layer))

/**
 * The session's `structuredOutput` option for `jsonSchema` (none without one): the compiled schema
 * and the attempt budget (`KEEL_MAX_STRUCTURED_OUTPUT_RETRIES`, default 5).
 *
 * @category Constructors
 */
export const sessionOption = (
  jsonSchema: string | undefined
): Effect.Effect<StructuredOutput.Options | undefined, OutputSchema.InvalidOutputSchema | ConfigError> =>
  jsonSchema === undefined
    ? Effect.succeed(undefined)
    : Effect.all({ schema: OutputSchema.parse(jsonSchema, SOURCE), maxAttempts: StructuredOutput.maxAttemptsConfig })

/**
 * Why `initialize`'s `jsonSchema` cannot be honoured (empty when it can): the session was opened with
 * the schema of `--json-schema` (the SDK sends both, the same), so a schema only in `initialize`, or
 * a different one, is refused rather than silently not applied.
 *
 * @category Checking
 */
export const initializeMismatch = (requested: unknown, jsonSchema: string | undefined): ReadonlyArray<string> => {
  if (requested === undefined || requested === null) return []
  if (jsonSchema === undefined) {
    return [
      "jsonSchema (outputFormat) without --json-schema (Keel takes the output schema from --json-schema, " +
      "which the Agent SDK passes with it)"
    ]
  }
  let flag: unknown
  try {
    flag = JSON.parse(jsonSchema)
  } catch {
    flag = undefined
  }
  return isDeepStrictEqual(requested, flag) ? [] : ["jsonSchema (outputFormat) other than --json-schema's"]
}

/**
 * `query()`'s `outputFormat`, checked (its shape, then its schema, compiled): the JSON text the run
 * takes as its `jsonSchema`, or what is wrong (named `outputFormat`).
 *
 * @category Parsing
 */
export const fromOutputFormat = (outputFormat: unknown): Effect.Effect<string | undefined, string> => {
  if (outputFormat === undefined) return Effect.succeed(undefined)
  const format = outputFormat as { readonly type?: unknown; readonly schema?: unknown } | null
  if (typeof format !== "object" || format === null || format.type !== "json_schema") {
    return Effect.fail(`outputFormat must be { type: "json_schema", schema: <a JSON Schema object> }`)
  }
  return OutputSchema.make(format.schema, "outputFormat.schema").pipe(
    Effect.mapBoth({ onFailure: (error) => error.message, onSuccess: () => JSON.stringify(format.schema) })
  )
}
