/**
 * Opens a file in the user's editor (`$VISUAL` / `$EDITOR`, which may hold arguments: `code -w`)
 * from the REPL's terminal: the input is taken out of raw mode while the editor runs, and the live
 * area is drawn again after it. The editor runs to its end before the REPL reads a key again.
 *
 * @since 0.1.0
 */
import * as childProcess from "node:child_process"

/** What the editor runs in. @category Models */
export interface Options {
  readonly input: NodeJS.ReadStream
  /** Draws the REPL's live area again once the editor is done. */
  readonly redraw: () => void
}

/**
 * Runs `editor file` through the shell (the file passed as an argument, never spliced into the
 * command line); answers its exit code (127 when it could not be started).
 *
 * @category Running
 */
export const edit = (options: Options) => (editor: string, file: string): number => {
  const raw = options.input.isRaw === true
  if (raw) options.input.setRawMode(false)
  try {
    const done = childProcess.spawnSync("/bin/sh", ["-c", `${editor} "$1"`, "sh", file], { stdio: "inherit" })
    return done.error !== undefined ? 127 : done.status ?? 1
  } finally {
    if (raw) options.input.setRawMode(true)
    options.redraw()
  }
}
