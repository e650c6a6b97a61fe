/**
 * Keel's built-in tools.
 *
 * @since 0.1.0
 */

/** The built-in tool set. */
export * as BuiltinTools from "./BuiltinTools.js"
/** The Read tool. */
export * as Read from "./Read.js"
/** The Write tool. */
export * as Write from "./Write.js"
/** The Edit tool. */
export * as Edit from "./Edit.js"
/** What Write and Edit share: the read-before-write check and atomic writes. */
export * as FileWrites from "./FileWrites.js"
/** The Bash tool. */
export * as Bash from "./Bash.js"
/** Which Bash commands only read (and may run in parallel). */
export * as BashReadOnly from "./BashReadOnly.js"
/** The Glob tool. */
export * as Glob from "./Glob.js"
/** The Grep tool. */
export * as Grep from "./Grep.js"
/** The TodoWrite tool: the session's task list. */
export * as TodoWrite from "./TodoWrite.js"
/** The Task tool: subagents. */
export * as Task from "./Task.js"
/** The subagent types Task can start. */
export * as Subagents from "./Subagents.js"
/** Walking the working tree as the search tools do. */
export * as Workspace from "./Workspace.js"
