/**
 * The MCP defaults that configuration reads (`MCP_TIMEOUT`, `MCP_TOOL_TIMEOUT`,
 * `MAX_MCP_OUTPUT_TOKENS`), in a module of their own so that reading them does not load the MCP SDK.
 *
 * @since 0.1.0
 */

/** Claude Code's default start-up timeout (`MCP_TIMEOUT`). @category Constants */
export const DEFAULT_STARTUP_TIMEOUT_MS = 30_000

/**
 * Claude Code's default timeout of one MCP tool call is `1e8` ms (about 28 hours: none, in effect);
 * Keel's is 30 minutes, so that a server that stops answering cannot hold a session forever.
 * `MCP_TOOL_TIMEOUT` or a server's `timeout` changes it.
 *
 * @category Constants
 */
export const DEFAULT_TOOL_TIMEOUT_MS = 30 * 60 * 1000

/** Claude Code's default cap of one MCP result, in tokens (`MAX_MCP_OUTPUT_TOKENS`). @category Constants */
export const DEFAULT_MAX_OUTPUT_TOKENS = 25_000
