/**
 * The command line of `keel doctor`: the session (an id of a session of the working directory, or
 * the path of a transcript file) and `--cwd <dir>` (the folder whose sessions an id names). Usage
 * errors are exit code 2 with a line saying what is wrong.
 *
 * @since 0.1.0
 */
import { Command } from "commander"
import { parseCommand } from "../CommandLine.js"

/** What to check and repair. @category Models */
export interface Flags {
  /** A session id, or a transcript's path (it holds a `/` or ends in `.jsonl`). */
  readonly session: string
  readonly cwd: string | undefined
}

/** The outcome of parsing `keel doctor ...`. @category Models */
export type Parsed =
  | { readonly _tag: "Doctor"; readonly flags: Flags }
  | { readonly _tag: "Exit"; readonly code: number; readonly stdout: string; readonly stderr: string }

/** The commander program of `keel doctor`. @category Constructors */
export const program = (): Command =>
  new Command("keel doctor")
    .description(
      "Check a saved session's transcript and repair a torn one: the lines that do not replay are dropped " +
        "(each named, with why), the original is kept beside it as <file>.bak-<time>. Exit 0 when the " +
        "transcript is healthy or repaired, 1 when it is not found or cannot be repaired, 3 when the session is in use."
    )
    .argument("<session>", "a session id of this folder (as --resume takes), or the path of a transcript (.jsonl)")
    .helpOption("-h, --help", "show this help and exit")
    .option("--cwd <dir>", "the folder whose sessions the id names (default: the working directory)")
    .allowExcessArguments(false)

/**
 * Parses the arguments after `doctor`.
 *
 * @category Parsing
 */
export const parseDoctor = (argv: ReadonlyArray<string>): Parsed => {
  const cmd = parseCommand(program(), argv, "keel doctor")
  if (!(cmd instanceof Command)) return cmd
  const o = cmd.opts<{ cwd?: string }>()
  return { _tag: "Doctor", flags: { session: cmd.args[0]!, cwd: o.cwd } }
}
