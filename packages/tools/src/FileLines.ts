/**
 * A range of a text file's lines, read as a stream of chunks: only the lines of the range are kept
 * (each cut at a byte bound), the others only counted, so reading lines 1-100 of a 5 GB log holds
 * about 100 lines in memory, not the file. The whole file is still scanned to count its lines (the
 * model is told "lines 1-100 of 2,000,000"), which takes time in proportion to its size.
 *
 * Lines end at `\n`; a `\r` before it is dropped; a last line without a newline counts, an empty
 * one after the last newline does not (as `split(/\r?\n/)` with a trailing empty piece removed).
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as PlatformError from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

/** What {@link read} found. @category Models */
export interface Lines {
  /** The lines of the range, in order (fewer than asked when the file ends first). */
  readonly lines: ReadonlyArray<string>
  /** Which of them were cut at `maxLineBytes` (indexes into `lines`). */
  readonly cut: ReadonlySet<number>
  /** How many lines the file has. */
  readonly total: number
}

/** Options of {@link read}. @category Models */
export interface Options {
  /** The first line wanted, from 1. */
  readonly first: number
  /** How many lines are wanted. */
  readonly count: number
  /** Most bytes kept of one line (a longer line is kept cut, and its index is in `cut`). */
  readonly maxLineBytes: number
  /** Bytes per chunk read (default 64 KiB). */
  readonly chunkSize?: number | undefined
}

interface State {
  /** Lines ended so far. */
  ended: number
  /** The bytes kept of the current line (only when it is in the range), and how many. */
  parts: Array<Uint8Array>
  kept: number
  overflow: boolean
  /** Whether the current line has any byte yet (a last line without a newline counts). */
  open: boolean
  readonly lines: Array<string>
  readonly cut: Set<number>
}

const decoder = new TextDecoder("utf-8")

/** Lines `first`..`first + count - 1` of `file` and the file's line count, reading it as a stream. @category Reading */
export const read = (
  fs: FileSystem.FileSystem,
  file: string,
  options: Options
): Effect.Effect<Lines, PlatformError.PlatformError> => {
  const last = options.first + options.count - 1
  const inRange = (line: number) => line >= options.first && line <= last
  const keep = (s: State, bytes: Uint8Array) => {
    if (bytes.length === 0) return
    s.open = true
    if (!inRange(s.ended + 1)) return
    const room = options.maxLineBytes - s.kept
    if (bytes.length > room) s.overflow = true
    const slice = bytes.length > room ? bytes.subarray(0, Math.max(0, room)) : bytes
    if (slice.length === 0) return
    // A copy: the chunk's buffer may be reused by the stream.
    s.parts.push(slice.slice())
    s.kept += slice.length
  }
  const endLine = (s: State) => {
    if (inRange(s.ended + 1)) {
      const bytes = s.parts.length === 1 ? s.parts[0]! : Buffer.concat(s.parts)
      let text = decoder.decode(bytes)
      if (text.endsWith("\r")) text = text.slice(0, -1)
      if (s.overflow) s.cut.add(s.lines.length)
      s.lines.push(text)
    }
    s.ended++
    s.parts = []
    s.kept = 0
    s.overflow = false
    s.open = false
  }
  const step = (s: State, chunk: Uint8Array): State => {
    let from = 0
    // Past the range, or before it with no byte kept: lines are only counted.
    while (s.parts.length === 0 && !inRange(s.ended + 1)) {
      const nl = chunk.indexOf(10, from)
      if (nl === -1) break
      s.ended++
      s.open = false
      from = nl + 1
    }
    for (;;) {
      const nl = chunk.indexOf(10, from)
      if (nl === -1) break
      keep(s, chunk.subarray(from, nl))
      endLine(s)
      from = nl + 1
    }
    keep(s, chunk.subarray(from))
    return s
  }
  const initial: State = { ended: 0, parts: [], kept: 0, overflow: false, open: false, lines: [], cut: new Set() }
  return fs.stream(file, { chunkSize: options.chunkSize ?? 65_536 }).pipe(
    Stream.runFold(initial, step),
    Effect.map((s) => {
      if (s.open) endLine(s)
      return { lines: s.lines, cut: s.cut, total: s.ended }
    })
  )
}
