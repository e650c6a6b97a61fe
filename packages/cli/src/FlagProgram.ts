/**
 * The `keel` command's flags as commander declares them: names, help text and the checks of
 * numeric values (a bad value is a usage error naming the flag and what it takes).
 *
 * @since 0.1.0
 */
import { Command, InvalidArgumentError, Option } from "commander"

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
    .option(
      "--resume-session-at <uuid>",
      "with --resume or --continue and --fork-session: the fork's history ends at this user or assistant message (its uuid)"
    )
    .option("--session-id <uuid>", "the id of the new session (a UUID not in use)")
    .option("--no-session-persistence", "do not save the session ($KEEL_HOME/projects/...); --resume still reads one")
    .option("--record", "journal every model and tool call beside the session's transcript (<id>.journal; also KEEL_RECORD=1)", false)
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
