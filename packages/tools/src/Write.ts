/**
 * `Write` (`file_path`, `content`): writes a file, creating its folders. Overwriting an existing
 * file requires having read it in this session, unchanged since. Replacing a file whose line
 * breaks are all CRLF with content that has no `\r` writes the content with CRLF (Read shows such a
 * file without its `\r`, so the model writes LF). The write goes through `FileWrites.writeAtomically`.
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
  file_path: Schema.String.annotations({ description: "The file to write: an absolute path (a relative one resolves against the session's working directory)" }),
  content: Schema.String.annotations({ description: "The content to write to the file" })
})

const description = Texts.Write

/**
 * The structured result of a write, in Claude Code's shape (`FileWriteOutput`): created or
 * updated, the content, the file before (`null` when created) and the patch (none when created).
 *
 * @category Models
 */
export interface Result {
  readonly type: "create" | "update"
  readonly filePath: string
  readonly content: string
  readonly structuredPatch: ReadonlyArray<FileWrites.Hunk>
  readonly originalFile: string | null
  readonly userModified: boolean
}

/** The Write tool over the platform's file system. @category Constructors */
export const make: Effect.Effect<Tool.Tool<typeof Input.Type, SessionState.SessionState>, never, FileSystem.FileSystem | Path.Path> = Effect.gen(
  function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    return Tool.make({
      name: "Write",
      description,
      input: Input,
      isReadOnly: false,
      call: (input, context) =>
        Effect.gen(function*() {
          const file = path.resolve(context.cwd, input.file_path)
          const info = yield* FileWrites.statIfExists(fs, file)
          if (info !== undefined) yield* FileWrites.requireFreshRead(file, info)
          const before = info === undefined
            ? null
            : yield* fs.readFileString(file).pipe(Effect.catchAll((e) => Tool.fail(`Cannot read ${file}: ${e.message}`)))
          const keepCrlf = before !== null && !input.content.includes("\r") && LineEndings.isCrlf(before)
          const written = keepCrlf ? LineEndings.toCrlf(input.content) : input.content
          yield* FileWrites.writeAtomically(fs, path, file, written)
          const result: Result = {
            type: before === null ? "create" : "update",
            filePath: file,
            content: input.content,
            structuredPatch: before === null ? [] : FileWrites.patchOf(before, written),
            originalFile: before,
            userModified: false
          }
          return Tool.structured(
            before === null ? `File created successfully at: ${file}` : `The file ${file} has been updated.`,
            result
          )
        })
    })
  }
)
