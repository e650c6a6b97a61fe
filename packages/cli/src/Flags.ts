/**
 * The command line: flags in Claude Code's names and meanings, parsed with commander (the parser
 * Claude Code itself uses, so variadic flags and `--no-*` negations behave the same). Parsing is
 * kept apart from the kernel so `--help` and `--version` answer without loading it.
 *
 * @since 0.1.0
 */
import { Command } from "commander"
import { readFileSync } from "node:fs"
import { type Exit, parseCommand, usageError } from "./CommandLine.js"
import { program } from "./FlagProgram.js"
import { refusedFlags, withRefused } from "./RefusedFlags.js"

/** The built-in tools `--tools` may name (kept here so parsing does not load the tools). @category Constants */
export const builtinToolNames: ReadonlyArray<string> = [
  "Read",
  "Write",
  "Edit",
  "Bash",
  "Glob",
  "Grep",
  "TodoWrite",
  "Task",
  "AskUserQuestion",
  "update_goal"
]

const SETTING_SOURCES: ReadonlyArray<SettingSource> = ["user", "project", "local"]

export { REFUSED } from "./RefusedFlags.js"
export { type Exit, parseCommand, usageError } from "./CommandLine.js"
export { program } from "./FlagProgram.js"

/** Output formats of headless mode. @category Models */
export type OutputFormat = "text" | "json" | "stream-json"

/**
 * Input formats of headless mode: `text` (the prompt, as an argument or all of stdin: one turn) or
 * `stream-json` (user messages as JSON lines on stdin, one turn each, in one long-lived session).
 *
 * @category Models
 */
export type InputFormat = "text" | "stream-json"

/** What the command line asked for. @category Models */
export interface Flags {
  readonly print: boolean
  readonly prompt: string | undefined
  readonly outputFormat: OutputFormat
  readonly inputFormat: InputFormat
  /**
   * Who answers permission asks in headless mode: `stdio`, the stream-json host, through
   * `control_request` (`can_use_tool`) / `control_response` messages (Claude Code's flag).
   */
  readonly permissionPromptTool: "stdio" | undefined
  readonly model: string | undefined
  readonly maxTurns: number | undefined
  /** Stop once the session has cost this many USD (`--max-budget-usd`, checked after each model response). */
  readonly maxBudgetUsd: number | undefined
  readonly verbose: boolean
  readonly includePartialMessages: boolean
  readonly systemPrompt: string | undefined
  readonly appendSystemPrompt: string | undefined
  /** Models to switch to, in order, after repeated overloads (`--fallback-model a,b`). */
  readonly fallbackModels: ReadonlyArray<string> | undefined
  /** Permission rules from `--allowedTools` and `--disallowedTools`. */
  readonly allowedTools: ReadonlyArray<string>
  readonly disallowedTools: ReadonlyArray<string>
  readonly permissionMode: PermissionMode | undefined
  /** Folders besides the working directory that file tools may use (`--add-dir`). */
  readonly addDirs: ReadonlyArray<string>
  /** The built-in tools to offer (`--tools`); all when undefined. */
  readonly tools: ReadonlyArray<string> | undefined
  /** MCP configs from `--mcp-config`: paths of JSON files, or JSON text. */
  readonly mcpConfig: ReadonlyArray<string>
  /** Only the MCP servers of `--mcp-config`, not `.mcp.json`'s (`--strict-mcp-config`). */
  readonly strictMcpConfig: boolean
  /** The saved session to continue (`-r, --resume <id>`). */
  readonly resume: string | undefined
  /** Continue the most recently written session of the working directory (`-c, --continue`). */
  readonly continue: boolean
  /** With `--resume`/`--continue`: go on as a new session (new id and file) carrying the history. */
  readonly forkSession: boolean
  /**
   * With `--resume`/`--continue` and `--fork-session`: the uuid of the user or assistant message
   * the fork's history ends at (`--resume-session-at <uuid>`).
   */
  readonly resumeSessionAt: string | undefined
  /** The id of a new session or fork (`--session-id`, a UUID not in use). */
  readonly sessionId: string | undefined
  /** Save the session's transcript (off with `--no-session-persistence`). */
  readonly sessionPersistence: boolean
  /** Journal the run beside its transcript (`--record`, or `KEEL_RECORD=1`). */
  readonly record: boolean
  /** Print stack traces of internal errors and the kernel's notable events (`--debug`). */
  readonly debug: boolean
  /** Where `--debug`'s lines go instead of stderr (`--debug-file`). */
  readonly debugFile: string | undefined
  /** More settings (`--settings`): a settings file's path, or its JSON text; applied after the files. */
  readonly settings: string | undefined
  /** Which settings files to read (`--setting-sources user,project,local`); all when undefined, none when empty. */
  readonly settingSources: ReadonlyArray<SettingSource> | undefined
  /** Subagent definitions as JSON (`--agents '{"name": {"description", "prompt", ...}}'`). */
  readonly agents: string | undefined
  /** The agent the main thread runs as (`--agent <name>`), from `--agents` or the agent files. */
  readonly agent: string | undefined
  /** A JSON Schema the final answer must match (`--json-schema`); the result carries `structured_output`. */
  readonly jsonSchema: string | undefined
  /** Effort level of the model's reasoning (`--effort`). */
  readonly effort: Effort | undefined
  /** Thinking mode (`--thinking adaptive|enabled|disabled`). */
  readonly thinking: ThinkingMode | undefined
  /** Fixed thinking budget in tokens (`--max-thinking-tokens`, Claude Code's older flag). */
  readonly maxThinkingTokens: number | undefined
  /** With stream-json: emit hook lifecycle messages (`--include-hook-events`). */
  readonly includeHookEvents: boolean
  /** Let the session switch into bypassPermissions later (`--allow-dangerously-skip-permissions`). */
  readonly allowDangerouslySkipPermissions: boolean
}

