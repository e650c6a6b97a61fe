/**
 * `Edit` (`file_path`, `old_string`, `new_string`, `replace_all`): replaces text in a file read in
 * this session and unchanged since. `old_string` must occur exactly once unless `replace_all`; an
 * empty `old_string` creates a new file. In a file whose line breaks are all CRLF, the strings are
 * matched and replaced as LF (as Read shows it) and the file is written back with CRLF
 * (`LineEndings`). The write goes through `FileWrites.writeAtomically`.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { type SessionState, Tool } from "@keel/core"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as FileWrites from "./FileWrites.js"
import * as LineEndings from "./LineEndings.js"
import * as Texts from "./text/Texts.generated.js"

/** The input, as the model sends it. @category Schemas */
export const Input = Schema.Struct({
  file_path: Schema.String.annotations({ description: "The file to modify: an absolute path (a relative one resolves against the session's working directory)" }),
  old_string: Schema.String.annotations({ description: "The text to replace" }),
  new_string: Schema.String.annotations({ description: "The text to replace it with (must be different from old_string)" }),
  replace_all: Schema.optional(Schema.Boolean).annotations({ description: "Replace all occurrences of old_string (default false)" })
})

const description = Texts.Edit

const count = (text: string, part: string): number => {
  let n = 0
  for (let i = text.indexOf(part); i !== -1; i = text.indexOf(part, i + part.length)) n++
  return n
}

/**
 * The structured result of an edit, in Claude Code's shape (`FileEditOutput`): the strings, the
 * file before (`null` for a file the edit created) and the patch.
 *
 * @category Models
 */
export interface Result {
  readonly filePath: string
  readonly oldString: string
  readonly newString: string
  readonly originalFile: string | null
  readonly structuredPatch: ReadonlyArray<FileWrites.Hunk>
  readonly userModified: boolean
  readonly replaceAll: boolean
}

const result = (
  file: string,
  input: typeof Input.Type,
  originalFile: string | null,
  structuredPatch: ReadonlyArray<FileWrites.Hunk>
): Result => ({
  filePath: file,
  oldString: input.old_string,
  newString: input.new_string,
  originalFile,
  structuredPatch,
  userModified: false,
  replaceAll: input.replace_all === true
})

/** The Edit tool over the platform's file system. @category Constructors */
export const make: Effect.Effect<Tool.Tool<typeof Input.Type, SessionState.SessionState>, never, FileSystem.FileSystem | Path.Path> = Effect.gen(
  function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    return Tool.make({
      name: "Edit",
      description,
      input: Input,
      isReadOnly: false,
      call: (input, context) =>
        Effect.gen(function*() {
          const file = path.resolve(context.cwd, input.file_path)
          if (input.old_string === input.new_string) {
            return yield* Tool.fail("No changes to make: old_string and new_string are exactly the same.")
          }
          const info = yield* FileWrites.statIfExists(fs, file)
          if (info === undefined) {
            if (input.old_string !== "") {
              return yield* Tool.fail(`File does not exist: ${file}. To create it, use an empty old_string (or Write).`)
            }
            yield* FileWrites.writeAtomically(fs, path, file, input.new_string)
            return Tool.structured(`File created successfully at: ${file}`, result(file, input, null, FileWrites.patchOf("", input.new_string)))
          }
          yield* FileWrites.requireFreshRead(file, info)
          const raw = yield* fs.readFileString(file).pipe(Effect.catchAll((e) => Tool.fail(`Cannot read ${file}: ${e.message}`)))
          if (input.old_string === "") {
            return yield* Tool.fail(`${file} already exists; an empty old_string only creates new files.`)
          }
          const crlf = LineEndings.isCrlf(raw)
          const asShown = (s: string) => (crlf ? LineEndings.toLf(s) : s)
          const text = asShown(raw)
          const oldString = asShown(input.old_string)
          const newString = asShown(input.new_string)
          const found = count(text, oldString)
          if (found === 0) return yield* Tool.fail(`String to replace not found in ${file}. old_string must match exactly, including whitespace.`)
          if (found > 1 && input.replace_all !== true) {
            return yield* Tool.fail(
              `Found ${found} matches of old_string in ${file}, but replace_all is false. ` +
                "Set replace_all to replace every one, or give more context so that old_string matches exactly once."
            )
          }
          const updated = input.replace_all === true
            ? text.split(oldString).join(newString)
            : text.replace(oldString, () => newString)
          yield* FileWrites.writeAtomically(fs, path, file, crlf ? LineEndings.toCrlf(updated) : updated)
          return Tool.structured(
            `The file ${file} has been updated${found > 1 ? ` (${found} replacements)` : ""}.`,
            result(file, input, raw, FileWrites.patchOf(text, updated))
          )
        })
    })
  }
)
