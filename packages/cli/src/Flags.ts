/**
 * The command line: flags in Claude Code's names and meanings, parsed with commander (the parser
 * Claude Code itself uses, so variadic flags and `--no-*` negations behave the same). Parsing is
 * kept apart from the kernel so `--help` and `--version` answer without loading it.
 *
 * @since 0.1.0
 */
import { Command, CommanderError, InvalidArgumentError, Option } from "commander"
import { readFileSync } from "node:fs"
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
  /** The id of a new session or fork (`--session-id`, a UUID not in use). */
  readonly sessionId: string | undefined
  /** Save the session's transcript (off with `--no-session-persistence`). */
  readonly sessionPersistence: boolean
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
export type Parsed =
  | { readonly _tag: "Run"; readonly flags: Flags }
  | { readonly _tag: "Exit"; readonly code: number; readonly stdout: string; readonly stderr: string }

const positiveInt = (name: string) => (value: string): number => {
  const n = Number(value)
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`${name} must be a positive whole number, got "${value}".`)
  return n
}

const nonNegativeInt = (name: string) => (value: string): number => {
  const n = Number(value)
  if (value.trim() === "" || !Number.isInteger(n) || n < 0) {
    throw new InvalidArgumentError(`${name} must be a whole number, 0 or more, got "${value}".`)
  }
  return n
}

const positiveUsd = (name: string) => (value: string): number => {
  const n = Number(value)
  if (value.trim() === "" || !Number.isFinite(n) || n <= 0) {
    throw new InvalidArgumentError(`${name} must be an amount of USD above 0, e.g. 0.50, got "${value}".`)
  }
  return n
}

/** The commander program (exposed for help text and tests). @category Constructors */
export const program = (version: string): Command =>
  new Command("keel")
    .description(
      "Keel: an agent loop over the Anthropic Messages API.\n" +
        "keel [prompt]: an interactive session. keel -p \"prompt\": one headless turn\n" +
        "(the prompt may also come on stdin). keel serve --stdio | --port N: the runtime\n" +
        "protocol for an IDE or an app (keel serve --help). keel export <session> --format\n" +
        "handoff|replay|review: a saved session as one file (keel export --help). keel doctor\n" +
        "<session>: check a saved session's transcript and repair a torn one (keel doctor --help)."
    )
    .version(version, "-v, --version", "print the version and exit")
    .helpOption("-h, --help", "show this help and exit")
    .argument("[prompt]", "the prompt (with -p: read from stdin when omitted and stdin is not a terminal)")
    .option("-p, --print", "print the response and exit (headless mode)", false)
    .addOption(
      new Option("--output-format <format>", "output format with --print").choices(["text", "json", "stream-json"]).default(
        "text"
      )
    )
    .addOption(
      new Option(
        "--input-format <format>",
        "input format with --print: the prompt as text, or stream-json user messages on stdin (one turn a line; needs --output-format stream-json)"
      ).choices(["text", "stream-json"]).default("text")
    )
    .option(
      "--permission-prompt-tool <tool>",
      "who answers permission asks with -p: stdio (the stream-json host, by control_request/control_response)"
    )
    .option("--model <model>", "model for this session (default: $ANTHROPIC_MODEL, else claude-sonnet-4-6)")
    .option("--max-turns <n>", "most model calls in one turn (default 500)", positiveInt("--max-turns"))
    .option(
      "--max-budget-usd <amount>",
      "stop with error_max_budget_usd once the session has cost this many USD (checked after each model response)",
      positiveUsd("--max-budget-usd")
    )
    .option("--verbose", "with --output-format json, print every message, not only the result", false)
    .option("--include-partial-messages", "with stream-json, add stream_event lines with the raw model events", false)
    .option("--system-prompt <prompt>", "replace the default system prompt (instruction files, git and environment included)")
    .option("--append-system-prompt <prompt>", "append to the system prompt (the default one, or --system-prompt's)")
    .option("--system-prompt-file <file>", "replace the default system prompt with this file's text")
    .option("--append-system-prompt-file <file>", "append this file's text to the system prompt")
    .option("--allowedTools, --allowed-tools <rules...>", "permission rules to allow without asking, e.g. \"Bash(git status:*)\" Edit")
    .option("--disallowedTools, --disallowed-tools <rules...>", "permission rules to deny, e.g. \"Bash(rm:*)\"")
    .addOption(
      new Option("--permission-mode <mode>", "permission mode (default: defaultMode from the settings, else default)").choices([
        "default",
        "acceptEdits",
        "bypassPermissions",
        "plan",
        "dontAsk"
      ])
    )
    .option("--add-dir <directories...>", "more folders the file tools may use without asking")
    .option("--tools <names>", "the built-in tools to offer, comma-separated (\"\" for none; \"default\" or absent: all)")
    .option(
      "--mcp-config <configs...>",
      "MCP servers from JSON files or strings ({\"mcpServers\": {...}}), besides those of .mcp.json"
    )
    .option("--strict-mcp-config", "use only the MCP servers of --mcp-config, not those of .mcp.json", false)
    .option("--dangerously-skip-permissions", "allow every tool call that no deny rule denies (bypassPermissions)", false)
    .option(
      "--fallback-model <models>",
      "model(s) to switch to, in order, after 3 consecutive 529 Overloaded errors (comma-separated; default: $KEEL_FALLBACK_MODEL)"
    )
    .option("-r, --resume <sessionId>", "continue a saved session of this folder, by id")
    .option("-c, --continue", "continue the most recently saved session of this folder", false)
    .option("--fork-session", "with --resume or --continue: go on as a new session (new id and file) carrying the history", false)
    .option("--session-id <uuid>", "the id of the new session (a UUID not in use)")
    .option("--no-session-persistence", "do not save the session ($KEEL_HOME/projects/...); --resume still reads one")
    .option("-d, --debug", "print stack traces of internal errors", false)
    .option("--debug-file <file>", "with --debug's detail, written to this file instead of stderr")
    .addOption(new Option("--debug-to-stderr", "the same as --debug").default(false).hideHelp())
    .option("--settings <file-or-json>", "more settings: a settings file, or its JSON text (applied after the settings files)")
    .option(
      "--setting-sources <sources>",
      "settings files to read, comma-separated: user, project, local (\"\" for none; default: all)"
    )
    .option("--agents <json>", "subagents as JSON: {\"name\": {\"description\": ..., \"prompt\": ..., \"tools\": [...], \"model\": ...}}")
    .option("--agent <name>", "run the main thread as this agent (from --agents or the agent files)")
    .option("--json-schema <schema>", "a JSON Schema the final answer must match; the result carries structured_output")
    .addOption(new Option("--effort <level>", "how hard the model reasons").choices(["low", "medium", "high", "xhigh", "max"]))
    .addOption(new Option("--thinking <mode>", "extended thinking: adaptive, enabled or disabled").choices(["adaptive", "enabled", "disabled"]))
    .option(
      "--max-thinking-tokens <n>",
      "a thinking budget in tokens (0 disables; on adaptive-thinking models any other value means on)",
      nonNegativeInt("--max-thinking-tokens")
    )
    .option("--include-hook-events", "with stream-json, add system messages for hook starts and results", false)
    .option(
      "--allow-dangerously-skip-permissions",
      "let the session switch into bypassPermissions later (it starts in the mode given)",
      false
    )
    .allowExcessArguments(false)
    .showSuggestionAfterError(true)


