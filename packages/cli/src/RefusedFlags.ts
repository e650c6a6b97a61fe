/**
 * Claude Code options that Keel has no counterpart for: parsed (hidden from `--help`) so that using
 * one is a refusal naming it and why (exit 2), never an unknown option and never ignored.
 *
 * @since 0.1.0
 */
import { type Command, Option } from "commander"

/**
 * Claude Code options (the Claude Agent SDK can pass each) that Keel does not have: parsed, so
 * that using one is a clear refusal naming it (exit 2), never an unknown option or an option
 * silently ignored. `value`: whether it takes a value.
 *
 * @category Constants
 */
export const REFUSED: ReadonlyArray<{ readonly flag: string; readonly value: "none" | "one" | "many"; readonly why: string }> = [
  { flag: "--betas", value: "many", why: "Keel sends no beta headers of a caller's choosing" },
  { flag: "--task-budget", value: "one", why: "Keel has no task budgets (use --max-turns or --max-budget-usd)" },
  { flag: "--thinking-display", value: "one", why: "Keel does not change how thinking is shown" },
  { flag: "--permission-prompts", value: "one", why: "use --permission-prompt-tool stdio" },
  { flag: "--channels", value: "many", why: "Keel has no channels" },
  { flag: "--plugin-dir", value: "many", why: "Keel has no plugins" },
  { flag: "--plugin-dir-no-mcp", value: "many", why: "Keel has no plugins" },
  { flag: "--project-config-root", value: "one", why: "Keel reads the project's configuration from the working directory" },
  { flag: "--await-initialize", value: "none", why: "settings and tool lists inside initialize are not read by Keel" },
  { flag: "--initialize-fields", value: "one", why: "settings and tool lists inside initialize are not read by Keel" },
  { flag: "--managed-settings", value: "many", why: "Keel has no managed (policy) settings" },
  { flag: "--managed-settings-in-initialize", value: "none", why: "Keel has no managed (policy) settings" },
  { flag: "--session-mirror", value: "none", why: "Keel does not mirror sessions" },
  { flag: "--resume-drops-turn", value: "one", why: "Keel resumes a session whole" },
  { flag: "--sdk-url", value: "one", why: "Keel speaks the SDK's protocol over stdin and stdout only" },
  { flag: "--hard-fail", value: "none", why: "Keel's failures already end the run with an error result" },
  { flag: "--replay-user-messages", value: "none", why: "Keel does not echo input messages" }
]

const camel = (flag: string): string => flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())

/** The refused flags the command line used, each with why (see {@link REFUSED}). */
export const refusedFlags = (o: Record<string, unknown>): Array<string> =>
  REFUSED.filter((r) => o[camel(r.flag)] !== undefined && o[camel(r.flag)] !== false).map((r) => `${r.flag} (${r.why})`)

/** `cmd` with the refused Claude Code flags as hidden options (they are refused by name after parsing). */
export const withRefused = (cmd: Command): Command => {
  for (const r of REFUSED) {
    cmd.addOption(new Option(r.value === "none" ? r.flag : `${r.flag} <value${r.value === "many" ? "s..." : ""}>`).hideHelp())
  }
  return cmd
}
