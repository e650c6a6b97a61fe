/**
 * The Claude Agent SDK's `initialize` control request, as `keel` answers it over stream-json: the
 * session's slash commands, subagent types, output style, models and account. What a host can ask
 * in it that Keel does not do yet (hooks registered by callback, in-process SDK MCP servers, a JSON
 * schema for the output other than `--json-schema`'s, custom agents, a system prompt of its own) is
 * refused with an error response naming it: never ignored, so a host's hook that was meant to block
 * a call cannot be silently skipped.
 *
 * @since 0.1.0
 */
import type { Commands, SdkMessage } from "@keel/core"
import * as JsonSchemaOption from "./output/JsonSchemaOption.js"

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const nonEmpty = (value: unknown): boolean =>
  value !== undefined && value !== null &&
  (Array.isArray(value) ? value.length > 0 : isRecord(value) ? Object.keys(value).length > 0 : value !== "")

/** The SDK's default system prompt option (`[""]`): Keel's own prompt. */
const isDefaultSystemPrompt = (value: unknown): boolean =>
  value === undefined || (Array.isArray(value) && value.every((part) => part === ""))

/**
 * The `initialize` options Keel does not honour yet, by their SDK names (empty: all is honoured).
 * `jsonSchema` is honoured when it is the schema of the run's `--json-schema` (as the SDK sends it).
 *
 * @category Checking
 */
export const unsupported = (
  request: Record<string, unknown>,
  run: { readonly jsonSchema?: string | undefined } = {}
): ReadonlyArray<string> => [
  ...(nonEmpty(request.hooks) ? ["hooks"] : []),
  ...(nonEmpty(request.sdkMcpServers) ? ["sdkMcpServers"] : []),
  ...JsonSchemaOption.initializeMismatch(request.jsonSchema, run.jsonSchema),
  ...(nonEmpty(request.agents) ? ["agents"] : []),
  ...(!isDefaultSystemPrompt(request.systemPrompt) ? ["systemPrompt"] : []),
  ...(nonEmpty(request.appendSystemPrompt) ? ["appendSystemPrompt"] : [])
]

/** The subagent types the `Task` tool offers (see `@keel/tools` `Subagents`). */
const AGENTS = [
  { name: "general-purpose", description: "A general agent for multi-step tasks and searches" },
  { name: "Explore", description: "A fast, read-only agent for finding files and code" }
]

/** The success response to `initialize` (the SDK's `SDKControlInitializeResponse`). @category Encoding */
export const response = (init: SdkMessage.SystemInit, commands: ReadonlyArray<Commands.Command>): Record<string, unknown> => ({
  commands: commands.map((c) => ({ name: c.name, description: c.description, argumentHint: c.argumentHint ?? "" })),
  agents: AGENTS,
  output_style: init.output_style,
  available_output_styles: [init.output_style],
  models: [{ value: init.model, displayName: init.model, description: "The session's model" }],
  account: { apiKeySource: init.apiKeySource, apiProvider: "firstParty" },
  pid: process.pid
})
