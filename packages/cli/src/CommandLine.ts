/**
 * Running a commander command with its output collected instead of printed: `--help` and
 * `--version` answer with exit code 0, usage errors with exit code 2 and a pointer at `--help`.
 * Shared by `keel` and its subcommands (`serve`, `export`, `doctor`).
 *
 * @since 0.1.0
 */
import { type Command, CommanderError } from "commander"

/** What a command line printed and exits with, instead of running. @category Models */
export interface Exit {
  readonly _tag: "Exit"
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

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
