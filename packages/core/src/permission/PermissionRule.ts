/**
 * Permission rules in Claude Code's syntax: `Tool` (every use), `Tool(content)`: a command prefix
 * for Bash (`Bash(npm run test:*)`), a gitignore-style path pattern for file tools (`Read(./src/**)`,
 * `Edit(//etc/**)` for an absolute path, `~/` for the home folder), `mcp__server` for every tool of
 * an MCP server. Path patterns are matched with picomatch (the matcher of chokidar and micromatch,
 * already in the dependency tree) rather than hand-written globbing.
 *
 * @since 0.1.0
 */
import * as os from "node:os"
import * as path from "node:path"
import picomatch from "picomatch"
import * as BashCommand from "./BashCommand.js"

/** A parsed rule. @category Models */
export interface Rule {
  readonly toolName: string
  readonly content?: string | undefined
}

/** Tools whose rule content is a path pattern, and the input field holding the path. @category Constants */
export const PATH_FIELDS: Readonly<Record<string, string>> = {
  Read: "file_path",
  Write: "file_path",
  Edit: "file_path",
  MultiEdit: "file_path",
  NotebookEdit: "notebook_path",
  Glob: "path",
  Grep: "path"
}

/** Parses `Tool` or `Tool(content)`; `undefined` when the text is not a rule. @category Parsing */
export const parse = (text: string): Rule | undefined => {
  const m = /^\s*([A-Za-z0-9_.-]+)\s*(?:\((.*)\))?\s*$/s.exec(text)
  if (m === null) return undefined
  const content = m[2]?.trim()
  return content === undefined || content === "" || content === "*" ? { toolName: m[1]! } : { toolName: m[1]!, content }
}

/** The rule as written. @category Formatting */
export const format = (rule: Rule): string => (rule.content === undefined ? rule.toolName : `${rule.toolName}(${rule.content})`)

/** Whether a tool name is an MCP server's tool (`mcp__<server>__<tool>`). @category Predicates */
export const isMcpTool = (toolName: string): boolean => toolName.startsWith("mcp__")

const toolMatches = (rule: Rule, toolName: string): boolean =>
  rule.toolName === toolName || (rule.toolName.startsWith("mcp__") && !rule.toolName.slice(5).includes("__") &&
    toolName.startsWith(rule.toolName + "__"))

/** The absolute path a path rule's pattern stands for (`//abs`, `~/home`, `/cwd-relative`, `relative`). @category Matching */
export const resolvePattern = (pattern: string, cwd: string): string => {
  if (pattern.startsWith("//")) return pattern.slice(1)
  if (pattern.startsWith("~/")) return path.join(os.homedir(), pattern.slice(2))
  return path.join(cwd, pattern.startsWith("/") ? pattern.slice(1) : pattern)
}

/** Whether a path rule matches an absolute path (a pattern naming a folder matches what is under it). */
const pathMatches = (pattern: string, file: string, cwd: string): boolean => {
  const resolved = resolvePattern(pattern, cwd)
  return picomatch.isMatch(file, resolved, { dot: true }) || picomatch.isMatch(file, `${resolved.replace(/\/$/, "")}/**`, { dot: true })
}

/** How a rule is applied: `allow` rules must cover every simple command of a Bash call. @category Models */
export type Use = "allow" | "deny" | "ask"

/**
 * Whether `rule` applies to a call of `toolName` with `input`. For Bash, a `deny` or `ask` rule
 * applies when any command anywhere in the call may match it (see `BashCommandAnywhere`); an
 * `allow` rule set applies only when the call is fully analysed and every simple command matches
 * one of the rules (see {@link allows}). Judge Bash calls after `BashGrammar.ready`.
 *
 * @category Matching
 */
export const matches = (rule: Rule, toolName: string, input: unknown, cwd: string): boolean => {
  if (!toolMatches(rule, toolName)) return false
  if (rule.content === undefined) return true
  const fields = (input ?? {}) as Record<string, unknown>
  if (toolName === "Bash") {
    const command = typeof fields.command === "string" ? fields.command : ""
    return BashCommand.anyCommandMatches(command, rule.content)
  }
  const field = PATH_FIELDS[toolName]
  if (field !== undefined) {
    const value = fields[field]
    const file = typeof value === "string" ? path.resolve(cwd, value) : cwd
    return pathMatches(rule.content, file, cwd)
  }
  return false
}

/**
 * Whether these allow rules allow the call. A Bash call is allowed only when its syntax tree is
 * fully analysed (`BashCommand.analyse`: no substitution, subshell, expansion or redirection that
 * writes) and each of its simple commands is matched by some rule: `Bash(git status:*)` allows
 * `git status -s` but not `git status; rm -rf x`.
 *
 * @category Matching
 */
export const allows = (rules: ReadonlyArray<Rule>, toolName: string, input: unknown, cwd: string): Rule | undefined => {
  const relevant = rules.filter((r) => toolMatches(r, toolName))
  if (relevant.length === 0) return undefined
  const whole = relevant.find((r) => r.content === undefined)
  if (whole !== undefined) return whole
  if (toolName !== "Bash") return relevant.find((r) => matches(r, toolName, input, cwd))
  const command = typeof (input as { command?: unknown } | null)?.command === "string"
    ? (input as { command: string }).command
    : ""
  const analysis = BashCommand.analyse(command)
  if (analysis._tag === "Unanalysable" || analysis.commands.length === 0) return undefined
  let first: Rule | undefined
  for (const simple of analysis.commands) {
    const rule = relevant.find((r) => BashCommand.matchesContent(simple, r.content!))
    if (rule === undefined) return undefined
    first ??= rule
  }
  return first
}
