/**
 * Keel's built-in tools.
 *
 * @since 0.1.0
 */

/** The built-in tool set. */
export * as BuiltinTools from "./BuiltinTools.js"
/** The Read tool. */
export * as Read from "./Read.js"
/** A range of a text file's lines, read through a fixed buffer (what Read reads text with). */
export * as FileLines from "./FileLines.js"
/** Opening a file only when it is a regular file (never a pipe, socket or device). */
export * as RegularFile from "./RegularFile.js"
/** The Write tool. */
export * as Write from "./Write.js"
/** The Edit tool. */
export * as Edit from "./Edit.js"
/** What Write and Edit share: the read-before-write check and atomic writes. */
export * as FileWrites from "./FileWrites.js"
/** A file's line endings: CRLF files edited and written as LF, kept CRLF. */
export * as LineEndings from "./LineEndings.js"
/** The Bash tool. */
export * as Bash from "./Bash.js"
/** One output stream in bounded memory: head and tail kept, the whole spilled to a file. */
export * as BoundedOutput from "./BoundedOutput.js"
/** Which Bash commands only read (and may run in parallel). */
export * as BashReadOnly from "./BashReadOnly.js"
/** The Glob tool. */
export * as Glob from "./Glob.js"
/** The Grep tool. */
export * as Grep from "./Grep.js"
/** What a Grep call asks for, shared by its two searches. */
export * as GrepQuery from "./GrepQuery.js"
/** What a Grep search found, and the text the model reads. */
export * as GrepOutput from "./GrepOutput.js"
/** Grep's built-in search, in process. */
export * as BuiltinSearch from "./BuiltinSearch.js"
/** Grep's fast path: ripgrep. */
export * as Ripgrep from "./Ripgrep.js"
/** What a file is, from its bytes: an image the API takes, a PDF. */
export * as MediaType from "./MediaType.js"
/** The AskUserQuestion tool: multiple-choice questions, answered through the permission ask. */
export * as AskUserQuestion from "./AskUserQuestion.js"
/** The update_goal tool: the model ends the session's goal (done or blocked). */
export * as UpdateGoal from "./UpdateGoal.js"
/** The TodoWrite tool: the session's task list. */
export * as TodoWrite from "./TodoWrite.js"
/** The Task tool: subagents. */
export * as Task from "./Task.js"
/** The subagent types Task can start. */
export * as Subagents from "./Subagents.js"
/** Walking the working tree as the search tools do. */
export * as Workspace from "./Workspace.js"
/** MCP server configuration: `.mcp.json` and `--mcp-config`. */
export * as McpConfig from "./mcp/McpConfig.js"
// The MCP client itself (McpConnection, McpTool, HostTransport, over the MCP SDK) is `@keel/tools/mcp`:
// nothing here loads the SDK, which a session loads only when it has MCP servers.
/** The link to MCP servers in an Agent SDK host's process. */
export * as HostLink from "./mcp/HostLink.js"
/** MCP tool results as tool outputs, capped. */
export * as McpResult from "./mcp/McpResult.js"
/** The session's MCP servers, a scoped service. */
export * as McpServers from "./mcp/McpServers.js"
/** Custom agents' definitions: the Agent SDK's `AgentDefinition` and agent files' frontmatter. */
export * as AgentDefinition from "./agents/AgentDefinition.js"
/** Markdown agent files (`.claude/agents/*.md`, `.keel/agents/*.md`). */
export * as AgentFiles from "./agents/AgentFiles.js"
/** The agent types of a run, merged by precedence, and the main thread's agent. */
export * as Agents from "./agents/Agents.js"
