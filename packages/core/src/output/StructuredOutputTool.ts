/**
 * The `StructuredOutput` tool, as Claude Code offers it under `--json-schema`: its `input_schema` is
 * the output schema itself, so the model gives its final answer as the input of one call. A call
 * whose input matches gets a short success result; one that does not gets an error result listing
 * every mismatch (`/answer: must be number`), so the model can call again with a fixed input. The
 * turn loop decides what the calls mean for the turn (see `StructuredOutput`).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { isDeepStrictEqual } from "node:util"
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { ToolDefinition } from "../model/ModelRequest.js"
import * as Tool from "../tool/Tool.js"
import * as ToolRegistry from "../tool/ToolRegistry.js"
import * as OutputSchema from "./OutputSchema.js"

/** The tool's name (Claude Code's: hosts and models know it by it). @category Constants */
export const NAME = "StructuredOutput"

/** What the model is told the tool is for. @category Constants */
export const DESCRIPTION = "Give your final answer through this tool: its input is the answer, in the structured " +
  "format the user asked for. Call it once, when your work is done, as the last thing you do; nothing after it is read."

/** The result of a call whose input matches the schema. @category Constants */
export const ACCEPTED = "Your structured output was accepted."

/** The error of a call whose input does not match: what is wrong, and what to do. @category Constructors */
export const mismatch = (problems: ReadonlyArray<string>): string =>
  `The input does not match the required schema: ${OutputSchema.describe(problems)}. ` +
  `Call ${NAME} again with input that matches it.`

/**
 * The tool for `schema`: read-only (no permission ask), safe to run beside other calls.
 *
 * @category Constructors
 */
export const make = (schema: OutputSchema.OutputSchema): Tool.Tool<unknown> =>
  Tool.make({
    name: NAME,
    description: DESCRIPTION,
    input: Schema.Unknown,
    inputSchema: schema.schema as ToolDefinition["input_schema"],
    isReadOnly: true,
    call: (input) => {
      const problems = schema.validate(input)
      return problems.length === 0 ? Effect.succeed(ACCEPTED) : Tool.fail(mismatch(problems))
    }
  })

/**
 * The registry below with the tool for `schema` after its tools: what a session with a
 * `structuredOutput` option needs (its `ToolRuntime` must be built over this registry too).
 *
 * @category Layers
 */
export const layer = (
  schema: OutputSchema.OutputSchema
): Layer.Layer<ToolRegistry.ToolRegistry, never, ToolRegistry.ToolRegistry> =>
  ToolRegistry.layerAppend(Effect.succeed([make(schema)]))

/**
 * Dies (a defect: the layers do not match the session's options) unless `registry` holds the tool
 * for `schema`, so a session never asks for structured output the model cannot give.
 *
 * @category Checking
 */
export const registered = (registry: ToolRegistry.Service, schema: OutputSchema.OutputSchema): Effect.Effect<void> => {
  const tool = registry.get(NAME)
  return tool !== undefined && isDeepStrictEqual(tool.inputSchema, schema.schema)
    ? Effect.void
    : Effect.dieMessage(
      `structuredOutput needs the ${NAME} tool for its schema in the ToolRegistry: ` +
        "provide StructuredOutputTool.layer(schema)"
    )
}
