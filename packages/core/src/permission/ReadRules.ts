/**
 * What the tools that read file contents or names on the model's behalf (Grep, Glob) may show:
 * not the files a `Read` deny rule covers (matched on the path as found and on its real path), and
 * nothing whose real path lies outside both the workspace and the folder the call was allowed to
 * search. As in Claude Code, such files are skipped silently: a search over the workspace never
 * names a denied file nor prints a line of it. The rules come from the session's `Permissions`, so
 * a tool asks for its scope ({@link forCall}) rather than having the configuration threaded to it.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as path from "node:path"
import * as PathBoundary from "./PathBoundary.js"
import * as PermissionRule from "./PermissionRule.js"
import { type Config, Permissions } from "./Permissions.js"

/** What one call may see. @category Models */
export interface ReadScope {
  /** The `Read` deny rule that hides this absolute path, if any. */
  readonly denial: (file: string) => PermissionRule.Rule | undefined
  /**
   * Whether a file found under `base` (the folder the call was allowed to search) may be shown:
   * no deny rule covers it, and its real path is in the workspace or under `base`'s real path.
   */
  readonly visible: (file: string, base: string) => boolean
  /**
   * The deny rules as ripgrep `--glob` exclusions for a search of `root` (`!/.env`, anchored to
   * it): a first filter that spares reading denied files. It cannot see symlinks, so results are
   * filtered with {@link ReadScope.visible} as well.
   */
  readonly excludeGlobs: (root: string) => ReadonlyArray<string>
}

/**
 * The scope for a call in `cwd` under `config`.
 *
 * @category Constructors
 */
export const make = (config: Config, cwd: string): ReadScope => {
  const rules = config.deny.filter((r) => r.toolName === "Read")
  const roots = PathBoundary.roots(cwd, config.additionalDirectories)
  // Compiled once per call, folders resolved once: a search may ask about every file of the tree.
  const real = PathBoundary.resolver()
  const matchers = rules.map((r) => ({
    rule: r,
    matches: r.content === undefined ? () => true : PermissionRule.pathMatcher(r.content, cwd, "deny", real)
  }))
  const denial = (file: string) => matchers.find((m) => m.matches(file))?.rule
  return {
    denial,
    visible: (file, base) => {
      if (denial(file) !== undefined) return false
      const resolved = real(file)
      return roots.some((root) => PathBoundary.within(root, resolved)) || PathBoundary.within(real(base), resolved)
    },
    excludeGlobs: (root) =>
      rules.flatMap((r) => {
        if (r.content === undefined) return ["!*"]
        const relative = path.relative(root, PermissionRule.resolvePattern(r.content, cwd))
        return relative === "" || relative.startsWith("..") || path.isAbsolute(relative) ? [] : [`!/${relative}`]
      })
  }
}

/**
 * The scope of a call in `cwd`, from the session's permission rules in force.
 *
 * @category Constructors
 */
export const forCall = (cwd: string): Effect.Effect<ReadScope, never, Permissions> =>
  Effect.map(Permissions, (permissions) => make(permissions.config, cwd))
