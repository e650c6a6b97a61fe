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
import * as Path from "@effect/platform/Path"
import { FileState, Message, type SessionState, TokenEstimate, Tool } from "@keel/core"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as FileLines from "./FileLines.js"
import * as MediaType from "./MediaType.js"
import * as RegularFile from "./RegularFile.js"
import * as Texts from "./text/Texts.generated.js"

/** Lines returned when no `limit` is given. @category Constants */
export const DEFAULT_LIMIT = 2000
/** Longest line returned; longer lines are cut. @category Constants */
export const MAX_LINE_LENGTH = 2000
/**
 * Most tokens (estimated as `TokenEstimate` does, a token per four characters) one Read returns by
 * default, as Claude Code; past that the call fails with the range to read instead.
 *
 * @category Constants
 */
export const DEFAULT_MAX_OUTPUT_TOKENS = 25_000
/** Largest text file read without `offset` or `limit` (256 KB, as Claude Code); a larger one needs a range. @category Constants */
export const MAX_BYTES_WITHOUT_RANGE = 262_144
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
/**
 * Most bytes read to count a text file's lines (64 MB): a larger file is read only as far as the
 * range asked for, and its count is given as unknown (or estimated, in a refusal).
 *
 * @category Constants
 */
export const MAX_BYTES_COUNTED = 67_108_864
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

