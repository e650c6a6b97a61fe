/**
 * Custom slash commands from Markdown files, as Claude Code's: the `.md` files under
 * `<cwd>/.keel/commands` (the project's) and under `<home>/commands` (the user's, `home` being
 * `$KEEL_HOME`, default `~/.keel`), subfolders included. A file's path names the command
 * (`review.md` is `/review`, `frontend/component.md` is `/frontend:component`); a file whose name
 * `/` cannot invoke (`my notes.md`, `.hidden.md`) is skipped. The user's command replaces the
 * project's of the same name; neither replaces a protected built-in (`Commands.make` sees to that).
 *
 * Running `/name args` sends one user message: a tag block
 * (`<command-message>`, `<command-name>`, `<command-args>`), then the file's body with `$ARGUMENTS`
 * (the raw arguments), `$0`, `$1`, ... and `$ARGUMENTS[0]`, ... (the shell-split arguments, 0-based)
 * substituted; a body without any placeholder gets `\n\nARGUMENTS: args` appended instead.
 *
 * Frontmatter (YAML between `---` lines at the top) is stripped from the prompt. Keys read:
 * `description`, `argument-hint` and `model` (the model of that turn only: an alias of
 * `BuiltinCommands.MODEL_ALIASES`, `default`, or a model id). Accepted but NOT YET APPLIED:
 * `allowed-tools` (the command's turn may use every tool the session allows) and
 * `disable-model-invocation` (the model cannot invoke commands anyway). Other keys are ignored.
 *
 * A file that cannot be used (unreadable, over {@link MAX_FILE_BYTES}, frontmatter that is not a
 * YAML mapping) still becomes its command, listed as broken; running it answers an error naming
 * the file, what is wrong and how to fix it. The walk is bounded ({@link MAX_FILES},
 * {@link MAX_DEPTH}, {@link MAX_ENTRIES}, {@link MAX_TOTAL_BYTES}), follows symlinks but reads no
 * folder twice (so links cannot make it loop), and a missing folder simply has no commands. The
 * YAML library is loaded (dynamic `import()`) only for a file with frontmatter, and sees none longer
 * than {@link MAX_FRONTMATTER_CHARS} or nested deeper than {@link MAX_NESTING}.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import { MODEL_ALIASES } from "./BuiltinCommands.js"
import { expand } from "./CommandArguments.js"
import { describeBody, InvalidFile, type ParsedFile, parseFile } from "./CommandFile.js"
import { type Command, type CommandContext, CommandResult, type Commands, layerAppend } from "./Commands.js"
import * as SlashCommand from "./SlashCommand.js"

/** The most command files read from one folder (the rest are left out, with a warning logged). @category Constants */
export const MAX_FILES = 500

/** How many folder levels below a commands folder are read. @category Constants */
export const MAX_DEPTH = 8

/** The most folder entries looked at in one commands folder, whatever they are. @category Constants */
export const MAX_ENTRIES = 5_000

/** A command file larger than this is reported as broken and not read. @category Constants */
export const MAX_FILE_BYTES = 256 * 1024

/** The most bytes read from one commands folder's files in all; files past it are broken. @category Constants */
export const MAX_TOTAL_BYTES = 8 * 1024 * 1024

/** Options of {@link load}. @category Models */
export interface Options {
  /** The working directory: the project's commands are in its `.keel/commands`. */
  readonly cwd: string
  /** Keel's home folder (`$KEEL_HOME`, default `~/.keel`): the user's commands are in its `commands`. */
  readonly home: string
}

const modelFor = (model: string | undefined, context: CommandContext): string | undefined => {
  if (model === undefined) return undefined
  return model === "default" ? context.defaultModel : MODEL_ALIASES[model.toLowerCase()] ?? model
}

/** The command of a file read and parsed. @category Constructors */
export const fromFile = (name: string, source: "project" | "user", file: ParsedFile): Command => ({
  name,
  description: file.frontmatter.description ?? describeBody(file.body),
  argumentHint: file.frontmatter.argumentHint,
  source,
  run: (args, context) =>
    Effect.sync(() => {
      const prompt = expand(name, file.body, args)
      const model = modelFor(file.frontmatter.model, context)
      return model === undefined ? CommandResult.Prompt({ prompt }) : CommandResult.Prompt({ prompt, model })
    })
})

