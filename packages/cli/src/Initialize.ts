/**
 * The Claude Agent SDK's `initialize` control request, as `keel` answers it over stream-json: the
 * session's slash commands, subagent types, output style, models and account. Its in-process SDK MCP
 * servers are connected (see `host/SdkMcpHost`), its `agents` are the session's and its system
 * prompt options replace or extend Keel's, when it is the first input line (read before the session
 * is built, see `host/HostStartup`); a later `initialize` cannot change them, and is refused. Its
 * `jsonSchema` is honoured when it is the run's `--json-schema` (the SDK sends both); its hooks,
 * registered by callback id, are taken up by `hook/HostHooks`. What a host can ask in it that Keel
 * does not do (servers' settings beyond `timeout`, options that reshape the prompt) is refused with
 * an error response naming it: never ignored.
 *
 * @since 0.1.0
 */
import type { Commands, SdkMessage } from "@keel/core"
import * as SdkMcpHost from "./host/SdkMcpHost.js"
import type { Agents } from "@keel/tools"
import * as JsonSchemaOption from "./output/JsonSchemaOption.js"

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const nonEmpty = (value: unknown): boolean =>
  value !== undefined && value !== null &&
  (Array.isArray(value) ? value.length > 0 : isRecord(value) ? Object.keys(value).length > 0 : value !== "")

/** The SDK's default system prompt option (`[""]`): Keel's own prompt. */
const isDefaultSystemPrompt = (value: unknown): boolean =>
  value === undefined || (Array.isArray(value) && value.every((part) => part === ""))

/**
 * The `initialize` options Keel does not honour, by their SDK names (empty: all is honoured).
 * `first`: whether this is the `initialize` read before the session opened (the first input
 * line): only that one can still shape what the session is built from (its system prompt).
 * `connected` names the host's in-process MCP servers the session connected (those named by an
 * `initialize` on the first line of input); any other it names is refused.
 * `jsonSchema` is honoured when it is the schema of the run's `--json-schema` (as the SDK sends it).
 *
 * @category Checking
 */
export const unsupported = (
  request: Record<string, unknown>,
  options: {
    readonly first: boolean
    readonly connected?: ReadonlyArray<string> | undefined
    /** Whether this request's `agents` are the session's (it was read before the session was built). */
    readonly agentsApplied?: boolean | undefined
    /** The run's `--json-schema`. */
    readonly jsonSchema?: string | undefined
  }
): ReadonlyArray<string> => {
  const { first } = options
  const connected = options.connected ?? []
  return [
  ...SdkMcpHost.serversOf(request).filter((s) => !connected.includes(s.name)).map((s) =>
    `sdkMcpServers (${s.name}: Keel connects them only from an initialize on the first line of input, not in a session resumed with -p)`
  ),
  ...SdkMcpHost.unsupported(request),
  ...JsonSchemaOption.initializeMismatch(request.jsonSchema, options.jsonSchema),
  ...(nonEmpty(request.agents) && options.agentsApplied !== true ? ["agents (only in the first stdin line's initialize)"] : []),
  ...(!first && !isDefaultSystemPrompt(request.systemPrompt) ? ["systemPrompt (only in the first line's initialize)"] : []),
  ...(!first && nonEmpty(request.appendSystemPrompt) ? ["appendSystemPrompt (only in the first line's initialize)"] : []),
  ...(first && promptOptions(request) === undefined ? ["systemPrompt (not a string or an array of strings)"] : []),
    ...(Object.keys(request).filter((key) => SHAPING.has(key) && nonEmpty(request[key])))
  ]
}

/**
 * `initialize` options that would change what the model is told or how the session runs, which
 * Keel does not do: refused by name rather than ignored.
 */
const SHAPING = new Set([
  "planModeInstructions",
  "systemPromptSnapshot",
  "appendSubagentSystemPrompt",
  "toolAliases",
  "codeRunningMcpTools",
  "excludeDynamicSections",
  "skills"
])

/** The system prompt options of a first-line `initialize`, as Keel's flags take them. @category Models */
export interface PromptOptions {
  /** Replaces Keel's prompt (the SDK's `systemPrompt` string, or its parts joined); Keel's own when absent. */
  readonly systemPrompt?: string | undefined
  /** Added after the prompt (the SDK's `appendSystemPrompt`, e.g. a `claude_code` preset's `append`). */
  readonly appendSystemPrompt?: string | undefined
}

/**
 * The system prompt options `request` gives, or `undefined` when they are not of the SDK's shapes
 * (`systemPrompt`: a string array, the SDK's form for a string; `appendSystemPrompt`: a string).
 * The SDK's default `[""]` (and none) keeps Keel's own prompt.
 *
 * @category Decoding
 */
export const promptOptions = (request: Record<string, unknown>): PromptOptions | undefined => {
  const { appendSystemPrompt, systemPrompt } = request
  if (appendSystemPrompt !== undefined && appendSystemPrompt !== null && typeof appendSystemPrompt !== "string") return undefined
  const parts = typeof systemPrompt === "string" ? [systemPrompt] : systemPrompt
  if (parts !== undefined && parts !== null && !(Array.isArray(parts) && parts.every((p) => typeof p === "string"))) {
    return undefined
  }
  const text = (parts ?? []).filter((p: string) => p !== "").join("\n\n")
  return {
    ...(text !== "" ? { systemPrompt: text } : {}),
    ...(typeof appendSystemPrompt === "string" && appendSystemPrompt !== "" ? { appendSystemPrompt } : {})
  }
}

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
  // Host hooks' `onFailure` is honoured (see `hook/HostHooks`).
  hook_on_failure_supported: true,
  pid: process.pid
})
