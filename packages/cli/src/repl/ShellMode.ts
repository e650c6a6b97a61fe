/**
 * The REPL's `!` lines: each runs at once as a shell command (`ShellCommand`), whether a turn runs
 * or not, its output printed under the command; Ctrl+C (or Esc) stops it. What it ran and printed
 * waits for the next prompt, and goes to the model before it (`ShellCommand.context`).
 *
 * @since 0.1.0
 */
import * as ShellCommand from "./ShellCommand.js"
import type * as Style from "./Style.js"

/** What shell mode prints with. @category Models */
export interface Options {
  readonly cwd: string
  readonly timeoutMs: number
  readonly style: Style.Style
  /** Prints a line above the input line. */
  readonly line: (text: string) => void
}

/** The REPL's shell mode. @category Models */
export interface ShellMode {
  /** Runs `command`, prints it and its output; resolves when it has ended. */
  readonly run: (command: string) => Promise<void>
  /** Whether a command runs. */
  readonly running: () => boolean
  /** Stops the running command. */
  readonly interrupt: () => void
  /** `prompt` with the context of the commands run since the last prompt before it (then forgotten). */
  readonly withContext: (prompt: string) => string
}

/** The output of a command, each line under the one before, the first after `⎿`. */
const printed = (outcome: ShellCommand.Outcome, style: Style.Style): Array<string> => {
  const lines = (text: string) => (text === "" ? [] : text.replace(/\n$/, "").split("\n"))
  const out = [...lines(outcome.stdout), ...lines(outcome.stderr).map((l) => style.red(l))]
  return out.length === 0 ? [style.dim("(no output)")] : out
}

/** Shell mode for the REPL. @category Constructors */
export const make = (options: Options): ShellMode => {
  const { style } = options
  let controller: AbortController | undefined
  let pending = ""
  return {
    run: async (command) => {
      options.line(`${style.bold(style.magenta("!"))} ${command}`)
      const mine = new AbortController()
      controller = mine
      const outcome = await ShellCommand.run(command, options.cwd, options.timeoutMs, mine.signal)
      if (controller === mine) controller = undefined
      const end = ShellCommand.ending(outcome, options.timeoutMs)
      const rows = printed(outcome, style)
      options.line(rows.map((row, i) => `${i === 0 ? `  ${style.dim("⎿")} ` : "    "}${row}`).join("\n"))
      if (end !== undefined) options.line(`    ${outcome.stopped !== undefined || outcome.code !== 0 ? style.red(end) : end}`)
      pending += ShellCommand.context(command, outcome, options.timeoutMs)
    },
    running: () => controller !== undefined,
    interrupt: () => controller?.abort(),
    withContext: (prompt) => {
      const text = pending + prompt
      pending = ""
      return text
    }
  }
}
