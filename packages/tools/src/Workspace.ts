/**
 * Walking the working tree the way the search tools do: files matching a glob under a folder,
 * skipping what `.gitignore` files ignore (and `.git` itself), with their modification times.
 * Globbing is tinyglobby and ignore rules are `ignore` (the parser ESLint and Prettier use), rather
 * than hand-written matchers.
 *
 * @since 0.1.0
 */
import { Tool } from "@keel/core"
import * as Effect from "effect/Effect"
import ignore from "ignore"
import * as fsSync from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { glob } from "tinyglobby"
import * as RegularFile from "./RegularFile.js"

/** A file found, with its modification time. @category Models */
export interface Found {
  readonly path: string
  readonly mtimeMs: number
}

/** The `.gitignore` rules that apply under `root` (every `.gitignore` found there, each relative to its folder). */
const ignoreRules = async (root: string): Promise<(file: string) => boolean> => {
  const files = await glob("**/.gitignore", { cwd: root, dot: true, absolute: true, ignore: ["**/.git/**", "**/node_modules/**"] })
  const rules = await Promise.all(files.map(async (file) => {
    const dir = path.dirname(file)
    const matcher = ignore().add(await fs.readFile(file, "utf8"))
    return (abs: string) => {
      const rel = path.relative(dir, abs)
      return !rel.startsWith("..") && rel !== "" && matcher.ignores(rel)
    }
  }))
  return (abs) => rules.some((ignored) => ignored(abs))
}

/**
 * Fails when `root` exists and is neither a folder nor a regular file (a pipe, socket or device,
 * which a search would wait on for ever); a missing root is left to the search to report.
 *
 * @category Walking
 */
export const checkRoot = (root: string): Effect.Effect<void, Tool.ToolError> =>
  Effect.flatMap(Effect.sync(() => fsSync.statSync(root, { throwIfNoEntry: false })), (stat) =>
    stat === undefined || stat.isDirectory() || stat.isFile()
      ? Effect.void
      : Tool.fail(`${root} is ${RegularFile.kindOf(stat)}, not a file or a folder; only files and folders are searched.`))

/**
 * The files under `root` matching `pattern` (all files when omitted), not ignored, newest first.
 * Only regular files: pipes, sockets and devices are skipped (reading one could wait for ever).
 *
 * @category Walking
 */
export const find = (root: string, pattern = "**/*"): Effect.Effect<ReadonlyArray<Found>, Tool.ToolError> =>
  Effect.tryPromise({
    try: async () => {
      const stat = await fs.stat(root)
      if (!stat.isDirectory()) return stat.isFile() ? [{ path: root, mtimeMs: stat.mtimeMs }] : []
      const [ignored, matches] = await Promise.all([
        ignoreRules(root),
        glob(pattern, { cwd: root, dot: true, absolute: true, onlyFiles: true, ignore: ["**/.git/**"], followSymbolicLinks: false })
      ])
      const kept = matches.filter((file) => !ignored(file))
      const found = await Promise.all(kept.map(async (file) => {
        const s = await fs.stat(file).catch(() => undefined)
        return s === undefined || !s.isFile() ? undefined : { path: file, mtimeMs: s.mtimeMs }
      }))
      return found.filter((f): f is Found => f !== undefined).sort((a, b) => b.mtimeMs - a.mtimeMs || a.path.localeCompare(b.path))
    },
    catch: (e) =>
      new Tool.ToolError({
        message: (e as NodeJS.ErrnoException).code === "ENOENT" ? `Path does not exist: ${root}` : `Cannot search ${root}: ${String(e)}`
      })
  })
