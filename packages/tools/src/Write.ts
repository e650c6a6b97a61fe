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
          const keepCrlf = info !== undefined && !input.content.includes("\r") &&
            LineEndings.isCrlf(yield* fs.readFileString(file).pipe(Effect.catchAll((e) => Tool.fail(`Cannot read ${file}: ${e.message}`))))
          yield* FileWrites.writeAtomically(fs, path, file, keepCrlf ? LineEndings.toCrlf(input.content) : input.content)
          return info === undefined ? `File created successfully at: ${file}` : `The file ${file} has been updated.`
        })
    })
  }
)
