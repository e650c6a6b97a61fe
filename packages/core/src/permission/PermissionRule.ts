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
import * as PathBoundary from "./PathBoundary.js"

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

/**
 * The absolute path a path rule's pattern stands for: `//x` is `/x`, `~/x` is under the home
 * folder, anything else is relative to `cwd`.
 *
 * @category Matching
 */
export const resolvePattern = (pattern: string, cwd: string): string => {
  if (pattern.startsWith("//")) return pattern.slice(1)
  if (pattern.startsWith("~/")) return path.join(os.homedir(), pattern.slice(2))
  return path.join(cwd, pattern.startsWith("/") ? pattern.slice(1) : pattern)
}

/**
 * The absolute patterns a path rule stands for: as written, and with the real path of its fixed
 * prefix (the folders before the first glob character), so a rule written under a symlinked folder
 * (`/tmp` on macOS, a linked checkout) still matches the real paths of the files it names.
 */
const patternForms = (pattern: string, cwd: string): ReadonlyArray<string> => {
  const resolved = resolvePattern(pattern, cwd)
  const scan = picomatch.scan(resolved)
  const real = scan.base === "" ? resolved : path.join(PathBoundary.realPath(scan.base), scan.glob)
  return real === resolved ? [resolved] : [resolved, real]
}

/** Whether file names differ only by case here (macOS and Windows by default): then rules ignore case. */
const NOCASE = process.platform === "darwin" || process.platform === "win32"

/**
 * A matcher for a path rule's pattern (a pattern naming a folder matches what is under it), compiled
 * once. The path is tried as written (normalized: `..`, `//`) and as its real path, against the
 * pattern as written and with its folders' symlinks resolved: a symlink to a denied file, a denied
 * file reached through a symlinked folder, and `sub/../.env` all match `Read(./.env)`. For `deny`
 * and `ask` any form matching is enough; for `allow` every form must match (a link inside an
 * allowed folder to a file outside it is not allowed by that rule). `real` resolves real paths
 * (`PathBoundary.resolver` for many files at once).
 *
 * @category Matching
 */
export const pathMatcher = (
  pattern: string,
  cwd: string,
  use: Use = "deny",
  real: (file: string) => string = PathBoundary.realPath
): (file: string) => boolean => {
  const patterns = patternForms(pattern, cwd).flatMap((p) => [p, `${p.replace(/\/$/, "")}/**`])
  const isMatch = picomatch(patterns, { dot: true, nocase: NOCASE })
  return (file) => {
    const files = PathBoundary.forms(file, real)
    return use === "allow" ? files.every((f) => isMatch(f)) : files.some((f) => isMatch(f))
  }
}

/**
 * The absolute path a file tool's call uses: its path field resolved against `cwd` (`cwd` when
 * absent). For `Glob`, the pattern's fixed prefix is part of it (`../outside/*` searches
 * `../outside`, `/etc/*` searches `/etc`). `undefined` for tools that take no path.
 *
 * @category Matching
 */
export const targetPath = (toolName: string, input: unknown, cwd: string): string | undefined => {
  const field = PATH_FIELDS[toolName]
  if (field === undefined) return undefined
  const fields = (input ?? {}) as Record<string, unknown>
  const value = fields[field]
  const base = path.resolve(cwd, typeof value === "string" ? value : ".")
  const pattern = toolName === "Glob" && typeof fields.pattern === "string" ? picomatch.scan(fields.pattern).base : ""
  return path.resolve(base, pattern)
}

/**
 * Tools that read file contents or names and so honour `Read` rules besides their own: a deny on
 * `Read(./.env)` denies `Grep` and `Glob` calls whose path it covers (and they skip covered files
 * inside the folders they search, see `ReadRules`).
 *
 * @category Constants
 */
export const READ_TOOLS: ReadonlySet<string> = new Set(["Grep", "Glob"])

/**
 * Whether a `Read` rule covers a call of a tool that reads on Read's terms ({@link READ_TOOLS}):
 * the rule matches the path the call searches.
 *
 * @category Matching
 */
export const coversRead = (rule: Rule, toolName: string, input: unknown, cwd: string): boolean => {
  if (rule.toolName !== "Read" || !READ_TOOLS.has(toolName)) return false
  return matches(rule, "Read", { file_path: targetPath(toolName, input, cwd) }, cwd)
}

/** How a rule is applied: `allow` rules must cover every simple command of a Bash call. @category Models */
export type Use = "allow" | "deny" | "ask"

/**
 * Whether `rule` applies to a call of `toolName` with `input`. For Bash, a `deny` or `ask` rule
 * applies when any command anywhere in the call may match it (see `BashCommandAnywhere`); an
 * `allow` rule set applies only when the call is fully analysed and every simple command matches
 * one of the rules (see {@link allows}). Judge Bash calls after `BashGrammar.ready`. A path rule is
 * matched against the path as given and its real path: for `deny` and `ask` (the default) either
 * matching is enough, for `allow` both must match.
 *
 * @category Matching
 */
export const matches = (rule: Rule, toolName: string, input: unknown, cwd: string, use: Use = "deny"): boolean => {
  if (!toolMatches(rule, toolName)) return false
  if (rule.content === undefined) return true
  const fields = (input ?? {}) as Record<string, unknown>
  if (toolName === "Bash") {
    const command = typeof fields.command === "string" ? fields.command : ""
    return BashCommand.anyCommandMatches(command, rule.content)
  }
  const file = targetPath(toolName, input, cwd)
  return file !== undefined && pathMatcher(rule.content, cwd, use)(file)
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
  if (toolName !== "Bash") return relevant.find((r) => matches(r, toolName, input, cwd, "allow"))
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
