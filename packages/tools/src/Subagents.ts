/**
 * The subagent types the `Task` tool can start, in Claude Code's names: each is a name, when to use
 * it (the model reads this in `Task`'s description), its own system prompt, which of its parent's
 * tools it gets, and optionally its own model and budget of model calls. No subagent ever gets
 * `Task` itself, so subagents do not start subagents.
 *
 * @since 0.1.0
 */
import { BaseInstructions, StructuredOutputTool, type Tool } from "@keel/core"
import * as Texts from "./text/Texts.generated.js"

/** The name of the tool that starts subagents (never given to a subagent). @category Constants */
export const TASK_TOOL_NAME = "Task"

/** The type used when a `Task` call names none. @category Constants */
export const DEFAULT_TYPE = "general-purpose"

/** A subagent type. @category Models */
export interface Definition {
  /** What `subagent_type` names it by. */
  readonly agentType: string
  /** When to use it, for the model choosing one. */
  readonly whenToUse: string
  /** Its system prompt, for the working directory. */
  readonly systemPrompt: (cwd: string) => string
  /** The tools it gets, by name, among its parent's (those the parent lacks are left out); all of them when absent. */
  readonly tools?: ReadonlyArray<string> | undefined
  /** Tools it never gets, by name or MCP server spec (see {@link specMatches}), even when `tools` names them. */
  readonly disallowedTools?: ReadonlyArray<string> | undefined
  /** Its model (an alias, an id, or `inherit`: the parent's); the parent's when absent. */
  readonly model?: string | undefined
  /** The most model calls it may make; `Task`'s default when absent. */
  readonly maxTurns?: number | undefined
  /**
   * A custom agent's prompt as written (its `systemPrompt` adds Keel's notes to it): the system
   * prompt's base instructions when the main thread runs as this agent (`--agent`).
   */
  readonly prompt?: string | undefined
}

/** The end of every subagent's system prompt: how to report, and the working directory. @category Prompts */
export const reportNote = (cwd: string): string => Texts.agentReport({ cwd })

/**
 * `general-purpose`: every tool of its parent except `Task`, for research and multi-step work. It
 * changes files and runs commands, so its prompt carries the base instructions' rules on how to work
 * and what to confirm (see `BaseInstructions.SUBAGENT_SECTIONS`); it cannot ask, so it stops and reports.
 *
 * @category Definitions
 */
export const generalPurpose: Definition = {
  agentType: "general-purpose",
  whenToUse: "Research and multi-step work on its own: open-ended questions, searches that may take several " +
    "rounds, and changes you can describe completely in the prompt.",
  systemPrompt: (cwd) => `${Texts.agentGeneralPurpose}\n\n${BaseInstructions.subagentText}\n\n${reportNote(cwd)}`
}

/**
 * `Explore`: the read-only search tools (`Read`, `Glob`, `Grep`), to find and read code fast.
 *
 * @category Definitions
 */
export const explore: Definition = {
  agentType: "Explore",
  whenToUse: "Fast and read-only: finds files by pattern (\"src/**/*.tsx\"), searches code for terms " +
    "(\"retry policy\") and answers questions about how the codebase works. Say how thorough to be: a quick " +
    "lookup, or a search of every likely place.",
  tools: ["Read", "Glob", "Grep"],
  systemPrompt: (cwd) => `${Texts.agentExplore}\n\n${reportNote(cwd)}`
}

/** The built-in types. @category Definitions */
export const builtin: ReadonlyArray<Definition> = [generalPurpose, explore]

/**
 * The tools a subagent of this type gets from its parent's: those its definition names (all when
 * it names none), in the parent's order, never `Task`, nor the tools that talk to the user or end
 * the session's goal (the parent's to use).
 *
 * @category Tools
 */
export const toolsFor = (definition: Definition, parentTools: ReadonlyArray<Tool.Any>): ReadonlyArray<Tool.Any> =>
  parentTools.filter((t) => !PARENT_ONLY.has(t.name) && allows(definition, t.name))

/**
 * Whether an agent of this type may have the tool `name`: its `tools` name it (or name none) and
 * its `disallowedTools` do not.
 *
 * @category Tools
 */
export const allows = (definition: Pick<Definition, "tools" | "disallowedTools">, name: string): boolean =>
  (definition.tools === undefined || definition.tools.some((spec) => specMatches(spec, name))) &&
  !(definition.disallowedTools ?? []).some((spec) => specMatches(spec, name))

/**
 * Whether a tool spec of an agent's `tools` or `disallowedTools` names the tool `name`, as Claude
 * Code reads them: the name itself; `mcp__server` or `mcp__server__*`, every tool of that MCP
 * server; `mcp__*`, every MCP tool.
 *
 * @category Tools
 */
export const specMatches = (spec: string, name: string): boolean => {
  if (spec === name) return true
  if (spec === "mcp__*") return name.startsWith("mcp__")
  if (!spec.startsWith("mcp__")) return false
  const server = spec.endsWith("__*") ? spec.slice(0, -3) : spec
  return server.split("__").length === 2 && name.startsWith(`${server}__`)
}

/** Tools a subagent never gets (the structured output is the parent's final answer). @category Tools */
export const PARENT_ONLY: ReadonlySet<string> = new Set([
  TASK_TOOL_NAME,
  "AskUserQuestion",
  "update_goal",
  StructuredOutputTool.NAME
])

/** What the model aliases a `Task` call may use stand for. @category Constants */
export const MODEL_ALIASES: Readonly<Record<string, string>> = {
  sonnet: "claude-sonnet-4-6",
  opus: "claude-opus-4-6",
  haiku: "claude-haiku-4-5"
}

/** What an agent's `model` says to use its parent's model. @category Constants */
export const INHERIT = "inherit"

/** A model id for an alias (`sonnet`, `opus`, `haiku`) or an id (unchanged). @category Models */
export const resolveModel = (name: string): string => MODEL_ALIASES[name.trim().toLowerCase()] ?? name.trim()
