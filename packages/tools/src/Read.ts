/**
 * `Read`: reads a file with Claude Code's name and input fields (`file_path`, `offset`, `limit`).
 * Text comes back as numbered lines (`cat -n` style); images the API takes (PNG, JPEG, GIF, WebP,
 * recognised by their bytes, whatever the file is called) come back as an `image` block and PDFs as
 * a `document` block, so the model sees the picture or the pages. Relative paths resolve against
 * the session's working directory; other binary files, directories, and images or PDFs too large
 * for the API are refused with a message the model can act on. Every read records the file's mtime
 * (`FileState`), which Edit and Write check.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { FileState, Message, type SessionState, Tool } from "@keel/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as MediaType from "./MediaType.js"
import * as Texts from "./text/Texts.generated.js"

/** Lines returned when no `limit` is given. @category Constants */
export const DEFAULT_LIMIT = 2000
/** Longest line returned; longer lines are cut. @category Constants */
export const MAX_LINE_LENGTH = 2000
/** Most characters one Read returns (about 25,000 tokens); past that, ask for a range. @category Constants */
export const MAX_OUTPUT_CHARS = 100_000
/** Most tokens one Read returns, as its description states (today enforced as {@link MAX_OUTPUT_CHARS}). @category Constants */
export const MAX_OUTPUT_TOKENS = 25_000
/**
 * Largest image returned, in bytes (3.75 MB): base64 makes it a third larger, and the API takes at
 * most 5 MB per image.
 *
 * @category Constants
 */
export const MAX_IMAGE_BYTES = 3_932_160
/** Longest side of an image the API accepts, in pixels. @category Constants */
export const MAX_IMAGE_SIDE = 8000
/** Largest PDF returned, in bytes (20 MB): base64 makes it 27 MB, under the API's 32 MB per request. @category Constants */
export const MAX_PDF_BYTES = 20_971_520
/** Most pages of a PDF the API reads in one request. @category Constants */
export const MAX_PDF_PAGES = 100
/** Bytes looked at to tell what a file is (magic numbers, NUL bytes). @category Constants */
export const SNIFF_BYTES = 8192

/** The input, as the model sends it. @category Schemas */
export const Input = Schema.Struct({
  file_path: Schema.String.annotations({ description: "The file to read: an absolute path (a relative one resolves against the session's working directory)" }),
  offset: Schema.optional(
    Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)).annotations({
      description: "The first line to read (1 is the first line): read a range, such as around a Grep match"
    })
  ),
  limit: Schema.optional(
    Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)).annotations({
      description: "How many lines to read from offset"
    })
  )
})

const megabytes = (bytes: number): string => `${(bytes / 1_048_576).toFixed(2).replace(/\.?0+$/, "")} MB`

const description = Texts.Read({
  DEFAULT_LIMIT,
  MAX_LINE_LENGTH,
  MAX_OUTPUT_TOKENS,
  MAX_IMAGE_SIZE: megabytes(MAX_IMAGE_BYTES),
  MAX_IMAGE_SIDE,
  MAX_PDF_SIZE: megabytes(MAX_PDF_BYTES),
  MAX_PDF_PAGES
})

