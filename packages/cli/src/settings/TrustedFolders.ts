/**
 * The folders the user trusts, kept in `$KEEL_HOME/trusted-folders.json` (`{ "folders": [...] }`).
 * A project's files can make Keel run programs (its `.mcp.json` servers, its settings' hooks and
 * `apiKeyHelper`, its git configuration), so the REPL asks once per folder before it reads them;
 * trusting a folder trusts everything under it, as Claude Code does. Headless runs (`-p`, the SDK
 * host) trust their working directory, as Claude Code's `-p` does. A file that cannot be read or is
 * not this shape trusts nothing (the question is asked again).
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as path from "node:path"

/** The file's name under `$KEEL_HOME`. @category Constants */
export const FILE_NAME = "trusted-folders.json"

/** A file larger than this is not read (it trusts nothing). @category Constants */
export const MAX_BYTES = 1_048_576

/** The trusted-folders file of `home` (`$KEEL_HOME`). @category Files */
export const fileOf = (home: string): string => path.join(home, FILE_NAME)

const real = (folder: string): string => {
  try {
    return fs.realpathSync(folder)
  } catch {
    return path.resolve(folder)
  }
}

/** The trusted folders listed in `home`'s file; none when it is missing, too large or malformed. @category Files */
export const list = (home: string): ReadonlyArray<string> => {
  try {
    const file = fileOf(home)
    if (fs.statSync(file).size > MAX_BYTES) return []
    const parsed: unknown = JSON.parse(fs.readFileSync(file, "utf8"))
    const folders = (parsed as { folders?: unknown } | null)?.folders
    return Array.isArray(folders) ? folders.filter((f): f is string => typeof f === "string" && path.isAbsolute(f)) : []
  } catch {
    return []
  }
}

/** Whether `cwd` (its real path) is a trusted folder or inside one. @category Deciding */
export const isTrusted = (home: string, cwd: string): boolean => {
  const folder = real(cwd)
  return list(home).some((t) => folder === t || folder.startsWith(t.endsWith(path.sep) ? t : t + path.sep))
}

/**
 * Remembers `cwd` (its real path) as trusted, written atomically (a temporary file renamed over
 * the old one), readable by the user only.
 *
 * @category Files
 */
export const trust = (home: string, cwd: string): void => {
  const folders = [...new Set([...list(home), real(cwd)])]
  fs.mkdirSync(home, { recursive: true })
  const file = fileOf(home)
  const temporary = `${file}.${process.pid}.tmp`
  fs.writeFileSync(temporary, JSON.stringify({ folders }, null, 2) + "\n", { mode: 0o600 })
  fs.renameSync(temporary, file)
}
