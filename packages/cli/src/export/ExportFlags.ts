/**
 * The command line of `keel export`: the session (an id of a session of the working directory, or
 * the path of a transcript file), `--format handoff|replay|review` (default `handoff`), `--output
 * <file>` (default stdout), `--json` (the handoff as JSON rather than Markdown) and `--cwd <dir>`
 * (the folder whose sessions an id names; default the working directory). Usage errors are exit
 * code 2 with a line saying what is wrong.
 *
 * @since 0.1.0
 */
import { Command, InvalidArgumentError, Option } from "commander"
import { parseCommand, usageError } from "../CommandLine.js"

/** The formats, as `Export.FORMATS` names them (not imported: the parser loads without the kernel). @category Constants */
export const FORMATS = ["handoff", "replay", "review"] as const

/** What to export, and where. @category Models */
export interface Flags {
  /** A session id, or a transcript's path (it holds a `/` or ends in `.jsonl`). */
  readonly session: string
  readonly format: typeof FORMATS[number]
  readonly output: string | undefined
  readonly json: boolean
  readonly cwd: string | undefined
}

/** The outcome of parsing `keel export ...`. @category Models */
export type Parsed =
  | { readonly _tag: "Export"; readonly flags: Flags }
  | { readonly _tag: "Exit"; readonly code: number; readonly stdout: string; readonly stderr: string }

const format = (value: string): typeof FORMATS[number] => {
  if (!(FORMATS as ReadonlyArray<string>).includes(value)) {
    throw new InvalidArgumentError(`--format must be one of ${FORMATS.join(", ")}, got "${value}".`)
  }
  return value as typeof FORMATS[number]
}

/** The commander program of `keel export`. @category Constructors */
export const program = (): Command =>
  new Command("keel export")
    .description("Export a saved session as one self-contained file, computed from its transcript alone.")
    .addHelpText(
      "after",
      "\nFormats:\n" +
        "  handoff  what another agent or person needs to continue: the goal, a summary,\n" +
        "           the open items, the files touched (Markdown; JSON with --json)\n" +
        "  replay   the turn envelopes and system prompts, and per turn the model\n" +
        "           requests as recorded, the answers and the tool results (JSON)\n" +
        "  review   every tool call with its input, output and permission decision,\n" +
        "           and the diffs of the files it changed (JSON)\n"
    )
    .argument("<session>", "a session id of this folder (as --resume takes), or the path of a transcript (.jsonl)")
    .helpOption("-h, --help", "show this help and exit")
    .addOption(new Option("--format <format>", `what to export: ${FORMATS.join(", ")}`).argParser(format).default("handoff"))
    .option("-o, --output <file>", "write to this file instead of stdout (nothing is written if the export fails)")
    .option("--json", "the handoff as JSON instead of Markdown", false)
    .option("--cwd <dir>", "the folder whose sessions the id names (default: the working directory)")
    .allowExcessArguments(false)

/**
 * Parses the arguments after `export`.
 *
 * @category Parsing
 */
export const parseExport = (argv: ReadonlyArray<string>): Parsed => {
  const cmd = parseCommand(program(), argv, "keel export")
  if (!(cmd instanceof Command)) return cmd
  const o = cmd.opts<{ format: typeof FORMATS[number]; output?: string; json: boolean; cwd?: string }>()
  if (o.json && o.format !== "handoff") {
    return usageError("keel export", `--json is for --format handoff (the ${o.format} export is always JSON).`)
  }
  return {
    _tag: "Export",
    flags: { session: cmd.args[0]!, format: o.format, output: o.output, json: o.json, cwd: o.cwd }
  }
}