/** The command of a file that cannot be used: it answers what is wrong. @category Constructors */
export const broken = (name: string, source: "project" | "user", file: string, error: InvalidFile): Command => ({
  name,
  description: "Broken command file: run it to see what is wrong",
  source,
  run: () =>
    Effect.succeed(CommandResult.Reply({
      isError: true,
      text: `/${name} cannot run: ${file} ${error.problem}. ${error.fix} Command files are read at start-up: restart ` +
        "after fixing it. Nothing was sent to the model."
    }))
})

/** A command file found by the walk: its size, or why it cannot be read. */
interface Found {
  readonly name: string
  readonly file: string
  readonly size: number
  readonly error?: InvalidFile | undefined
}

const isName = (name: string): boolean => SlashCommand.parse(`/${name}`)?.name === name

const unreadable = (reason: string) =>
  new InvalidFile({ problem: `could not be read (${reason})`, fix: "Check that it exists and that you may read it." })

/**
 * Whether `file` resolves inside the folder `within` (symlinks followed): a project's command file
 * must, so a repository cannot make `/name` send the model a file of the user's (`~/.ssh/id_rsa`)
 * through a link.
 */
const inside = (fs: FileSystem.FileSystem, path: Path.Path, file: string, within: string) =>
  Effect.gen(function*() {
    const [real, root] = yield* Effect.all([fs.realPath(file), fs.realPath(within)])
    const relative = path.relative(root, real)
    return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative)) ? undefined : real
  }).pipe(Effect.orElseSucceed(() => file))

/** The `.md` files under `root`, named, in a bounded walk that reads no folder twice. */
const walk = (
  fs: FileSystem.FileSystem,
  path: Path.Path,
  root: string,
  within: string | undefined
): Effect.Effect<ReadonlyArray<Found>> =>
  Effect.gen(function*() {
    const found: Array<Found> = []
    const seen = new Set<string>()
    let entries = 0
    let truncated = false
    const visit = (dir: string, prefix: ReadonlyArray<string>): Effect.Effect<void> =>
      Effect.gen(function*() {
        const real = yield* fs.realPath(dir)
        if (seen.has(real)) return
        seen.add(real)
        const names = [...yield* fs.readDirectory(dir)].sort()
        for (const entry of names) {
          if (found.length >= MAX_FILES || entries >= MAX_ENTRIES) {
            truncated = true
            return
          }
          const markdown = entry.endsWith(".md")
          const name = [...prefix, markdown ? entry.slice(0, -3) : entry].join(":")
          // A folder is worth reading when a command in it could be invoked.
          const folder = !markdown && isName(`${name}:x`)
          if (!(markdown && isName(name)) && !folder) continue
          entries++
          const file = path.join(dir, entry)
          const info = yield* Effect.either(fs.stat(file))
          if (Either.isLeft(info)) {
            if (markdown) found.push({ name, file, size: 0, error: unreadable(info.left.message) })
          } else if (info.right.type === "Directory") {
            if (!folder) continue
            if (prefix.length + 1 > MAX_DEPTH) {
              yield* Effect.logWarning(`Custom commands: ${file} is more than ${MAX_DEPTH} folders deep; not read`)
              continue
            }
            yield* visit(file, [...prefix, entry])
          } else if (markdown) {
            const outside = within === undefined ? undefined : yield* inside(fs, path, file, within)
            const error = outside !== undefined
              ? new InvalidFile({
                problem: `resolves to ${outside}, outside the project (${within}): a project's command may only use ` +
                  "files inside it",
                fix: "Copy the file into the project instead of linking to it, or put the command in your own commands folder."
              })
              : info.right.type === "File"
              ? undefined
              : new InvalidFile({ problem: "is not a regular file", fix: "Make it a plain Markdown file." })
            found.push({ name, file, size: Number(info.right.size), error })
          }
        }
      }).pipe(
        Effect.catchAll((e) => Effect.logWarning(`Custom commands: cannot read the folder ${dir}: ${e.message}`))
      )
    const info = yield* Effect.either(fs.stat(root))
    if (Either.isLeft(info) || info.right.type !== "Directory") return found
    yield* visit(root, [])
    if (truncated) {
      yield* Effect.logWarning(
        `Custom commands: ${root} holds more than ${MAX_FILES} command files or ${MAX_ENTRIES} entries; ` +
          "the rest were not read"
      )
    }
    return found
  })

