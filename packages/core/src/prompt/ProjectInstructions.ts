/**
 * The instruction files a session follows: `KEEL.md`, `AGENTS.md` and `CLAUDE.md` in the working
 * directory and every folder above it up to the repository root (the folder holding `.git`; outside
 * a repository, up to the filesystem root), then the user's own `$KEEL_HOME/KEEL.md` (default
 * `~/.keel/KEEL.md`), which applies to every project.
 *
 * Order: nearest first. The working directory's files come first, then each parent's, then the
 * user's; the section tells the model that the file listed first wins where two disagree. So the
 * most specific instructions lead, and when the instructions are cut to their budget the most
 * general ones (the repository root's, the user's) are cut first. In one folder the files are
 * read in the order of {@link FILE_NAMES}; a file that is the same as one already read (a symlink,
 * a copy: `CLAUDE.md` pointing at `AGENTS.md`) is read once.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/** The instruction file names, in the order they are read within a folder. @category Constants */
export const FILE_NAMES: ReadonlyArray<string> = ["KEEL.md", "AGENTS.md", "CLAUDE.md"]

/** A file larger than this is named but not read. @category Constants */
export const MAX_FILE_BYTES = 256 * 1024

/** One instruction file. @category Models */
export class InstructionFile extends Schema.Class<InstructionFile>("InstructionFile")({
  path: Schema.String,
  /** `project` (the working directory up to the repository root) or `user` (`$KEEL_HOME/KEEL.md`). */
  scope: Schema.Literal("project", "user"),
  content: Schema.String
}) {}

/** Options of {@link load}. @category Models */
export interface Options {
  /** Where the walk stops (inclusive): the repository root; the filesystem root when absent. */
  readonly root?: string | undefined
  /** `$KEEL_HOME`, whose `KEEL.md` is the user's instructions; none are read when absent. */
  readonly home?: string | undefined
}

/** Reads `file` if it is a readable regular file; `undefined` otherwise. */
const readIfFile = (fs: FileSystem.FileSystem, file: string) =>
  Effect.gen(function*() {
    const info = yield* fs.stat(file)
    if (info.type !== "File") return undefined
    const size = Number(info.size)
    if (size > MAX_FILE_BYTES) {
      return {
        real: yield* fs.realPath(file),
        content: `(Not included: the file is ${Math.round(size / 1024)} KB. Read the parts you need with the Read tool.)`
      }
    }
    return { real: yield* fs.realPath(file), content: yield* fs.readFileString(file) }
  }).pipe(Effect.orElseSucceed(() => undefined))

/**
 * The instruction files for a session in `cwd`, nearest first, the user's last; empty files are
 * left out.
 *
 * @category Constructors
 */
export const load = (
  cwd: string,
  options: Options = {}
): Effect.Effect<ReadonlyArray<InstructionFile>, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const stop = options.root !== undefined ? path.resolve(options.root) : undefined
    const dirs: Array<string> = []
    let dir = path.resolve(cwd)
    while (true) {
      dirs.push(dir)
      const parent = path.dirname(dir)
      if (dir === stop || parent === dir) break
      dir = parent
    }
    const candidates: Array<{ readonly file: string; readonly scope: "project" | "user" }> = dirs.flatMap((d) =>
      FILE_NAMES.map((name) => ({ file: path.join(d, name), scope: "project" as const }))
    )
    if (options.home !== undefined) candidates.push({ file: path.join(options.home, "KEEL.md"), scope: "user" })
    const read = yield* Effect.forEach(candidates, (c) => readIfFile(fs, c.file), { concurrency: 8 })
    const seenPaths = new Set<string>()
    const seenContents = new Set<string>()
    const out: Array<InstructionFile> = []
    read.forEach((r, i) => {
      if (r === undefined || r.content.trim().length === 0) return
      if (seenPaths.has(r.real) || seenContents.has(r.content)) return
      seenPaths.add(r.real)
      seenContents.add(r.content)
      out.push(new InstructionFile({ path: candidates[i]!.file, scope: candidates[i]!.scope, content: r.content }))
    })
    return out
  })

/** The instructions section of the prompt, or none without files. @category Rendering */
export const render = (files: ReadonlyArray<InstructionFile>): Option.Option<string> => {
  if (files.length === 0) return Option.none()
  const parts = [
    "# Project instructions",
    "The instruction files below (KEEL.md, AGENTS.md, CLAUDE.md) were written for you by the people you work with. " +
    "They override your default behaviour: follow them exactly. They are listed nearest folder first; where two " +
    "disagree, the one listed first wins."
  ]
  for (const file of files) {
    const what = file.scope === "user" ? "the user's own instructions, for every project" : "project instructions"
    parts.push(`Contents of ${file.path} (${what}):\n\n${file.content.trim()}`)
  }
  return Option.some(parts.join("\n\n"))
}
