/**
 * `Read`: reads a text file as numbered lines (`cat -n` style), with Claude Code's name and input
 * fields (`file_path`, `offset`, `limit`). Relative paths resolve against the session's working
 * directory; binary files and directories are refused with a message the model can act on.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { FileState, Tool } from "@keel/core"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** Lines returned when no `limit` is given. @category Constants */
export const DEFAULT_LIMIT = 2000
/** Longest line returned; longer lines are cut. @category Constants */
export const MAX_LINE_LENGTH = 2000
/** Most characters one Read returns (about 25,000 tokens); past that, ask for a range. @category Constants */
export const MAX_OUTPUT_CHARS = 100_000

/** The input, as the model sends it. @category Schemas */
export const Input = Schema.Struct({
  file_path: Schema.String.annotations({ description: "The absolute path to the file to read" }),
  offset: Schema.optional(
    Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)).annotations({
      description: "The line number to start reading from (1 is the first line). Only provide if the file is too large to read at once"
    })
  ),
  limit: Schema.optional(
    Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)).annotations({
      description: "The number of lines to read. Only provide if the file is too large to read at once"
    })
  )
})

const description = [
  "Reads a file from the local filesystem.",
  "- file_path should be an absolute path; a relative path is resolved against the working directory.",
  `- By default it reads up to ${DEFAULT_LIMIT} lines from the start of the file; use offset and limit for long files.`,
  `- Lines longer than ${MAX_LINE_LENGTH} characters are truncated.`,
  "- Results are returned cat -n style: the line number, a tab, then the line.",
  "- It reads text files only; binary files are refused."
].join("\n")

/** Whether these bytes look binary: a NUL byte in the first 8 KB. @category Utils */
export const isBinary = (bytes: Uint8Array): boolean => {
  const n = Math.min(bytes.length, 8192)
  for (let i = 0; i < n; i++) if (bytes[i] === 0) return true
  return false
}

/** Formats lines `cat -n` style, numbering from `first`. @category Utils */
export const numberLines = (lines: ReadonlyArray<string>, first: number): string => {
  const out: Array<string> = []
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!
    if (line.length > MAX_LINE_LENGTH) line = line.slice(0, MAX_LINE_LENGTH) + "… [line truncated]"
    out.push(`${String(first + i).padStart(6, " ")}\t${line}`)
  }
  return out.join("\n")
}

/** The Read tool over the platform's file system. @category Constructors */
export const make: Effect.Effect<Tool.Tool<typeof Input.Type>, never, FileSystem.FileSystem | Path.Path> = Effect.gen(
  function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    return Tool.make({
      name: "Read",
      description,
      input: Input,
      isReadOnly: true,
      call: (input, context) =>
        Effect.gen(function*() {
          const file = path.resolve(context.cwd, input.file_path)
          const info = yield* fs.stat(file).pipe(
            Effect.catchAll((e) =>
              Tool.fail(
                e._tag === "SystemError" && e.reason === "NotFound"
                  ? `File does not exist: ${file}. The working directory is ${context.cwd}.`
                  : `Cannot read ${file}: ${e.message}`
              )
            )
          )
          if (info.type === "Directory") {
            return yield* Tool.fail(`${file} is a directory, not a file. List it with a shell or glob tool instead.`)
          }
          const bytes = yield* fs.readFile(file).pipe(Effect.catchAll((e) => Tool.fail(`Cannot read ${file}: ${e.message}`)))
          yield* FileState.record(file, info.mtime._tag === "Some" ? info.mtime.value.getTime() : 0)
          if (isBinary(bytes)) {
            return yield* Tool.fail(`${file} is a binary file (${bytes.length} bytes); Read reads text files only.`)
          }
          if (bytes.length === 0) return `(${file} exists but is empty)`
          const text = new TextDecoder("utf-8").decode(bytes)
          const lines = text.split(/\r?\n/)
          if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop()
          const offset = input.offset ?? 1
          if (offset > lines.length) {
            return yield* Tool.fail(
              `${file} has ${lines.length} lines; offset ${offset} is past the end. Use an offset from 1 to ${lines.length}.`
            )
          }
          const limit = input.limit ?? DEFAULT_LIMIT
          const shown = lines.slice(offset - 1, offset - 1 + limit)
          const body = numberLines(shown, offset)
          if (body.length > MAX_OUTPUT_CHARS) {
            return yield* Tool.fail(
              `The selected part of ${file} is ${body.length} characters, more than the ${MAX_OUTPUT_CHARS} one Read returns. ` +
                "Read a smaller range with offset and limit."
            )
          }
          const last = offset + shown.length - 1
          return last < lines.length || offset > 1
            ? `${body}\n\n(Lines ${offset}-${last} of ${lines.length}. Use offset and limit to read other parts.)`
            : body
        })
    })
  }
)
