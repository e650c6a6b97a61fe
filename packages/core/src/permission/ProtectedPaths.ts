/**
 * Files a model must not change on its own, because they decide what runs later: its own future
 * permissions and hooks (`.keel/`, `.claude/`, `$KEEL_HOME`, `$CLAUDE_CONFIG_DIR`, `.mcp.json`,
 * `.claude.json`), what git executes (`.git/` at any depth, a worktree's `.git` file and the git
 * folder it names, `.gitconfig`, `.gitmodules`, `.gitattributes`, `~/.config/git/`, `.husky/`),
 * what a shell or direnv runs on start (`.bashrc`, `.profile`, `.zshrc`, `.envrc`, fish's config,
 * ...), and editor folders whose tasks run on open (`.vscode/`, `.idea/`). A write there by a file
 * tool (Write, Edit, MultiEdit, NotebookEdit) asks in every mode, `acceptEdits` and
 * `bypassPermissions` included (so it is denied headless), unless an allow rule names that exact file
 * (`Write(./.keel/settings.json)`; a wildcard or a whole-tool rule does not count).
 *
 * Names match anywhere in the path (a nested project's `.git/` is as dangerous as the top one), in
 * both the path as given (normalised: `..`, `./`, `//`, a trailing slash) and its real path (a
 * symlink to `.git/config`, or into `.git/`, is `.git/config`), compared without case (a
 * case-insensitive file system opens `.GIT/config` as `.git/config`) and without the invisible
 * characters HFS+ ignores.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as PermissionRule from "./PermissionRule.js"
import { realPath } from "./RealPath.js"

/** Folders whose contents are protected, wherever they are. @category Constants */
export const PROTECTED_FOLDERS: ReadonlyArray<string> = [".git", ".keel", ".claude", ".husky", ".vscode", ".idea"]

/** Files that are protected, wherever they are. @category Constants */
export const PROTECTED_FILES: ReadonlyArray<string> = [
  ".mcp.json",
  ".claude.json",
  ".gitconfig",
  ".gitmodules",
  ".gitattributes",
  ".envrc",
  ".ripgreprc",
  ".bashrc",
  ".bash_profile",
  ".bash_login",
  ".bash_logout",
  ".profile",
  ".zshrc",
  ".zprofile",
  ".zshenv",
  ".zlogin",
  ".zlogout",
  ".inputrc"
]

/** Folders under the user's config folder (`~/.config`, `$XDG_CONFIG_HOME`) that are protected. @category Constants */
export const PROTECTED_CONFIG_FOLDERS: ReadonlyArray<string> = ["git", "fish"]

/** The tools whose writes are checked. @category Constants */
export const WRITE_TOOLS: ReadonlySet<string> = new Set(["Write", "Edit", "MultiEdit", "NotebookEdit"])

/** The user's folders that hold settings, wherever the environment puts them. @category Models */
export interface Homes {
  /** `$KEEL_HOME`, `$CLAUDE_CONFIG_DIR`, `$XDG_CONFIG_HOME/{git,fish}`: protected whatever their names. */
  readonly folders: ReadonlyArray<string>
}

/** {@link Homes} from the environment. @category Constructors */
export const homesFromEnv = (env: NodeJS.ProcessEnv = process.env): Homes => {
  const xdg = env.XDG_CONFIG_HOME
  return {
    folders: [
      env.KEEL_HOME,
      env.CLAUDE_CONFIG_DIR,
      ...(xdg === undefined || xdg === "" ? [] : PROTECTED_CONFIG_FOLDERS.map((f) => path.join(xdg, f)))
    ].filter((f): f is string => f !== undefined && f !== "").map((f) => realPath(path.resolve(f)))
  }
}

// Characters HFS+ ignores in names (zero-width joiners, direction marks, BOM): `.g\u200cit` is `.git` there.
const IGNORABLE = /[\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]/g

const folded = (name: string): string => name.replace(IGNORABLE, "").toLowerCase()

const FOLDERS = new Set(PROTECTED_FOLDERS)
const FILES = new Set(PROTECTED_FILES)
const CONFIG_FOLDERS = new Set(PROTECTED_CONFIG_FOLDERS)

const under = (file: string, folder: string): boolean =>
  file === folder || file.startsWith(folder.endsWith(path.sep) ? folder : folder + path.sep)

/** Why a path (absolute, normalised) is protected by its names, if it is. */
const byName = (file: string): string | undefined => {
  const parts = file.split(path.sep).filter((p) => p !== "").map(folded)
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    if (FOLDERS.has(part)) return `it is inside ${part}/`
    if (part === ".config" && i + 1 < parts.length && CONFIG_FOLDERS.has(parts[i + 1]!)) {
      return `it is inside .config/${parts[i + 1]}/`
    }
  }
  const last = parts.at(-1)
  return last !== undefined && FILES.has(last) ? `${last} can make programs run` : undefined
}

