/**
 * The Claude Agent SDK's `initialize` control request, as `keel` answers it over stream-json: the
 * session's slash commands, subagent types, output style, models and account. What a host can ask
 * in it that Keel does not do yet (in-process SDK MCP servers, a JSON
 * schema for the output, custom agents, a system prompt of its own) is refused with an error
 * response naming it: never ignored. Hooks registered by callback are taken up by `hook/HostHooks`.
 *
 * @since 0.1.0
 */
import type { Commands, SdkMessage } from "@keel/core"

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const nonEmpty = (value: unknown): boolean =>
  value !== undefined && value !== null &&
  (Array.isArray(value) ? value.length > 0 : isRecord(value) ? Object.keys(value).length > 0 : value !== "")

/** The SDK's default system prompt option (`[""]`): Keel's own prompt. */
const isDefaultSystemPrompt = (value: unknown): boolean =>
  value === undefined || (Array.isArray(value) && value.every((part) => part === ""))

/** The `initialize` options Keel does not honour yet, by their SDK names (empty: all is honoured). @category Checking */
export const unsupported = (request: Record<string, unknown>): ReadonlyArray<string> => [
  ...(nonEmpty(request.sdkMcpServers) ? ["sdkMcpServers"] : []),
  ...(nonEmpty(request.jsonSchema) ? ["jsonSchema (outputFormat)"] : []),
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
  // Host hooks' `onFailure` is honoured (see `hook/HostHooks`).
  hook_on_failure_supported: true,
  pid: process.pid
})
