/**
 * Keel's MCP client over the MCP SDK: one server's connection, a server's tools as Keel tools, the
 * transport to servers in an Agent SDK host's process. An entry of its own (`@keel/tools/mcp`)
 * because it loads the SDK (and zod and ajv under it); `@keel/tools` has the session's servers as a
 * service (`McpServers`), which loads this only when there are servers.
 *
 * @since 0.1.0
 */

/** One MCP server's connection. */
export * as McpConnection from "./mcp/McpConnection.js"
/** An MCP transport to a server in an Agent SDK host's process, through the host. */
export * as HostTransport from "./mcp/HostTransport.js"
/** An MCP server's tool as a Keel tool. */
export * as McpTool from "./mcp/McpTool.js"