/** The git folder a `.git` file names (`gitdir: <path>`), and its common folder, if `dir/.git` is such a file. */
const gitFileTargets = (dir: string): ReadonlyArray<string> => {
  const dotGit = path.join(dir, ".git")
  try {
    if (!fs.lstatSync(dotGit).isFile()) return []
    const fd = fs.openSync(dotGit, "r")
    const buffer = Buffer.alloc(4096)
    const length = (() => {
      try {
        return fs.readSync(fd, buffer, 0, buffer.length, 0)
      } finally {
        fs.closeSync(fd)
      }
    })()
    const m = /^gitdir:\s*(.+?)\s*$/m.exec(buffer.subarray(0, length).toString("utf8"))
    if (m === null) return []
    const gitDir = realPath(path.resolve(dir, m[1]!))
    const common = (() => {
      try {
        return [realPath(path.resolve(gitDir, fs.readFileSync(path.join(gitDir, "commondir"), "utf8").trim()))]
      } catch {
        return []
      }
    })()
    return [gitDir, ...common]
  } catch {
    return []
  }
}

/** Why a path is protected, looking at its names, the settings homes and the git folders `.git` files name. */
const reasonFor = (file: string, cwd: string, homes: Homes): string | undefined => {
  const named = byName(file)
  if (named !== undefined) return named
  const home = homes.folders.find((h) => under(file, h))
  if (home !== undefined) return `it is inside ${home}, a settings folder`
  // The `.git` files above the file and above the working directory (whose repository it may be).
  for (const start of new Set([path.dirname(file), cwd])) {
    for (let dir = start;; dir = path.dirname(dir)) {
      const gitDir = gitFileTargets(dir).find((g) => under(file, g))
      if (gitDir !== undefined) return `it is inside ${gitDir}, the git folder ${path.join(dir, ".git")} names`
      if (path.dirname(dir) === dir) break
    }
  }
  return undefined
}

/**
 * Why writing `file` (as the model gave it, relative to `cwd`) is protected, or `undefined` when it
 * is not: the path as given (normalised) and its real path are both checked.
 *
 * @category Deciding
 */
export const protectedReason = (file: string, cwd: string, homes: Homes = homesFromEnv()): string | undefined => {
  const given = path.resolve(cwd, file)
  const real = realPath(given)
  const root = realPath(path.resolve(cwd))
  return reasonFor(given, root, homes) ?? (real === given ? undefined : reasonFor(real, root, homes))
}

const GLOB = /[*?[\]{}!]/

/**
 * Whether an allow rule names exactly this file for this tool: `Write(./.keel/settings.json)`,
 * `Edit(//home/me/.bashrc)`, `Edit(~/.bashrc)`: no wildcards, and the same file as given or as
 * resolved.
 *
 * @category Deciding
 */
export const namedExactly = (
  rules: ReadonlyArray<PermissionRule.Rule>,
  toolName: string,
  file: string,
  cwd: string
): PermissionRule.Rule | undefined => {
  const given = path.resolve(cwd, file)
  const targets = new Set([given, realPath(given)])
  return rules.find((rule) => {
    if (rule.toolName !== toolName || rule.content === undefined || GLOB.test(rule.content)) return false
    const named = path.resolve(PermissionRule.resolvePattern(rule.content, cwd))
    return targets.has(named) || targets.has(realPath(named))
  })
}

/**
 * Why a tool call must ask whatever the mode: a write by a file tool to a protected path that no
 * allow rule names exactly. `undefined` for every other call.
 *
 * @category Deciding
 */
export const check = (
  allow: ReadonlyArray<PermissionRule.Rule>,
  request: { readonly toolName: string; readonly input: unknown; readonly cwd: string },
  homes?: Homes
): string | undefined => {
  if (!WRITE_TOOLS.has(request.toolName)) return undefined
  const field = PermissionRule.PATH_FIELDS[request.toolName]
  const value = field === undefined ? undefined : (request.input as Record<string, unknown> | null)?.[field]
  // A write without a usable path is not judged here: the tool refuses it.
  if (typeof value !== "string" || value === "") return undefined
  // The homes are resolved here, for a write only: a read costs no `realpath` of them.
  const reason = protectedReason(value, request.cwd, homes ?? homesFromEnv())
  if (reason === undefined || namedExactly(allow, request.toolName, value, request.cwd) !== undefined) return undefined
  const target = path.resolve(request.cwd, value)
  return `${target} is protected (${reason}), so ${request.toolName} asks for it in every mode; ` +
    `only an allow rule naming this exact file allows it without asking, e.g. ${request.toolName}(/${target})`
}
