/**
 * `/mcp`: the run's MCP servers (`.mcp.json`, `--mcp-config`, the settings), each with its status
 * (connected, with the server's name and version; failed, with why; needs authorization) and the
 * tools it gives the model, as the model sees their names. The REPL answers it: the servers are
 * started by the command line's runtime, not by the session.
 *
 * @since 0.1.0
 */
import { McpServers } from "@keel/tools"
import * as Effect from "effect/Effect"
import type { Answer, Context } from "./LocalCommands.js"
import type * as Style from "./Style.js"

/** A server's status in a few words, coloured. @category Rendering */
export const statusText = (server: McpServers.ServerStatus, style: Style.Style): string => {
  switch (server.status) {
    case "connected":
      return style.green("✔ connected") +
        (server.serverInfo !== undefined ? style.dim(` · ${server.serverInfo.name} ${server.serverInfo.version}`) : "")
    case "needs-auth":
      return style.yellow(`△ needs authorization${server.error !== undefined ? `: ${server.error}` : ""}`)
    case "failed":
      return style.red(`✘ failed${server.error !== undefined ? `: ${server.error}` : ""}`)
    default:
      return style.dim(server.status)
  }
}

/** The servers and their tools, for people. @category Rendering */
export const describe = (servers: ReadonlyArray<McpServers.ServerStatus>, style: Style.Style): string => {
  if (servers.length === 0) {
    return "No MCP servers are configured.\n" +
      style.dim("Add them to .mcp.json in the project, to the settings' mcpServers, or pass --mcp-config.")
  }
  const lines = [style.bold(`MCP servers (${servers.length})`)]
  for (const server of servers) {
    lines.push("", `${style.bold(server.name)}  ${statusText(server, style)}`)
    if (server.status === "connected") {
      lines.push(
        server.tools.length === 0
          ? style.dim("  no tools")
          : `  ${server.tools.length} tool${server.tools.length === 1 ? "" : "s"}: ${server.tools.join(", ")}`
      )
    }
  }
  return lines.join("\n")
}

/** Answers `/mcp`. @category Running */
export const run = (args: string, context: Context): Answer =>
  args !== ""
    ? Effect.succeed(context.style.red(`/mcp takes no argument; got "${args}".`))
    : Effect.flatMap(McpServers.McpServers, (servers) => Effect.map(servers.status, (status) => describe(status, context.style)))
