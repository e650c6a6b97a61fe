/**
 * How the REPL's commands name a file: relative to the working directory when it is inside it
 * (`.keel/settings.local.json`, `AGENTS.md`), else its absolute path.
 *
 * @since 0.1.0
 */
import * as nodePath from "node:path"

/** `file` as shown to the user of a REPL in `cwd`. @category Rendering */
export const shown = (file: string, cwd: string): string => {
  const relative = nodePath.relative(cwd, file)
  return relative !== "" && !relative.startsWith("..") && !nodePath.isAbsolute(relative) ? relative : file
}
