/**
 * Paths as the permission checks see them: resolved to their real location (symlinks resolved
 * through every component, `..` and repeated separators normalized, a path that does not exist yet
 * resolved through its nearest existing folder), and whether such a path lies inside the workspace
 * (the working directory and the additional directories).
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as RealPath from "./RealPath.js"

/**
 * The real path of an absolute path, as far as it exists (dangling links followed; see `RealPath`).
 *
 * @category Resolving
 */
export const realPath = (file: string): string => RealPath.realPath(path.resolve(file))

/**
 * A {@link realPath} for many files of a few folders (a search's results): each folder's real path
 * is resolved once and remembered, a file costs one `lstat` (a symlink is resolved in full). For
 * the span of one call: it does not see folders changed after it resolved them.
 *
 * @category Resolving
 */
export const resolver = (): (file: string) => string => {
  const folders = new Map<string, string>()
  const folder = (dir: string) => {
    let real = folders.get(dir)
    if (real === undefined) folders.set(dir, real = realPath(dir))
    return real
  }
  return (file) => {
    const given = path.resolve(file)
    const dir = path.dirname(given)
    if (dir === given) return given
    try {
      if (!fs.lstatSync(given).isSymbolicLink()) return path.join(folder(dir), path.basename(given))
    } catch {
      // Missing (or unreadable): resolved through its nearest existing folder below.
    }
    return realPath(given)
  }
}

/**
 * The forms a path is checked in: as written (made absolute and normalized) and its real path. A
 * rule must hold for both, so a symlink to a denied file, or a denied name reached through a
 * symlinked folder, is caught either way.
 *
 * @category Resolving
 */
export const forms = (file: string, real: (file: string) => string = realPath): ReadonlyArray<string> => {
  const given = path.resolve(file)
  const resolved = real(given)
  return resolved === given ? [given] : [given, resolved]
}

/** Whether `file` is `root` or lies under it (both absolute, normalized). @category Predicates */
export const within = (root: string, file: string): boolean =>
  file === root || file.startsWith(root.endsWith(path.sep) ? root : root + path.sep)

/**
 * The workspace's roots, real paths: the working directory and the additional directories
 * (relative ones resolved against the working directory).
 *
 * @category Resolving
 */
export const roots = (cwd: string, additionalDirectories: ReadonlyArray<string> = []): ReadonlyArray<string> =>
  [cwd, ...additionalDirectories.map((d) => path.resolve(cwd, d))].map(realPath)

/** Whether the real path of `file` lies under one of `roots` (real paths, see {@link roots}). @category Predicates */
export const inside = (roots: ReadonlyArray<string>, file: string): boolean => {
  const real = realPath(file)
  return roots.some((root) => within(root, real))
}