/** Settings files `--setting-sources` may name. @category Models */
export type SettingSource = "user" | "project" | "local"

/** Effort levels (`--effort`, the SDK's `effort`). @category Models */
export type Effort = "low" | "medium" | "high" | "xhigh" | "max"

/** Thinking modes (`--thinking`). @category Models */
export type ThinkingMode = "adaptive" | "enabled" | "disabled"

/** Permission modes (Claude Code's). @category Models */
export type PermissionMode = "default" | "acceptEdits" | "bypassPermissions" | "plan" | "dontAsk"

/**
 * Rules as Claude Code takes them: several values, each a comma- or space-separated list, where a
 * rule's parenthesised part may hold spaces and commas (`"Bash(git commit -m x:*)" Read`).
 */
export const splitRules = (values: ReadonlyArray<string>): Array<string> => {
  const out: Array<string> = []
  for (const value of values) {
    let current = ""
    let depth = 0
    for (const ch of value) {
      if (ch === "(") depth++
      if (ch === ")") depth = Math.max(0, depth - 1)
      if (depth === 0 && (ch === "," || ch === " ")) {
        if (current.trim() !== "") out.push(current.trim())
        current = ""
        continue
      }
      current += ch
    }
    if (current.trim() !== "") out.push(current.trim())
  }
  return out
}

/** The outcome of parsing: flags to run with, or text to print and an exit code. @category Models */
export type Parsed = { readonly _tag: "Run"; readonly flags: Flags } | Exit

/**
 * Parses argv (without the node and script paths). Usage errors become `Exit` with code 2 and a
 * message that says what is wrong and points at `--help`.
 *
 * @category Parsing
 */