/** Whether these bytes look binary: a NUL byte in the first 8 KB. @category Utils */
export const isBinary = (bytes: Uint8Array): boolean => {
  const n = Math.min(bytes.length, SNIFF_BYTES)
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

/** Base64 of bytes, without copying them (Node's encoder: Effect's pure one takes seconds on megabytes). */
const base64 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")

const shrinkHint = "Make a smaller copy with an image tool in Bash (for example `convert in.png -resize 50% out.png`) and read that."

/** Fails when an image or PDF of `size` bytes is more than the API takes. */
const checkSize = (file: string, kind: MediaType.Sniffed, size: number): Effect.Effect<void, Tool.ToolError> => {
  if (kind._tag === "Image" && size > MAX_IMAGE_BYTES) {
    return Tool.fail(
      `${file} is a ${kind.name} image of ${megabytes(size)}; Read returns images up to ${megabytes(MAX_IMAGE_BYTES)} ` +
        `(the API takes 5 MB per image, base64 encoded). ${shrinkHint}`
    )
  }
  if (kind._tag === "Pdf" && size > MAX_PDF_BYTES) {
    return Tool.fail(
      `${file} is a PDF of ${megabytes(size)}; Read returns PDFs up to ${megabytes(MAX_PDF_BYTES)}. ` +
        "Split it (for example `qpdf in.pdf --pages . 1-20 -- part.pdf`) or extract its text (`pdftotext in.pdf out.txt`) in Bash, and read the parts."
    )
  }
  return Effect.void
}

/** An image as the block the model sees, or the reason it cannot be sent. */
const imageOutput = (
  file: string,
  bytes: Uint8Array,
  image: Extract<MediaType.Sniffed, { _tag: "Image" }>
): Effect.Effect<Tool.ToolOutput, Tool.ToolError> => {
  const size = MediaType.imageSize(bytes, image.mediaType)
  if (size !== undefined && (size.width > MAX_IMAGE_SIDE || size.height > MAX_IMAGE_SIDE)) {
    return Tool.fail(
      `${file} is a ${image.name} image of ${size.width}×${size.height} pixels; the API takes at most ${MAX_IMAGE_SIDE} pixels on a side. ${shrinkHint}`
    )
  }
  return Effect.succeed([
    new Message.ImageBlock({ source: { type: "base64", media_type: image.mediaType, data: base64(bytes) } })
  ])
}

/** A PDF as the block the model sees, or the reason it cannot be sent. */
const pdfOutput = (file: string, bytes: Uint8Array): Effect.Effect<Tool.ToolOutput, Tool.ToolError> => {
  const pages = MediaType.pdfPageCount(bytes)
  if (pages !== undefined && pages > MAX_PDF_PAGES) {
    return Tool.fail(
      `${file} is a PDF of about ${pages} pages; the API reads at most ${MAX_PDF_PAGES} pages at once. ` +
        "Split it (for example `qpdf in.pdf --pages . 1-50 -- part.pdf`) or extract its text (`pdftotext in.pdf out.txt`) in Bash, and read the parts."
    )
  }
  return Effect.succeed([
    new Message.DocumentBlock({ source: { type: "base64", media_type: "application/pdf", data: base64(bytes) } })
  ])
}

/** The Read tool over the platform's file system. @category Constructors */
export const make: Effect.Effect<Tool.Tool<typeof Input.Type, SessionState.SessionState>, never, FileSystem.FileSystem | Path.Path> = Effect.gen(
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
          const cannotRead = (e: { readonly message: string }) => Tool.fail(`Cannot read ${file}: ${e.message}`)
          const head = yield* Effect.scoped(Effect.flatMap(fs.open(file), (f) => f.readAlloc(SNIFF_BYTES))).pipe(
            Effect.map(Option.getOrElse(() => new Uint8Array(0))),
            Effect.catchAll(cannotRead)
          )
          yield* FileState.record(file, info.mtime._tag === "Some" ? info.mtime.value.getTime() : 0)
          const size = Number(info.size)
          const kind = MediaType.sniff(head)
          if (kind !== undefined) yield* checkSize(file, kind, size)
          if (kind === undefined && isBinary(head)) {
            return yield* Tool.fail(
              `${file} is a binary file (${size} bytes); Read reads text files, images (PNG, JPEG, GIF, WebP) and PDFs only. ` +
                "Inspect it with a shell command (for example `file` or `xxd | head`) instead."
            )
          }
          const bytes = yield* fs.readFile(file).pipe(Effect.catchAll(cannotRead))
          if (kind !== undefined) yield* checkSize(file, kind, bytes.length)
          if (kind?._tag === "Image") return yield* imageOutput(file, bytes, kind)
          if (kind?._tag === "Pdf") return yield* pdfOutput(file, bytes)
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
