/**
 * The memory a session starts with, in Claude Code's order: from the most general to the most
 * specific, so that the one listed later wins where two disagree.
 *
 * 1. The user's own files, for every project: `~/.claude/CLAUDE.md` (Claude Code's), then
 *    `$KEEL_HOME/CLAUDE.md` and `$KEEL_HOME/KEEL.md`.
 * 2. Each folder from the repository root (the folder holding `.git`; outside a repository, the
 *    filesystem root) down to the working directory, each with its files in the order of
 *    {@link FOLDER_FILES}: the shared ones (`AGENTS.md`, `CLAUDE.md`, `.claude/CLAUDE.md`, then
 *    Keel's own `KEEL.md`), then the private ones not checked in (`CLAUDE.local.md`, `KEEL.local.md`).
 *
 * Each file is followed by the files it imports (`MemoryImports`). Folders below the working
 * directory are not read here: their files come when a tool first touches a file there
 * (`NestedMemory`).
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as MemoryFile from "./MemoryFile.js"

/** The memory file names of a folder, in the order they are listed. @category Constants */
export const FOLDER_FILES: ReadonlyArray<string> = [
  "AGENTS.md",
  "CLAUDE.md",
  ".claude/CLAUDE.md",
  "KEEL.md",
  "CLAUDE.local.md",
  "KEEL.local.md"
]

/** The scope of a folder's memory file by its name: `local` for the `.local.md` ones. @category Constants */
export const scopeOf = (name: string): "project" | "local" => name.endsWith(".local.md") ? "local" : "project"

/** Options of {@link load}. @category Models */
export interface Options {
  /** Where the walk up stops (inclusive): the repository root; the filesystem root when absent. */
  readonly root?: string | undefined
  /** `$KEEL_HOME`, whose `CLAUDE.md` and `KEEL.md` are the user's; none are read when absent. */
  readonly home?: string | undefined
  /** The user's home folder: `~/.claude/CLAUDE.md` and `~/` imports; neither without it. */
  readonly userHome?: string | undefined
}

/** The memory files gathered, in order, and the imports that were not followed. @category Models */
export interface Loaded {
  readonly files: ReadonlyArray<MemoryFile.MemoryFile>
  readonly skipped: ReadonlyArray<MemoryFile.Skipped>
}

/** The gathering context for a session in `cwd`. @category Constructors */
export const contextFor = (
  cwd: string,
  userHome: string | undefined
): Effect.Effect<MemoryFile.Context, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const resolved = path.resolve(cwd)
    const cwdReal = yield* fs.realPath(resolved).pipe(Effect.orElseSucceed(() => resolved))
    return { fs, path, cwdReal, userHome }
  })

/** Reads the memory files of folder `dir` (see {@link FOLDER_FILES}) into `c`. @category Gathering */
export const includeFolder = (ctx: MemoryFile.Context, c: MemoryFile.Collector, dir: string): Effect.Effect<void> =>
  Effect.forEach(FOLDER_FILES, (name) => MemoryFile.include(ctx, c, ctx.path.join(dir, name), scopeOf(name)), {
    discard: true
  })

/** The folders from `stop` (or the filesystem root) down to `cwd`, the root first. @category Paths */
export const foldersDown = (path: Path.Path, cwd: string, stop: string | undefined): ReadonlyArray<string> => {
  const dirs: Array<string> = []
  const end = stop !== undefined ? path.resolve(stop) : undefined
  let dir = path.resolve(cwd)
  while (true) {
    dirs.push(dir)
    const parent = path.dirname(dir)
    if (dir === end || parent === dir) break
    dir = parent
  }
  return dirs.reverse()
}

/**
 * The memory of a session in `cwd` (see the module's description), with the imports skipped.
 *
 * @category Constructors
 */
export const load = (
  cwd: string,
  options: Options = {}
): Effect.Effect<Loaded, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const ctx = yield* contextFor(cwd, options.userHome)
    const c = MemoryFile.collector()
    const user = [
      ...(options.userHome !== undefined ? [ctx.path.join(options.userHome, ".claude", "CLAUDE.md")] : []),
      ...(options.home !== undefined ? [ctx.path.join(options.home, "CLAUDE.md"), ctx.path.join(options.home, "KEEL.md")] : [])
    ]
    for (const file of user) yield* MemoryFile.include(ctx, c, file, "user")
    for (const dir of foldersDown(ctx.path, cwd, options.root)) yield* includeFolder(ctx, c, dir)
    return { files: c.files, skipped: c.skipped }
  })
