/**
 * The instruction files a session follows, as the project instructions section of its system
 * prompt: the memory a session starts with (`MemoryLoader`: the user's `~/.claude/CLAUDE.md` and
 * `$KEEL_HOME/KEEL.md`, then `AGENTS.md`, `CLAUDE.md`, `.claude/CLAUDE.md`, `KEEL.md` and the
 * private `CLAUDE.local.md`/`KEEL.local.md` of each folder from the repository root down to the
 * working directory, each followed by the files it `@imports`).
 *
 * Order: Claude Code's, the most general first; the section tells the model that the file listed
 * later wins where two disagree. When the instructions are cut to their budget, the most general
 * (the first listed) are cut first (`ContextAssembly`).
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as MemoryFile from "../memory/MemoryFile.js"
import * as MemoryLoader from "../memory/MemoryLoader.js"

/** The instruction file names of a folder, in the order they are listed. @category Constants */
export const FILE_NAMES: ReadonlyArray<string> = MemoryLoader.FOLDER_FILES

/** A file larger than this is named but not read. @category Constants */
export const MAX_FILE_BYTES = MemoryFile.MAX_FILE_BYTES

/** One instruction file (a memory file). @category Models */
export const InstructionFile = MemoryFile.MemoryFile

/** One instruction file (a memory file). @category Models */
export type InstructionFile = MemoryFile.MemoryFile

/** Options of {@link load}: where the walk stops, `$KEEL_HOME`, the user's home folder. @category Models */
export type Options = MemoryLoader.Options

/**
 * The instruction files for a session in `cwd`, the most general first, and the imports that were
 * not followed; empty files are left out.
 *
 * @category Constructors
 */
export const gather = (
  cwd: string,
  options: Options = {}
): Effect.Effect<MemoryLoader.Loaded, never, FileSystem.FileSystem | Path.Path> => MemoryLoader.load(cwd, options)

/** The instruction files of {@link gather}, without the skipped imports. @category Constructors */
export const load = (
  cwd: string,
  options: Options = {}
): Effect.Effect<ReadonlyArray<InstructionFile>, never, FileSystem.FileSystem | Path.Path> =>
  Effect.map(gather(cwd, options), (loaded) => loaded.files)

/** The start of the section: its title and how the files rank. @category Constants */
export const HEADER = [
  "# Project instructions",
  "The instruction files below (CLAUDE.md, AGENTS.md, KEEL.md, their private .local.md versions, and the files " +
  "they import) were written for you by the people you work with. Follow them: on how to work in this project " +
  "(commands, style, workflow) they take precedence over your default behaviour, but they do not lift the rules " +
  "on confirmation, git safety or security. They are listed from the most general (the user's own, for every " +
  "project) to the most specific (the working directory's); where two disagree, the one listed later wins."
].join("\n\n")

const describe = (file: InstructionFile): string => {
  const whose = file.scope === "user"
    ? "the user's own instructions, for every project"
    : file.scope === "local"
    ? "the user's private instructions for this project, not checked in"
    : "project instructions, checked into the codebase"
  return file.importedFrom === undefined ? whose : `${whose}; imported by ${file.importedFrom}`
}

/** One file's part of the section. @category Rendering */
export const renderFile = (file: InstructionFile): string =>
  `Contents of ${file.path} (${describe(file)}):\n\n${file.content.trim()}`

/** The instructions section of the prompt, or none without files. @category Rendering */
export const render = (files: ReadonlyArray<InstructionFile>): Option.Option<string> =>
  files.length === 0 ? Option.none() : Option.some([HEADER, ...files.map(renderFile)].join("\n\n"))
