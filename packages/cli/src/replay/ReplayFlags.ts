/**
 * The command line of `keel replay`: the recording (a session id of the working directory, or the
 * path of a `.journal` file), `--tools recorded|live` (default `recorded`: tool results come from
 * the journal; `live` runs the tools again) and `--cwd <dir>` (the folder whose sessions an id
 * names). Usage errors are exit code 2 with a line saying what is wrong.
 *
 * @since 0.1.0
 */
import { Command, Option } from "commander"
import { type Exit, parseCommand } from "../CommandLine.js"

/** What to replay, and how. @category Models */
export interface Flags {
  /** A session id, or a journal's path (it holds a `/` or ends in `.journal`). */
  readonly session: string
  readonly tools: "recorded" | "live"
  readonly cwd: string | undefined
}

/** The outcome of parsing `keel replay ...`. @category Models */
export type Parsed = { readonly _tag: "Replay"; readonly flags: Flags } | Exit

/** The commander program of `keel replay`. @category Constructors */
export const program = (): Command =>
  new Command("keel replay")
    .description(
      "Run a recorded session (keel --record) again under virtual time and check that Keel asks the model\n" +
        "for exactly what it asked then: pass (exit 0), or the first divergence with a diff (exit 1)."
    )
    .argument("<session>", "a session id of this folder, or the path of its journal (<id>.journal)")
    .helpOption("-h, --help", "show this help and exit")
    .addOption(
      new Option("--tools <mode>", "recorded: tool results come from the journal; live: the tools run again")
        .choices(["recorded", "live"])
        .default("recorded")
    )
    .option("--cwd <dir>", "the folder whose sessions the id names (default: the working directory)")
    .allowExcessArguments(false)

/**
 * Parses the arguments after `replay`.
 *
 * @category Parsing
 */
export const parseReplay = (argv: ReadonlyArray<string>): Parsed => {
  const cmd = parseCommand(program(), argv, "keel replay")
  if (!(cmd instanceof Command)) return cmd
  const o = cmd.opts<{ tools: "recorded" | "live"; cwd?: string }>()
  return { _tag: "Replay", flags: { session: cmd.args[0]!, tools: o.tools, cwd: o.cwd } }
}
