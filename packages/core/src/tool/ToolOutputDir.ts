/**
 * The folder where tools spill output too large to return whole (Bash's full stdout and stderr):
 * `<os.tmpdir()>/keel-tool-output-<uid>/`, one per user. The model is told the file's path and reads
 * it with Read, which may read there without a rule (see `Permissions.insideWorkspace`), as it may
 * inside the working directory; nothing else outside the workspace is opened up by it.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/** The spill folder of this user (its real path is taken when it is checked). @category Constants */
export const directory: string = path.join(
  os.tmpdir(),
  `keel-tool-output-${typeof process.getuid === "function" ? process.getuid() : "user"}`
)

/** The real path of the spill folder, or `undefined` while it does not exist. */
const realDirectory = (): string | undefined => {
  try {
    return fs.realpathSync(directory)
  } catch {
    return undefined
  }
}

/** Whether `realTarget` (a real path) is a file inside the spill folder. @category Predicates */
export const contains = (realTarget: string): boolean => {
  const dir = realDirectory()
  return dir !== undefined && realTarget.startsWith(dir + path.sep)
}