const descriptionFor = (maxTokens: number): string =>
  Texts.Read({
    DEFAULT_LIMIT,
    MAX_LINE_LENGTH,
    MAX_OUTPUT_TOKENS: maxTokens,
    MAX_SIZE_WITHOUT_RANGE: `${MAX_BYTES_WITHOUT_RANGE / 1024} KB`,
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

/** One line `cat -n` style: its number, a tab, the line (cut at {@link MAX_LINE_LENGTH}, or marked cut already). */
const numberLine = (line: string, n: number, cut: boolean): string => {
  const text = cut || line.length > MAX_LINE_LENGTH ? line.slice(0, MAX_LINE_LENGTH) + "… [line truncated]" : line
  return `${String(n).padStart(6, " ")}\t${text}`
}

/** Formats lines `cat -n` style, numbering from `first` (`cut`: indexes of lines cut short already). @category Utils */
export const numberLines = (lines: ReadonlyArray<string>, first: number, cut: ReadonlySet<number> = new Set()): string => {
  const out: Array<string> = []
  for (let i = 0; i < lines.length; i++) out.push(numberLine(lines[i]!, first + i, cut.has(i)))
  return out.join("\n")
}

/** Estimated tokens of text, as `TokenEstimate` counts them. */
const tokensOf = (chars: number): number => Math.ceil(chars / TokenEstimate.CHARS_PER_TOKEN)

/** A round number of lines at most `n` (a multiple of 100 from 200, of 10 from 20), at least 1. */
const roundDown = (n: number): number =>
  n >= 200 ? Math.floor(n / 100) * 100 : n >= 20 ? Math.floor(n / 10) * 10 : Math.max(1, Math.floor(n))

/**
 * The refusal of a text file too large to read without a range: its size in bytes, lines and
 * estimated tokens, the cap, and a first range that fits (from the file's average line length).
 */
const tooLargeWhole = (file: string, bytes: number, lines: number, maxTokens: number, counted: boolean): string => {
  const perLine = bytes / Math.max(1, lines) + 8 // the number and tab of each line
  const fits = Math.min(DEFAULT_LIMIT, lines, roundDown((maxTokens * TokenEstimate.CHARS_PER_TOKEN * 0.9) / perLine))
  return `${file} is too large to read at once: ${bytes} bytes, ${counted ? "" : "about "}${lines} lines, about ${tokensOf(bytes)} tokens; ` +
    `Read reads at most ${MAX_BYTES_WITHOUT_RANGE} bytes without a range and returns at most ${maxTokens} tokens. ` +
    `Read it in parts with offset and limit: read lines 1-${fits} first (offset 1, limit ${fits}), then continue from ` +
    `offset ${fits + 1}. To find something in it, search it with Grep instead.`
}

/**
 * The refusal of a range whose numbered text is over the token cap: its size, the file's, the cap,
 * and the longest range from the same offset that fits (counted on the lines themselves).
 */
const tooLargeRange = (
  file: string,
  shown: FileLines.Lines,
  offset: number,
  chars: number,
  maxTokens: number
): string => {
  const budget = maxTokens * TokenEstimate.CHARS_PER_TOKEN
  let used = 0
  let fits = 0
  for (let i = 0; i < shown.lines.length; i++) {
    used += numberLine(shown.lines[i]!, offset + i, shown.cut.has(i)).length + 1
    if (used > budget) break
    fits++
  }
  const last = offset + shown.lines.length - 1
  const advice = fits === 0
    ? "Not even one line fits; raise the cap (KEEL_FILE_READ_MAX_OUTPUT_TOKENS) or inspect the file with Bash."
    : `Read lines ${offset}-${offset + fits - 1} first (offset ${offset}, limit ${fits}), then continue from offset ${offset + fits}.`
  return `Lines ${offset}-${last} of ${file} are about ${tokensOf(chars)} tokens, more than the ${maxTokens} tokens one Read ` +
    `returns (the file has ${shown.total} lines). ${advice} To find something in it, search it with Grep instead.`
}

/**
 * The structured result of a text read, in Claude Code's shape (`FileReadOutput` of type `text`):
 * the path, the lines read (cut lines as returned), where they start, how many, and the file's count.
 *
 * @category Models
 */
export interface TextResult {
  readonly type: "text"
  readonly file: {
    readonly filePath: string
    readonly content: string
    readonly numLines: number
    readonly startLine: number
    readonly totalLines: number
  }
}

/** The file's line count, or (not counted whole) an estimate from the lines seen in the bytes read. */
const linesOf = (shown: FileLines.Lines, size: number): number =>
  shown.complete || shown.bytesRead === 0 ? shown.total : Math.round((shown.total / shown.bytesRead) * size)

const textResult = (file: string, shown: FileLines.Lines, offset: number): TextResult => ({
  type: "text",
  file: { filePath: file, content: shown.lines.join("\n"), numLines: shown.lines.length, startLine: offset, totalLines: shown.total }
})

/**
 * `KEEL_FILE_READ_MAX_OUTPUT_TOKENS`, else Claude Code's `CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS`:
 * the most tokens one Read returns (default {@link DEFAULT_MAX_OUTPUT_TOKENS}).
 *
 * @category Configuration
 */
export const maxOutputTokensConfig: Config.Config<number> = Config.integer("KEEL_FILE_READ_MAX_OUTPUT_TOKENS").pipe(
  Config.orElse(() => Config.integer("CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS")),
  Config.validate({ message: "must be a positive whole number", validation: (n) => n >= 1 }),
  Config.withDefault(DEFAULT_MAX_OUTPUT_TOKENS)
)

/** Options of {@link makeWith}. @category Models */
export interface Options {
  /** The most tokens one Read returns (default {@link DEFAULT_MAX_OUTPUT_TOKENS}). */
  readonly maxOutputTokens?: number | undefined
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

/**
 * The Read tool over the platform's file system, with these options. It bounds its output itself
 * (lines, line length, tokens), so the tool result budget never replaces its results
 * (`maxResultChars: Infinity`).
 *
 * @category Constructors
 */
export const makeWith = (
  options: Options = {}
): Effect.Effect<Tool.Tool<typeof Input.Type, SessionState.SessionState>, never, Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const maxTokens = options.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS
    return Tool.make({
      name: "Read",
      description: descriptionFor(maxTokens),
      input: Input,
      isReadOnly: true,
      maxResultChars: Infinity,
      call: (input, context) =>
        Effect.scoped(Effect.gen(function*() {
          const file = path.resolve(context.cwd, input.file_path)
          const info = yield* RegularFile.stat(file).pipe(Effect.catchAll((e) => Tool.fail(e.message)))
          if (info === undefined) return yield* Tool.fail(`File does not exist: ${file}. The working directory is ${context.cwd}.`)
          if (info.isDirectory()) {
            return yield* Tool.fail(`${file} is a directory, not a file. List it with a shell or glob tool instead.`)
          }
          // Never opened unless regular: a named pipe, socket or device could block the read for ever.
          const opened = yield* RegularFile.open(file).pipe(Effect.catchAll((e) => Tool.fail(e.message)))
          const head = yield* RegularFile.readHead(opened, file, SNIFF_BYTES).pipe(Effect.catchAll((e) => Tool.fail(e.message)))
          // The mtime of the file as opened (the one read), as Edit and Write take it (a Date's ms).
          yield* FileState.record(file, opened.stats.mtime.getTime())
          const size = opened.stats.size
          const kind = MediaType.sniff(head)
          if (kind !== undefined) yield* checkSize(file, kind, size)
          if (kind === undefined && isBinary(head)) {
            return yield* Tool.fail(
              `${file} is a binary file (${size} bytes); Read reads text files, images (PNG, JPEG, GIF, WebP) and PDFs only. ` +
                "Inspect it with a shell command (for example `file` or `xxd | head`) instead."
            )
          }
          if (kind !== undefined) {
            // At most the cap, and one byte more to see a file that grew past it since its size was taken.
            const cap = kind._tag === "Image" ? MAX_IMAGE_BYTES : MAX_PDF_BYTES
            const bytes = yield* RegularFile.readHead(opened, file, cap + 1).pipe(Effect.catchAll((e) => Tool.fail(e.message)))
            yield* checkSize(file, kind, bytes.length)
            return yield* kind._tag === "Image" ? imageOutput(file, bytes, kind) : pdfOutput(file, bytes)
          }
          const ranged = input.offset !== undefined || input.limit !== undefined
          const offset = input.offset ?? 1
          const limit = input.limit ?? DEFAULT_LIMIT
          const whole = !ranged && size > MAX_BYTES_WITHOUT_RANGE
          const shown = yield* FileLines.read(opened, file, {
            // A file too large to read whole is only counted (up to a bound), for the refusal.
            first: offset,
            count: whole ? 0 : limit,
            maxLineBytes: MAX_LINE_LENGTH * 4,
            countBytes: MAX_BYTES_COUNTED,
            // Past this, the lines are over the token cap whatever their characters: enough to say what fits.
            maxKeptBytes: maxTokens * TokenEstimate.CHARS_PER_TOKEN * 4
          }).pipe(Effect.catchAll((e) => Tool.fail(e.message)))
          if (whole) return yield* Tool.fail(tooLargeWhole(file, size, linesOf(shown, size), maxTokens, shown.complete))
          if (shown.total === 0 && shown.complete) {
            return Tool.structured(`(${file} exists but is empty)`, textResult(file, shown, 1))
          }
          if (offset > shown.total) {
            return yield* Tool.fail(
              `${file} has ${shown.total} lines; offset ${offset} is past the end. Use an offset from 1 to ${shown.total}.`
            )
          }
          const body = numberLines(shown.lines, offset, shown.cut)
          if (tokensOf(body.length) > maxTokens) return yield* Tool.fail(tooLargeRange(file, shown, offset, body.length, maxTokens))
          const last = offset + shown.lines.length - 1
          const of = shown.complete
            ? `${shown.total}`
            : `a ${megabytes(size)} file, not counted to its end`
          return Tool.structured(
            last < shown.total || offset > 1 || !shown.complete
              ? `${body}\n\n(Lines ${offset}-${last} of ${of}. Use offset and limit to read other parts.)`
              : body,
            textResult(file, shown, offset)
          )
        }))
    })
  })

/** The Read tool, its token cap from {@link maxOutputTokensConfig} (an invalid value is logged and the default used). @category Constructors */
export const make: Effect.Effect<Tool.Tool<typeof Input.Type, SessionState.SessionState>, never, Path.Path> =
  Effect.flatMap(
    maxOutputTokensConfig.pipe(
      Effect.catchAll((e) =>
        Effect.as(Effect.logWarning(`Ignoring the Read token cap setting: ${e}`), DEFAULT_MAX_OUTPUT_TOKENS)
      )
    ),
    (maxOutputTokens) => makeWith({ maxOutputTokens })
  )
