/**
 * Starting a session's MCP servers: every one connected at once, and their tools made Keel tools.
 * The module `McpServers` loads (with the MCP SDK under it) only for a session that has servers,
 * so a run without any does not pay for loading the SDK.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type * as McpConfig from "./McpConfig.js"
import * as McpConnection from "./McpConnection.js"
import type * as McpServers from "./McpServers.js"
import * as McpTool from "./McpTool.js"

/**
 * Starts these servers in the current scope, all at once, and waits until each has connected or
 * failed. Two tools with one Keel name (names that differ only in characters the API refuses): the
 * first is kept.
 *
 * @category Constructors
 */
export const start = (
  servers: ReadonlyArray<McpConfig.Server>,
  options: McpServers.Options
): Effect.Effect<McpServers.Service, never, Scope.Scope> =>
  Effect.gen(function*() {
    const connections = yield* Effect.forEach(servers, (server) => McpConnection.connect(server, options), {
      concurrency: "unbounded"
    })
    const taken = new Set<string>()
    const toolsOf = connections.map((connection) =>
      connection.tools.flatMap((info) => {
        const tool = McpTool.make(connection, info, options)
        if (taken.has(tool.name)) return []
        taken.add(tool.name)
        return [tool]
      })
    )
    return {
      tools: toolsOf.flat(),
      status: Effect.forEach(connections, (connection, i) =>
        Effect.map(connection.state, (state): McpServers.ServerStatus => ({
          name: connection.server.name,
          status: state.status,
          error: state.error,
          serverInfo: connection.serverInfo,
          tools: toolsOf[i]!.map((t) => t.name),
          pid: connection.pid
        })))
    }
  })