export const parse = (argv: ReadonlyArray<string>, version: string): Parsed => {
  const cmd = parseCommand(withRefused(program(version)), argv, "keel")
  if (!(cmd instanceof Command)) return cmd
  const o = cmd.opts<{
    print: boolean
    outputFormat: OutputFormat
    inputFormat: InputFormat
    permissionPromptTool?: string
    model?: string
    maxTurns?: number
    maxBudgetUsd?: number
    verbose: boolean
    includePartialMessages: boolean
    systemPrompt?: string
    appendSystemPrompt?: string
    fallbackModel?: string
    allowedTools?: Array<string>
    disallowedTools?: Array<string>
    permissionMode?: PermissionMode
    dangerouslySkipPermissions: boolean
    tools?: string
    addDir?: Array<string>
    mcpConfig?: Array<string>
    strictMcpConfig: boolean
    resume?: string
    continue: boolean
    forkSession: boolean
    resumeSessionAt?: string
    sessionId?: string
    sessionPersistence: boolean
    record: boolean
    debug: boolean
    settings?: string
    settingSources?: string
    agents?: string
    agent?: string
    jsonSchema?: string
    effort?: Effort
    thinking?: ThinkingMode
    maxThinkingTokens?: number
    includeHookEvents: boolean
    allowDangerouslySkipPermissions: boolean
    systemPromptFile?: string
    appendSystemPromptFile?: string
    debugFile?: string
    debugToStderr: boolean
  }>()
  const usage = (message: string): Parsed => usageError("keel", message)
  const fallbackModels = o.fallbackModel === undefined
    ? undefined
    : o.fallbackModel.split(",").map((m) => m.trim()).filter((m) => m.length > 0)
  if (fallbackModels !== undefined && fallbackModels.length === 0) {
    return usage("--fallback-model needs at least one model name, e.g. --fallback-model claude-haiku-4-5.")
  }
  if (fallbackModels !== undefined && o.model !== undefined && fallbackModels.includes(o.model)) {
    return usage(`--fallback-model cannot name the main model (${o.model}); give a different model to fall back to.`)
  }
  if (o.dangerouslySkipPermissions && o.permissionMode !== undefined && o.permissionMode !== "bypassPermissions") {
    return usage(`--dangerously-skip-permissions and --permission-mode ${o.permissionMode} contradict each other; use one.`)
  }
  // `--tools default` (the SDK's `claude_code` preset) is every built-in tool, as no --tools.
  const tools = o.tools === undefined || o.tools.trim() === "default" ? undefined : splitRules([o.tools])
  const unknownTools = (tools ?? []).filter((t) => !builtinToolNames.includes(t))
  if (unknownTools.length > 0) {
    return usage(`--tools names no built-in tool ${unknownTools.join(", ")}; the tools are ${builtinToolNames.join(", ")}.`)
  }
  if (o.includePartialMessages && o.outputFormat !== "stream-json") {
    return usage("--include-partial-messages only works with --output-format stream-json.")
  }
  if (o.inputFormat === "stream-json") {
    if (o.outputFormat !== "stream-json") {
      return usage("--input-format stream-json requires --output-format stream-json (each turn's messages and result are JSON lines).")
    }
    if (cmd.args[0] !== undefined) {
      return usage("with --input-format stream-json the prompts come on stdin as user messages, one JSON line each; drop the prompt argument.")
    }
  }
  if (o.permissionPromptTool !== undefined) {
    if (o.permissionPromptTool !== "stdio") {
      return usage(
        `--permission-prompt-tool ${o.permissionPromptTool} is not supported: only "stdio" (the stream-json host answers ` +
          "permission asks); MCP permission-prompt tools are not."
      )
    }
    if (o.inputFormat !== "stream-json") {
      return usage("--permission-prompt-tool stdio needs --input-format stream-json (the answers come on stdin as control_response lines).")
    }
  }
  // --mcp-config takes every value after it: a prompt written after it reads as a config.
  const swallowed = cmd.args[0] === undefined
    ? o.mcpConfig?.at(-1)
    : undefined
  if (swallowed !== undefined && /\s/.test(swallowed.trim()) && !swallowed.trim().startsWith("{") && !swallowed.endsWith(".json")) {
    return usage(
      `--mcp-config takes every value after it, so ${JSON.stringify(swallowed)} was read as an MCP config; ` +
        `put the prompt before --mcp-config (keel -p "prompt" --mcp-config servers.json) or end the configs with --.`
    )
  }
  const sessionError = sessionFlagsError(o)
  if (sessionError !== undefined) return usage(sessionError)
  const settingSources = o.settingSources === undefined ? undefined : splitRules([o.settingSources])
  const unknownSources = (settingSources ?? []).filter((s) => !SETTING_SOURCES.includes(s as SettingSource))
  if (unknownSources.length > 0) {
    return usage(`--setting-sources names no settings source ${unknownSources.join(", ")}; the sources are user, project, local.`)
  }
  const refused = refusedFlags(o)
  if (refused.length > 0) {
    return usage(`${refused.join("; ")}: Claude Code option${refused.length > 1 ? "s" : ""} that Keel does not support.`)
  }
  if (o.systemPromptFile !== undefined && o.systemPrompt !== undefined) {
    return usage("--system-prompt and --system-prompt-file both replace the system prompt; use one.")
  }
  if (o.appendSystemPromptFile !== undefined && o.appendSystemPrompt !== undefined) {
    return usage("--append-system-prompt and --append-system-prompt-file both append to the system prompt; use one.")
  }
  const promptFile = (flag: string, file: string | undefined): string | { readonly error: string } | undefined => {
    if (file === undefined) return undefined
    try {
      return readFileSync(file, "utf8")
    } catch (e) {
      return { error: `${flag} ${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? String(e)}).` }
    }
  }
  const systemPromptFile = promptFile("--system-prompt-file", o.systemPromptFile)
  const appendSystemPromptFile = promptFile("--append-system-prompt-file", o.appendSystemPromptFile)
  for (const read of [systemPromptFile, appendSystemPromptFile]) if (typeof read === "object") return usage(read.error)
  if (o.jsonSchema !== undefined && !o.print && o.inputFormat !== "stream-json") {
    return usage("--json-schema works with -p (the result of a headless run carries structured_output); add -p.")
  }
  if (o.includeHookEvents === true && o.outputFormat !== "stream-json") {
    return usage("--include-hook-events needs --output-format stream-json (the hook events are stream-json messages).")
  }
  if (o.thinking === "disabled" && o.maxThinkingTokens !== undefined && o.maxThinkingTokens > 0) {
    return usage("--thinking disabled and --max-thinking-tokens contradict each other; use one.")
  }
  return {
    _tag: "Run",
    flags: {
      // stream-json in and out is headless with or without -p: the Claude Agent SDK starts its CLI
      // with `--output-format stream-json --verbose --input-format stream-json` and no -p.
      print: o.print || o.inputFormat === "stream-json",
      prompt: cmd.args[0],
      outputFormat: o.outputFormat,
      inputFormat: o.inputFormat,
      permissionPromptTool: o.permissionPromptTool === "stdio" ? "stdio" : undefined,
      model: o.model,
      maxTurns: o.maxTurns,
      maxBudgetUsd: o.maxBudgetUsd,
      verbose: o.verbose,
      includePartialMessages: o.includePartialMessages,
      systemPrompt: (systemPromptFile as string | undefined) ?? o.systemPrompt,
      appendSystemPrompt: (appendSystemPromptFile as string | undefined) ?? o.appendSystemPrompt,
      fallbackModels,
      allowedTools: splitRules(o.allowedTools ?? []),
      disallowedTools: splitRules(o.disallowedTools ?? []),
      permissionMode: o.dangerouslySkipPermissions ? "bypassPermissions" : o.permissionMode,
      tools,
      addDirs: o.addDir ?? [],
      mcpConfig: o.mcpConfig ?? [],
      strictMcpConfig: o.strictMcpConfig,
      resume: o.resume,
      continue: o.continue,
      forkSession: o.forkSession,
      resumeSessionAt: o.resumeSessionAt,
      sessionId: o.sessionId,
      sessionPersistence: o.sessionPersistence,
      record: o.record || process.env.KEEL_RECORD === "1",
      debug: o.debug || o.debugToStderr || o.debugFile !== undefined,
      debugFile: o.debugFile,
      settings: o.settings,
      settingSources: settingSources as Array<SettingSource> | undefined,
      agents: o.agents,
      agent: o.agent,
      jsonSchema: o.jsonSchema,
      effort: o.effort,
      thinking: o.thinking,
      maxThinkingTokens: o.maxThinkingTokens,
      includeHookEvents: o.includeHookEvents,
      allowDangerouslySkipPermissions: o.allowDangerouslySkipPermissions
    }
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * What is wrong with the session flags together, if anything: `--resume` and `--continue` pick the
 * session two ways, `--fork-session` needs one of them, `--resume-session-at` needs one of them and
 * `--fork-session` (the session's own file is never cut), `--session-id` names a new session (so
 * with either of them it needs `--fork-session`) and must be a UUID.
 *
 * @category Parsing
 */
export const sessionFlagsError = (o: {
  readonly resume?: string | undefined
  readonly continue: boolean
  readonly forkSession: boolean
  readonly resumeSessionAt?: string | undefined
  readonly sessionId?: string | undefined
}): string | undefined => {
  if (o.resume !== undefined && o.continue) {
    return "--resume and --continue cannot be used together: --resume <id> picks a session, --continue the latest one of this folder."
  }
  if (o.resume !== undefined && !/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/.test(o.resume)) {
    return `--resume needs a session id (letters, digits, '.', '_' and '-'), got ${JSON.stringify(o.resume)}.`
  }
  if (o.resumeSessionAt !== undefined) {
    if (o.resumeSessionAt.trim() === "") return "--resume-session-at needs the uuid of a user or assistant message of the session."
    if (o.resume === undefined && !o.continue) {
      return "--resume-session-at needs --resume <id> (or --continue) and --fork-session: it forks the session they pick at that message."
    }
    if (!o.forkSession) {
      return "--resume-session-at needs --fork-session: the history up to that message goes to a new session, " +
        "the session's own file is never cut (add --fork-session)."
    }
  }
  if (o.forkSession && o.resume === undefined && !o.continue) {
    return "--fork-session needs --resume <id> or --continue: it forks the session they pick."
  }
  if (o.sessionId !== undefined && !UUID.test(o.sessionId)) {
    return `--session-id must be a UUID (like 123e4567-e89b-12d3-a456-426614174000), got ${JSON.stringify(o.sessionId)}.`
  }
  if (o.sessionId !== undefined && (o.resume !== undefined || o.continue) && !o.forkSession) {
    return "--session-id with --resume or --continue needs --fork-session: a resumed session keeps its id, a fork takes the new one."
  }
  return undefined
}
