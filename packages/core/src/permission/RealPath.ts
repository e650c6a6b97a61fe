/**
 * A path with its symlinks resolved, for permission checks: a file about to be created resolves
 * through the nearest folder above it that exists, so `link/new.txt` under a symlinked `link` is
 * judged where it would land, and a dangling symlink is judged by where it points (a write through
 * it creates its target).
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as path from "node:path"

/** How many dangling links are followed before giving up (the kernel's own limit is 40). */
const MAX_LINKS = 40

/**
 * `file` (absolute) with symlinks resolved as far as it exists, dangling links followed; the missing
 * tail is kept as given.
 *
 * @category Paths
 */
export const realPath = (file: string): string => {
  let target = file
  for (let links = 0; links <= MAX_LINKS; links++) {
    // The nearest existing folder, resolved, and the parts below it that do not exist.
    const missing: Array<string> = []
    let current = target
    let base: string | undefined
    while (base === undefined) {
      try {
        base = fs.realpathSync(current)
      } catch {
        const parent = path.dirname(current)
        if (parent === current) return target
        missing.unshift(path.basename(current))
        current = parent
      }
    }
    if (missing.length === 0) return base
    // The first missing part may be a dangling link (a write through it creates its target): follow it.
    const first = path.join(base, missing[0]!)
    let link: string
    try {
      link = fs.readlinkSync(first)
    } catch {
      return path.join(base, ...missing)
    }
    target = path.join(path.resolve(base, link), ...missing.slice(1))
  }
  return target
}