/** What a command line printed and exits with, instead of running. @category Models */
export type Exit = Extract<Parsed, { readonly _tag: "Exit" }>

/**
 * A usage error of the command `name` (`keel`, `keel serve`, ...): exit code 2, and a line saying
 * what is wrong with a pointer at its `--help`.
 *
 * @category Parsing
 */
export const usageError = (name: string, message: string): Exit => ({
  _tag: "Exit",
  code: 2,
  stdout: "",
  stderr: `${name}: ${message}\nRun ${name} --help for usage.\n`
})

/**
 * Runs commander's `cmd` (the command `name`) on `argv`, its output collected: `--help` and
 * `--version` become `Exit` with code 0 and what they print, a usage error commander finds becomes
 * `Exit` with code 2 (see {@link usageError}); otherwise `cmd`, parsed.
 *
 * @category Parsing
 */
export const parseCommand = (cmd: Command, argv: ReadonlyArray<string>, name: string): Command | Exit => {
  let stdout = ""
  let stderr = ""
  cmd.exitOverride().configureOutput({
    writeOut: (s) => (stdout += s),
    writeErr: (s) => (stderr += s),
    outputError: (s, write) => write(s.replace(/^error: /, `${name}: `) + `Run ${name} --help for usage.\n`)
  })
  try {
    cmd.parse([...argv], { from: "user" })
  } catch (e) {
    if (e instanceof CommanderError) {
      const code = e.code === "commander.helpDisplayed" || e.code === "commander.version" ? 0 : 2
      return { _tag: "Exit", code, stdout, stderr }
    }
    throw e
  }
  return cmd
}

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
    sessionId?: string
    sessionPersistence: boolean
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
      sessionId: o.sessionId,
      sessionPersistence: o.sessionPersistence,
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
 * session two ways, `--fork-session` needs one of them, `--session-id` names a new session (so with
 * either of them it needs `--fork-session`) and must be a UUID.
 *
 * @category Parsing
 */
export const sessionFlagsError = (o: {
  readonly resume?: string | undefined
  readonly continue: boolean
  readonly forkSession: boolean
  readonly sessionId?: string | undefined
}): string | undefined => {
  if (o.resume !== undefined && o.continue) {
    return "--resume and --continue cannot be used together: --resume <id> picks a session, --continue the latest one of this folder."
  }
  if (o.resume !== undefined && !/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/.test(o.resume)) {
    return `--resume needs a session id (letters, digits, '.', '_' and '-'), got ${JSON.stringify(o.resume)}.`
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
