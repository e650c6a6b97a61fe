/**
 * An MCP server's tool as a Keel tool named `mcp__<server>__<tool>` (characters the API refuses in
 * tool names become `_`), as Claude Code names them, so permission rules `mcp__server` and
 * `mcp__server__tool` apply. The MCP tool's `inputSchema` goes to the API as is and the input to
 * the server as the model wrote it (the server validates it). It is read-only, and may run beside
 * other read-only calls, when the server says so (`annotations.readOnlyHint`); permissions still ask
 * for every MCP tool that no rule allows, as Claude Code does (the hint is the server's claim). Each call is bounded by a timeout (under `Clock`),
 * interrupting a call cancels it on the server, and a server that is gone, a transport error or an
 * `isError` result is a `ToolError` naming the server.
 *
 * @since 0.1.0
 */
import { type ModelRequest, Tool } from "@keel/core"
import { ErrorCode, McpError, type Tool as McpToolInfo } from "@modelcontextprotocol/sdk/types.js"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as McpConnection from "./McpConnection.js"
import { DEFAULT_TOOL_TIMEOUT_MS } from "./McpDefaults.js"
import * as McpResult from "./McpResult.js"

/** The default timeout of one MCP tool call (see `McpDefaults`). @category Constants */
export { DEFAULT_TOOL_TIMEOUT_MS }

/** Longest tool description sent to the API; longer ones are cut (every request carries them). @category Constants */
export const MAX_DESCRIPTION_LENGTH = 2048

/** `name` with every character the API refuses in tool names replaced by `_`. @category Naming */
export const normalizeName = (name: string): string => name.replace(/[^a-zA-Z0-9_-]/g, "_")

/** The Keel name of a server's tool: `mcp__<server>__<tool>`. @category Naming */
export const toolName = (server: string, tool: string): string => `mcp__${normalizeName(server)}__${normalizeName(tool)}`

/** The model's input: any JSON object (the server validates it against its schema). @category Schemas */
export const Input = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** Options of {@link make}. @category Models */
export interface Options {
  /** Most time one call may take (default {@link DEFAULT_TOOL_TIMEOUT_MS}; a server's `timeout` wins). */
  readonly timeout?: Duration.DurationInput | undefined
  /** The output cap in tokens (default `McpResult.DEFAULT_MAX_OUTPUT_TOKENS`). */
  readonly maxOutputTokens?: number | undefined
}

const description = (tool: McpToolInfo): string => {
  const text = tool.description ?? tool.annotations?.title ?? tool.title ?? ""
  return text.length > MAX_DESCRIPTION_LENGTH ? `${text.slice(0, MAX_DESCRIPTION_LENGTH)}… [description truncated]` : text
}

const reason = (e: unknown): string => {
  if (e instanceof McpError) return e.message.replace(/^MCP error -?\d+: /, "")
  if (e instanceof Error) {
    const cause = (e as { cause?: unknown }).cause
    const code = (cause as { code?: unknown } | undefined)?.code
    return typeof code === "string" ? `${e.message} (${code})` : e.message
  }
  return String(e)
}

/**
 * The Keel tool for `tool` of the server behind `connection`.
 *
 * @category Constructors
 */
export const make = (
  connection: McpConnection.Connection,
  tool: McpToolInfo,
  options: Options = {}
): Tool.Tool<typeof Input.Type> => {
  const server = connection.server.name
  const timeout = Duration.decode(connection.server.config.timeout ?? options.timeout ?? DEFAULT_TOOL_TIMEOUT_MS)
  const readOnly = tool.annotations?.readOnlyHint === true
  const notConnected = (error: string | undefined) =>
    Tool.fail(`MCP server ${server} is not connected: ${error ?? "it is not running"}`)
  const timedOut = () =>
    new Tool.ToolError({
      message: `MCP server ${server}: ${tool.name} did not answer within ${Duration.format(timeout)}, and was cancelled ` +
        "(MCP_TOOL_TIMEOUT, or the server's \"timeout\", sets the limit)"
    })
  return Tool.make({
    // Bounded by its own timeout (MCP_TOOL_TIMEOUT or the server's "timeout"), which cancels the request.
    timeoutMs: Infinity,
    name: toolName(server, tool.name),
    description: description(tool),
    input: Input,
    inputSchema: tool.inputSchema as ModelRequest.ToolDefinition["input_schema"],
    isReadOnly: readOnly,
    // Run again after a crash cut it short only when the server says it reads, or that a repeat has no further effect.
    isIdempotent: readOnly || tool.annotations?.idempotentHint === true,
    call: (input) =>
      Effect.gen(function*() {
        const before = yield* connection.state
        if (before.status !== "connected") return yield* notConnected(before.error)
        const result = yield* Effect.tryPromise({
          try: (signal) => connection.callTool(tool.name, input, { signal, timeoutMs: Duration.toMillis(timeout) }),
          catch: (e) => e
        }).pipe(
          Effect.timeoutFail({ duration: timeout, onTimeout: timedOut }),
          Effect.catchAll((e) =>
            e instanceof Tool.ToolError ? Effect.fail(e) : Effect.flatMap(connection.state, (after) => {
              if (after.status !== "connected") return notConnected(after.error)
              // The SDK's own timer, set to the same limit, may fire first; it cancels the call too.
              if (e instanceof McpError && e.code === ErrorCode.RequestTimeout) return Effect.fail(timedOut())
              return Tool.fail(`MCP server ${server}: calling ${tool.name} failed: ${reason(e)}`)
            })
          )
        )
        return yield* McpResult.toOutput(result, { server, tool: tool.name, maxTokens: options.maxOutputTokens })
      })
  })
}
