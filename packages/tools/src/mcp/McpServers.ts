/**
 * The session's MCP servers, a service built by a scoped Layer: every configured server starts in
 * parallel, each within the start-up timeout (`MCP_TIMEOUT`, default 30 s, under `Clock`), and
 * every one is closed with the layer's scope: at the end of the run, on Ctrl+C, or when the program
 * is interrupted (stdio server processes are ended, none survives). A server that fails to start is
 * reported with its status and why, and does not stop the others or the session. The servers' tools
 * are Keel tools (`mcp__<server>__<tool>`) to add to the session's `ToolRegistry`.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import { Actions, type Tool } from "@keel/core"
import * as Config from "effect/Config"
import type { ConfigError } from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { ElicitResult } from "@modelcontextprotocol/sdk/types.js"
import type * as HostLink from "./HostLink.js"
import * as McpConfig from "./McpConfig.js"
import type * as McpConnection from "./McpConnection.js"
import * as McpDefaults from "./McpDefaults.js"
import type * as McpTool from "./McpTool.js"

/** One server as `system`/`init` and diagnostics see it. @category Models */
export interface ServerStatus {
  readonly name: string
  readonly status: McpConnection.Status
  /** Why it is not connected. */
  readonly error?: string | undefined
  /** The server's own name and version. */
  readonly serverInfo?: { readonly name: string; readonly version: string } | undefined
  /** The Keel names of its tools. */
  readonly tools: ReadonlyArray<string>
  /** The process id of a stdio server that started. */
  readonly pid?: number | undefined
}

/** @category Models */
export interface Service {
  /** Every connected server's tools, servers in config order. */
  readonly tools: ReadonlyArray<Tool.Tool<any, never>>
  /** Each configured server and its status now, in config order. */
  readonly status: Effect.Effect<ReadonlyArray<ServerStatus>>
}

/** @category Context */
export class McpServers extends Context.Tag("@keel/tools/McpServers")<McpServers, Service>() {}

/** Options of {@link make}. @category Models */
export interface Options extends McpConnection.Options, McpTool.Options {}

/**
 * Starts these servers in the current scope, all at once, and waits until each has connected or
 * failed. Two tools with one Keel name (names that differ only in characters the API refuses): the
 * first is kept.
 *
 * @category Constructors
 */
export const make = (servers: ReadonlyArray<McpConfig.Server>, options: Options): Effect.Effect<Service, never, Scope.Scope> =>
  servers.length === 0
    ? Effect.succeed(empty)
    // The MCP SDK (and zod, ajv under it) loads only for a session that has servers.
    : Effect.flatMap(Effect.promise(() => import("./McpStartup.js")), (startup) => startup.start(servers, options))

const empty: Service = McpServers.of({ tools: [], status: Effect.succeed([]) })

/** The servers' layer: started when it is built, closed with its scope. @category Layers */
export const layer = (servers: ReadonlyArray<McpConfig.Server>, options: Options): Layer.Layer<McpServers> =>
  Layer.scoped(McpServers, make(servers, options))

/** No MCP servers. @category Layers */
export const layerEmpty: Layer.Layer<McpServers> = Layer.succeed(McpServers, empty)

const positive = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.validate({ message: "must be a positive whole number", validation: (n) => n >= 1 }),
    Config.withDefault(fallback)
  )

/** `MCP_TIMEOUT`: milliseconds a server may take to start (default 30,000). @category Configuration */
export const startupTimeoutConfig: Config.Config<number> = positive("MCP_TIMEOUT", McpDefaults.DEFAULT_STARTUP_TIMEOUT_MS)

/** `MCP_TOOL_TIMEOUT`: milliseconds one tool call may take (default 30 minutes). @category Configuration */
export const toolTimeoutConfig: Config.Config<number> = positive("MCP_TOOL_TIMEOUT", McpDefaults.DEFAULT_TOOL_TIMEOUT_MS)

/** `MAX_MCP_OUTPUT_TOKENS`: the cap of one tool result (default 25,000 tokens). @category Configuration */
export const maxOutputTokensConfig: Config.Config<number> = positive("MAX_MCP_OUTPUT_TOKENS", McpDefaults.DEFAULT_MAX_OUTPUT_TOKENS)

/**
 * The servers of `.mcp.json` and `--mcp-config` (see `McpConfig.load`) and those of the host, with the timeouts and the
 * output cap from `MCP_TIMEOUT`, `MCP_TOOL_TIMEOUT` and `MAX_MCP_OUTPUT_TOKENS`; with
 * `elicitations`, their questions to the user become pending actions (else servers cannot ask).
 *
 * @category Layers
 */
export const layerConfig = (
  options: McpConfig.LoadOptions & {
    /** Servers may ask the user through pending actions (someone answers them: see `Actions`). */
    readonly elicitations?: boolean | undefined
    /**
     * Servers in the host's process (an Agent SDK host's `initialize`), after the configured ones
     * (one with a configured server's name replaces it), and the link that reaches them.
     */
    readonly host?: { readonly servers: ReadonlyArray<McpConfig.Server>; readonly link: HostLink.HostLink } | undefined
  }
): Layer.Layer<McpServers, McpConfig.InvalidMcpConfig | ConfigError, FileSystem.FileSystem | Path.Path | Actions.Actions> =>
  Layer.scoped(
    McpServers,
    Effect.gen(function*() {
      const servers = McpConfig.merge([yield* McpConfig.load(options), options.host?.servers ?? []])
      const timeout = yield* toolTimeoutConfig
      return yield* make(servers, {
        cwd: options.cwd,
        env: options.env,
        startupTimeout: yield* startupTimeoutConfig,
        timeout,
        maxOutputTokens: yield* maxOutputTokensConfig,
        elicit: options.elicitations === true ? elicitThrough(yield* Actions.Actions) : undefined,
        host: options.host?.link,
        hostTimeoutMs: timeout
      })
    })
  )

/**
 * Elicitations as pending actions (`Actions`): a server's question waits for `respond` like a
 * permission ask, and is withdrawn (cancelled) when the server or the turn gives up.
 *
 * @category Constructors
 */
export const elicitThrough = (actions: Actions.Actions["Type"]) =>
(request: McpConnection.Elicitation, signal: AbortSignal): Promise<ElicitResult> =>
  Effect.runPromise(
    Effect.map(
      actions.ask({ kind: "elicitation", ...request }),
      (answer): ElicitResult => ({ action: answer.action, ...(answer.content !== undefined ? { content: answer.content as ElicitResult["content"] } : {}) })
    ),
    { signal }
  )