/** At most `limit + 1` bytes of `file`: enough to tell that it is too large without reading it whole. */
const readAtMost = (fs: FileSystem.FileSystem, file: string, limit: number) =>
  Effect.scoped(Effect.gen(function*() {
    const handle = yield* fs.open(file, { flag: "r" })
    const buffer = new Uint8Array(limit + 1)
    let filled = 0
    while (filled < buffer.length) {
      const read = Number(yield* handle.read(buffer.subarray(filled)))
      if (read === 0) break
      filled += read
    }
    return buffer.subarray(0, filled)
  }))

/** `bytes`: its size when known (a file can grow after the walk, and `/proc` files say 0). */
const tooLarge = (bytes: number | undefined) =>
  new InvalidFile({
    problem: `is larger than the ${MAX_FILE_BYTES / 1024} KB a command file may have` +
      (bytes === undefined ? "" : ` (${Math.ceil(bytes / 1024)} KB)`),
    fix: "Shorten it, or move the material into a file that the prompt asks the model to read."
  })

const readFound = (fs: FileSystem.FileSystem, found: Found): Effect.Effect<ParsedFile, InvalidFile> =>
  Effect.gen(function*() {
    if (found.error !== undefined) return yield* found.error
    if (found.size > MAX_FILE_BYTES) return yield* tooLarge(found.size)
    const bytes = yield* readAtMost(fs, found.file, MAX_FILE_BYTES).pipe(
      Effect.mapError((e) => unreadable(e.message))
    )
    if (bytes.length > MAX_FILE_BYTES) return yield* tooLarge(undefined)
    const text = yield* Effect.try({
      try: () => new TextDecoder("utf-8", { fatal: true }).decode(bytes),
      catch: () => new InvalidFile({ problem: "is not UTF-8 text", fix: "Save it as UTF-8." })
    })
    return yield* parseFile(text)
  })

/**
 * The commands of the `.md` files under `folder`, with `source`; none when it does not exist. With
 * `within`, a file that resolves outside that folder (through a symlink) is a broken command.
 *
 * @category Constructors
 */
export const loadFolder = (
  folder: string,
  source: "project" | "user",
  within?: string
): Effect.Effect<ReadonlyArray<Command>, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const found = yield* walk(fs, path, path.resolve(folder), within === undefined ? undefined : path.resolve(within))
    let budget = MAX_TOTAL_BYTES
    const budgeted = found.map((f): Found => {
      if (f.error !== undefined || f.size > MAX_FILE_BYTES) return f
      if (f.size > budget) {
        const error = new InvalidFile({
          problem: `would take the command files of ${folder} past ${MAX_TOTAL_BYTES / 1024 / 1024} MB in all`,
          fix: "Shorten or remove some of the command files."
        })
        return { ...f, error }
      }
      budget -= f.size
      return f
    })
    return yield* Effect.forEach(budgeted, (f) =>
      readFound(fs, f).pipe(
        Effect.catchAllDefect((defect) =>
          new InvalidFile({
            problem: `could not be read: reading it failed unexpectedly (${String(defect)})`,
            fix: "Check the file; if it looks right, report this as a bug in Keel."
          })
        ),
        Effect.match({
          onFailure: (error) => broken(f.name, source, f.file, error),
          onSuccess: (parsed) => fromFile(f.name, source, parsed)
        })
      ), { concurrency: 8 })
  })

/**
 * The Markdown commands of a session: the project's (`<cwd>/.keel/commands`), then the user's
 * (`<home>/commands`), so that passed to `Commands.make` in this order the user's replace the
 * project's of the same name.
 *
 * @category Constructors
 */
export const load = (
  options: Options
): Effect.Effect<ReadonlyArray<Command>, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const project = yield* loadFolder(path.join(options.cwd, ".keel", "commands"), "project", options.cwd)
    const user = yield* loadFolder(path.join(options.home, "commands"), "user")
    return [...project, ...user]
  })

/** The commands below with the Markdown commands of {@link load} added. @category Layers */
export const layer = (options: Options): Layer.Layer<Commands, never, Commands | FileSystem.FileSystem | Path.Path> =>
  layerAppend(load(options))
