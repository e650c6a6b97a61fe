/**
 * The folder where tools spill output too large to return whole (Bash's full stdout and stderr):
 * `<os.tmpdir()>/keel-tool-output-<uid>/`, one per user. The model is told the file's path and reads
 * it with Read, which may read there without a rule (see `Permissions.insideWorkspace`), as it may
 * inside the working directory; nothing else outside the workspace is opened up by it.
 *
 * The folder sits in a shared temporary folder, so it is trusted only when it is ours alone: a real
 * folder (not a link), owned by this user, with no access for group or others. One that is not
 * (another user made it first) is neither written nor opened to Read. Spill files older than
 * {@link MAX_AGE_MS} are removed the first time a process checks the folder.
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

/** How old a spill file may grow before a later process removes it (a day). @category Constants */
export const MAX_AGE_MS = 24 * 60 * 60 * 1000

let pruned = false

/** Removes spill files older than {@link MAX_AGE_MS} (once per process; errors are ignored). */
const prune = (dir: string): void => {
  if (pruned) return
  pruned = true
  const cutoff = Date.now() - MAX_AGE_MS
  for (const name of fs.readdirSync(dir)) {
    const file = path.join(dir, name)
    try {
      const stat = fs.lstatSync(file)
      if (stat.isFile() && stat.mtimeMs < cutoff) fs.rmSync(file)
    } catch {
      // gone already, or not ours to remove
    }
  }
}

/**
 * The spill folder's path when it exists and is ours alone (a real folder owned by this user, with
 * no access for group or others), else `undefined`: a folder someone else made is never trusted.
 *
 * @category Predicates
 */
export const trusted = (folder: string = directory): string | undefined => {
  try {
    const stat = fs.lstatSync(folder)
    const ours = typeof process.getuid !== "function" || stat.uid === process.getuid()
    if (!stat.isDirectory() || !ours || (stat.mode & 0o077) !== 0) return undefined
    prune(folder)
    return folder
  } catch {
    return undefined
  }
}

/** Whether `realTarget` (a real path) is a file inside the spill folder, which is ours alone. @category Predicates */
export const contains = (realTarget: string): boolean => {
  const dir = trusted()
  return dir !== undefined && realTarget.startsWith(fs.realpathSync(dir) + path.sep)
}
