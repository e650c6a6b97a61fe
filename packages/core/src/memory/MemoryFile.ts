/**
 * One memory file (an instruction file such as `CLAUDE.md`, or a file one of them imports), and
 * how a set of them is gathered: {@link include} reads a file, then the files it imports after it,
 * depth first, into a {@link Collector} that reads each file once (the same file by another path,
 * a symlink, a copy with the same text, an import cycle) and notes every import it skipped.
 *
 * Imports of the user's own files (`~/.claude/CLAUDE.md`, `$KEEL_HOME/KEEL.md`) may point anywhere
 * the user can read; imports of a project's files must stay inside the working directory (the real
 * path, so a symlink out of it does not count), as Claude Code does without the user's approval of
 * external imports. A missing, unreadable or binary file is skipped, never an error.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as MemoryImports from "./MemoryImports.js"

/** A file larger than this is named but not read. @category Constants */
export const MAX_FILE_BYTES = 256 * 1024

/** At most this many characters come in through imports in one gathering; later imports are skipped. @category Constants */
export const MAX_IMPORTED_CHARS = 200_000

/**
 * Whose a memory file is: `user` (the user's own, for every project), `project` (shared with the
 * repository), `local` (the user's private file for this project: `CLAUDE.local.md`). An imported
 * file has the scope of the file that imports it.
 *
 * @category Models
 */
export const Scope = Schema.Literal("project", "user", "local")

/** One memory file. @category Models */
export class MemoryFile extends Schema.Class<MemoryFile>("InstructionFile")({
  path: Schema.String,
  scope: Scope,
  content: Schema.String,
  /** The memory file whose `@path` brought this one in, if it was imported. */
  importedFrom: Schema.optional(Schema.String)
}) {}

/** An import that was not followed, and why. @category Models */
export interface Skipped {
  readonly path: string
  readonly importedFrom: string
  readonly reason: "missing or unreadable" | "outside the working directory" | "over the size cap for imports"
}

/** What a gathering has so far: the files in order, what it has seen, what it skipped. @category Models */
export interface Collector {
  readonly files: Array<MemoryFile>
  readonly skipped: Array<Skipped>
  /** Real paths read. */
  readonly seenPaths: Set<string>
  /** Texts read (a copy of a file read already is left out). */
  readonly seenContents: Set<string>
  importedChars: number
}

/** An empty collector, or one that knows the files of `seen` already. @category Constructors */
export const collector = (seen: Iterable<{ readonly real: string; readonly content?: string }> = []): Collector => {
  const c: Collector = { files: [], skipped: [], seenPaths: new Set(), seenContents: new Set(), importedChars: 0 }
  for (const s of seen) {
    c.seenPaths.add(s.real)
    if (s.content !== undefined) c.seenContents.add(s.content)
  }
  return c
}

/** Where the files are read from and what imports may reach. @category Models */
export interface Context {
  readonly fs: FileSystem.FileSystem
  readonly path: Path.Path
  /** The real path of the working directory: a project file's imports must be inside it. */
  readonly cwdReal: string
  /** The user's home folder, for `~/` imports (none are followed without one). */
  readonly userHome: string | undefined
}

/** A readable regular file's real path and text (a note in place of the text when too large); `undefined` otherwise. */
export const readIfFile = (fs: FileSystem.FileSystem, file: string) =>
  Effect.gen(function*() {
    const info = yield* fs.stat(file)
    if (info.type !== "File") return undefined
    const real = yield* fs.realPath(file)
    const size = Number(info.size)
    if (size > MAX_FILE_BYTES) {
      return {
        real,
        content: `(Not included: the file is ${Math.round(size / 1024)} KB. Read the parts you need with the Read tool.)`
      }
    }
    const content = yield* fs.readFileString(file)
    return content.includes("\u0000") ? undefined : { real, content }
  }).pipe(Effect.orElseSucceed(() => undefined))

/** Whether `file` is `dir` or inside it (both real paths). @category Paths */
export const isInside = (path: Path.Path, file: string, dir: string): boolean => {
  const rel = path.relative(dir, file)
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel))
}

/**
 * Reads `file` into the collector, then the files it imports (each after the one importing it,
 * depth first, up to {@link MemoryImports.MAX_DEPTH} files deep). A file already seen, an empty one
 * and a file that is not there are left out.
 *
 * @category Gathering
 */
export const include = (
  ctx: Context,
  c: Collector,
  file: string,
  scope: typeof Scope.Type,
  depth = 0,
  importedFrom?: string
): Effect.Effect<void> =>
  Effect.gen(function*() {
    const read = yield* readIfFile(ctx.fs, file)
    if (read === undefined) {
      if (importedFrom !== undefined) c.skipped.push({ path: file, importedFrom, reason: "missing or unreadable" })
      return
    }
    if (importedFrom !== undefined && scope !== "user" && !isInside(ctx.path, read.real, ctx.cwdReal)) {
      c.skipped.push({ path: file, importedFrom, reason: "outside the working directory" })
      return
    }
    if (c.seenPaths.has(read.real) || c.seenContents.has(read.content)) return
    c.seenPaths.add(read.real)
    if (read.content.trim().length === 0) return
    if (importedFrom !== undefined) {
      if (c.importedChars + read.content.length > MAX_IMPORTED_CHARS) {
        c.skipped.push({ path: file, importedFrom, reason: "over the size cap for imports" })
        return
      }
      c.importedChars += read.content.length
    }
    c.seenContents.add(read.content)
    c.files.push(new MemoryFile({ path: file, scope, content: read.content, ...(importedFrom !== undefined ? { importedFrom } : {}) }))
    if (depth + 1 >= MemoryImports.MAX_DEPTH) return
    const dir = ctx.path.dirname(file)
    for (const spec of MemoryImports.importsOf(read.content)) {
      const target = MemoryImports.resolve(spec, dir, ctx.userHome, ctx.path)
      if (target === undefined) {
        c.skipped.push({ path: spec, importedFrom: file, reason: "missing or unreadable" })
        continue
      }
      yield* include(ctx, c, target, scope, depth + 1, file)
    }
  })
