/**
 * A range of a text file's lines, read through a fixed buffer from an open regular file
 * (`RegularFile`): only the lines of the range are kept (each cut at a byte bound, decoded whole so
 * a character split across two reads stays whole), the others only counted on the raw bytes, and
 * reading stops as soon as the range is read and the count is done or no longer wanted. Reading
 * lines 1-5 of a 600 MB log reads the first buffer, not the file.
 *
 * The count of the file's lines goes on past the range while at most `countBytes` bytes were read
 * (a normal file is counted whole, so the model is told "lines 1-100 of 2,000"); past that, `total`
 * is the lines seen so far and `complete` is false. Reading also stops once the kept lines pass
 * `maxKeptBytes` (they are over the caller's cap already).
 *
 * Lines end at `\n`; a `\r` before it is dropped; a last line without a newline counts, an empty
 * one after the last newline does not (as `split(/\r?\n/)` with a trailing empty piece removed).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as RegularFile from "./RegularFile.js"

/** What {@link read} found. @category Models */
export interface Lines {
  /** The lines of the range, in order (fewer than asked when the file ends first, or at `maxKeptBytes`). */
  readonly lines: ReadonlyArray<string>
  /** Which of them were cut at `maxLineBytes` (indexes into `lines`). */
  readonly cut: ReadonlySet<number>
  /** How many lines the file has, or (when `complete` is false) how many were seen. */
  readonly total: number
  /** Whether the whole file was read, so `total` is its line count. */
  readonly complete: boolean
  /** Bytes read. */
  readonly bytesRead: number
}

/** Options of {@link read}. @category Models */
export interface Options {
  /** The first line wanted, from 1. */
  readonly first: number
  /** How many lines are wanted. */
  readonly count: number
  /** Most bytes kept of one line (a longer line is kept cut, and its index is in `cut`). */
  readonly maxLineBytes: number
  /** Read on past the range, to count the file's lines, while at most this many bytes were read (default: all). */
  readonly countBytes?: number | undefined
  /** Stop once the kept lines hold more bytes than this (default: no bound but the range's). */
  readonly maxKeptBytes?: number | undefined
  /** Bytes per read (default 256 KiB). */
  readonly chunkSize?: number | undefined
}

const decoder = new TextDecoder("utf-8")

/** Lines `first`..`first + count - 1` of the open file and its line count (see {@link Options}). @category Reading */
export const read = (
  opened: RegularFile.Opened,
  file: string,
  options: Options
): Effect.Effect<Lines, RegularFile.FileAccessError> =>
  Effect.gen(function*() {
    const last = options.first + options.count - 1
    const countBytes = options.countBytes ?? Infinity
    const maxKept = options.maxKeptBytes ?? Infinity
    const inRange = (line: number) => line >= options.first && line <= last
    let ended = 0
    let parts: Array<Uint8Array> = []
    let kept = 0
    let keptTotal = 0
    let overflow = false
    let open = false
    const lines: Array<string> = []
    const cut = new Set<number>()

    const keep = (bytes: Uint8Array) => {
      if (bytes.length === 0) return
      open = true
      if (!inRange(ended + 1)) return
      const room = options.maxLineBytes - kept
      if (bytes.length > room) overflow = true
      const slice = bytes.length > room ? bytes.subarray(0, Math.max(0, room)) : bytes
      if (slice.length === 0) return
      // A copy: the buffer is reused by the next read.
      parts.push(slice.slice())
      kept += slice.length
    }
    const endLine = () => {
      if (inRange(ended + 1)) {
        const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts)
        let text = decoder.decode(bytes)
        if (text.endsWith("\r")) text = text.slice(0, -1)
        if (overflow) cut.add(lines.length)
        lines.push(text)
        keptTotal += bytes.length
      }
      ended++
      parts = []
      kept = 0
      overflow = false
      open = false
    }
    const step = (chunk: Uint8Array) => {
      let from = 0
      // Past the range, or before it with no byte kept: lines are only counted.
      while (parts.length === 0 && !inRange(ended + 1)) {
        const nl = chunk.indexOf(10, from)
        if (nl === -1) break
        ended++
        open = false
        from = nl + 1
      }
      for (;;) {
        const nl = chunk.indexOf(10, from)
        if (nl === -1) break
        keep(chunk.subarray(from, nl))
        endLine()
        from = nl + 1
      }
      keep(chunk.subarray(from))
    }

    // No larger than the file as opened (and a byte more, to see its end): a small file's read
    // allocates a few hundred bytes, not a chunk. A file that grew is read on in more chunks.
    const buffer = new Uint8Array(Math.max(1, Math.min(options.chunkSize ?? 262_144, opened.stats.size + 1)))
    let position = 0
    for (;;) {
      const n = yield* RegularFile.readAt(opened, file, buffer, buffer.length, position)
      if (n === 0) {
        if (open) endLine()
        return { lines, cut, total: ended, complete: true, bytesRead: position }
      }
      position += n
      step(buffer.subarray(0, n))
      const rangeDone = ended >= last || keptTotal > maxKept
      const atEnd = position >= opened.stats.size
      if (rangeDone && !atEnd && (position >= countBytes || keptTotal > maxKept)) {
        return { lines, cut, total: ended, complete: false, bytesRead: position }
      }
    }
  })
