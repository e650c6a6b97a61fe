/**
 * The Claude Agent SDK's `initialize` control request, as `keel` answers it over stream-json: the
 * session's slash commands, subagent types, output style, models and account. What a host can ask
 * in it that Keel does not do yet (hooks registered by callback, in-process SDK MCP servers, a JSON
 * schema for the output, a system prompt of its own) is refused with an error response naming it:
 * never ignored, so a host's hook that was meant to block a call cannot be silently skipped. Its
 * `agents` are honoured when it is the first line (read before the session is built, see
 * `host/InitializeAhead`); a later `initialize` cannot change the session's agents, and is refused.
 *
 * @since 0.1.0
 */
import type { Commands, SdkMessage } from "@keel/core"
import type { Agents } from "@keel/tools"

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const nonEmpty = (value: unknown): boolean =>
  value !== undefined && value !== null &&
  (Array.isArray(value) ? value.length > 0 : isRecord(value) ? Object.keys(value).length > 0 : value !== "")

/** The SDK's default system prompt option (`[""]`): Keel's own prompt. */
const isDefaultSystemPrompt = (value: unknown): boolean =>
  value === undefined || (Array.isArray(value) && value.every((part) => part === ""))

/** The `initialize` options Keel does not honour yet, by their SDK names (empty: all is honoured). @category Checking */
export const unsupported = (
  request: Record<string, unknown>,
  /** Whether this request's `agents` are the session's (it was read before the session was built). */
  options: { readonly agentsApplied: boolean } = { agentsApplied: false }
): ReadonlyArray<string> => [
  ...(nonEmpty(request.hooks) ? ["hooks"] : []),
  ...(nonEmpty(request.sdkMcpServers) ? ["sdkMcpServers"] : []),
  ...(nonEmpty(request.jsonSchema) ? ["jsonSchema (outputFormat)"] : []),
  ...(nonEmpty(request.agents) && !options.agentsApplied ? ["agents (only in the first stdin line's initialize)"] : []),
  ...(!isDefaultSystemPrompt(request.systemPrompt) ? ["systemPrompt"] : []),
  ...(nonEmpty(request.appendSystemPrompt) ? ["appendSystemPrompt"] : [])
]

/**
 * The success response to `initialize` (the SDK's `SDKControlInitializeResponse`), listing the
 * agent types the `Task` tool offers (built-in and custom, see `@keel/tools` `Agents`).
 *
 * @category Encoding
 */
export const response = (
  init: SdkMessage.SystemInit,
  commands: ReadonlyArray<Commands.Command>,
  agents: ReadonlyArray<Agents.Info>
): Record<string, unknown> => ({
  commands: commands.map((c) => ({ name: c.name, description: c.description, argumentHint: c.argumentHint ?? "" })),
  agents,
  output_style: init.output_style,
  available_output_styles: [init.output_style],
  models: [{ value: init.model, displayName: init.model, description: "The session's model" }],
  account: { apiKeySource: init.apiKeySource, apiProvider: "firstParty" },
  pid: process.pid
})
