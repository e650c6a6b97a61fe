/**
 * One output stream of a process (Bash's stdout or stderr) in bounded memory, however much it
 * prints: the first and last {@link KEEP_CHARS} characters are kept as text, and once the output
 * outgrows what is kept, all of it (from its first byte) is written to a spill file, streamed, with
 * the writes awaited so a fast producer waits for the disk. The spill stops at {@link MAX_SPILL_BYTES}
 * (and says so). {@link render} gives the text the model sees within a budget: the whole output, or
 * its head and tail around a note saying how much was cut and where the full output is.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as PlatformError from "@effect/platform/Error"
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import * as path from "node:path"

/** Characters kept at each end (the head and the tail): half of Bash's 30,000-character cap each. @category Constants */
export const KEEP_CHARS = 15_000
/** Most bytes written to a spill file (1 GiB); the rest is only counted. @category Constants */
export const MAX_SPILL_BYTES = 1_073_741_824

/** Options of {@link make}. @category Models */
export interface Options {
  /** Where the full output goes once it outgrows what is kept (created then, not before). */
  readonly spillPath: string
  /** Whether the spill file's folder may be written (checked after it is made); default: yes. */
  readonly trustFolder?: (() => boolean) | undefined
  /** Characters kept at each end (default {@link KEEP_CHARS}). */
  readonly keepChars?: number | undefined
  /** Most bytes spilled (default {@link MAX_SPILL_BYTES}). */
  readonly maxSpillBytes?: number | undefined
}

/** The output once the stream ended. @category Models */
export interface Captured {
  /** The whole text, while it is at most twice `keepChars` characters. */
  readonly whole?: string | undefined
  /** Its first `keepChars` characters, and its last. */
  readonly head: string
  readonly tail: string
  /** Characters of the whole output. */
  readonly chars: number
  /** Bytes of the whole output, and its newlines. */
  readonly bytes: number
  readonly lines: number
  /** The spill file, when one was written: its path and whether it holds the whole output. */
  readonly spill?: { readonly path: string; readonly complete: boolean } | undefined
}

/** A stream's collector: {@link Collector.write} each chunk, then {@link Collector.end}. @category Models */
export interface Collector {
  readonly write: (chunk: Uint8Array) => Effect.Effect<void>
  /** Ends the stream: what it printed. */
  readonly end: Effect.Effect<Captured>
  /** Writes the spill file now if it was not (the output is to be cut shorter than kept): what it printed. */
  readonly spill: Effect.Effect<Captured>
}

const countNewlines = (bytes: Uint8Array): number => {
  let n = 0
  for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) n++
  return n
}

/**
 * A collector writing its spill file with `fs` (opened in `Scope`, closed with it). A failed spill
 * (full disk, no folder) is not the command's failure: the output is still kept at both ends and the
 * note says the spill is incomplete.
 *
 * @category Constructors
 */
export const make = (options: Options): Effect.Effect<Collector, never, FileSystem.FileSystem | Scope.Scope> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const scope = yield* Effect.scope
    const keep = options.keepChars ?? KEEP_CHARS
    const maxSpill = options.maxSpillBytes ?? MAX_SPILL_BYTES
    const decoder = new TextDecoder("utf-8")
    let head = ""
    let tail: Array<string> = []
    let tailChars = 0
    let chars = 0
    let bytes = 0
    let lines = 0
    // The raw bytes while the output is kept whole, for the spill file if it outgrows that.
    let early: Array<Uint8Array> | undefined = []
    let file: FileSystem.File | undefined
    let spilled = 0
    let spillOk = true

    const addText = (text: string) => {
      chars += text.length
      if (head.length < keep) {
        const room = keep - head.length
        head += text.slice(0, room)
        text = text.slice(room)
        if (text.length === 0) return
      }
      tail.push(text)
      tailChars += text.length
      if (tailChars > 2 * keep) {
        const joined = tail.join("").slice(-keep)
        tail = [joined]
        tailChars = joined.length
      }
    }

    const spillWrite = (chunk: Uint8Array): Effect.Effect<void, PlatformError.PlatformError> => {
      if (file === undefined || spilled >= maxSpill) return Effect.void
      const part = chunk.length > maxSpill - spilled ? chunk.subarray(0, maxSpill - spilled) : chunk
      spilled += part.length
      return file.writeAll(part)
    }

    const openSpill: Effect.Effect<void, PlatformError.PlatformError> = Effect.gen(function*() {
      const chunks = early ?? []
      early = undefined
      yield* fs.makeDirectory(path.dirname(options.spillPath), { recursive: true, mode: 0o700 })
      // A spill folder someone else made (in a shared temporary folder) is not written to.
      if (options.trustFolder !== undefined && !options.trustFolder()) {
        return yield* Effect.fail(new PlatformError.SystemError({
          reason: "PermissionDenied",
          module: "FileSystem",
          method: "open",
          pathOrDescriptor: options.spillPath,
          description: "the spill folder is not this user's alone"
        }))
      }
      // "wx": a new file only, never through a link someone planted.
      file = yield* fs.open(options.spillPath, { flag: "wx", mode: 0o600 }).pipe(Scope.extend(scope))
      for (const c of chunks) yield* spillWrite(c)
    })

    const guarded = (effect: Effect.Effect<void, PlatformError.PlatformError>) =>
      spillOk ? effect.pipe(Effect.catchAll(() => Effect.sync(() => void (spillOk = false)))) : Effect.void

    const write = (chunk: Uint8Array): Effect.Effect<void> =>
      Effect.suspend(() => {
        bytes += chunk.length
        lines += countNewlines(chunk)
        addText(decoder.decode(chunk, { stream: true }))
        if (early !== undefined) {
          // A copy: the stream may reuse the chunk's buffer.
          early.push(chunk.slice())
          return chars > 2 * keep ? guarded(openSpill) : Effect.void
        }
        return guarded(spillWrite(chunk))
      })

    const captured = (): Captured => {
      const rest = tail.join("")
      const wrote = file !== undefined || !spillOk
      return {
        whole: chars <= 2 * keep ? head + rest : undefined,
        head,
        tail: rest.slice(-keep),
        chars,
        bytes,
        lines,
        spill: wrote ? { path: options.spillPath, complete: spillOk && spilled === bytes } : undefined
      }
    }
    const end = Effect.sync(() => {
      addText(decoder.decode())
      return captured()
    })
    const spill = Effect.suspend(() => early !== undefined && bytes > 0 ? guarded(openSpill) : Effect.void).pipe(
      Effect.map(captured)
    )

    return { write, end, spill }
  })

/** Whether the captured output fits `max` characters whole. @category Rendering */
export const fits = (c: Captured, max: number): boolean => c.whole !== undefined && c.chars <= max

/**
 * The text the model sees of `c` in at most about `max` characters: the whole output, or its first
 * and last `max / 2` characters around a note of what was cut and where the full output is.
 *
 * @category Rendering
 */
export const render = (c: Captured, max: number): string => {
  if (c.whole !== undefined && c.chars <= max) return c.whole
  const half = Math.floor(max / 2)
  const first = (c.whole ?? c.head).slice(0, half)
  const last = (c.whole ?? c.tail).slice(-half)
  const cut = c.chars - first.length - last.length
  const size = `${c.bytes.toLocaleString("en-US")} bytes, ${c.lines.toLocaleString("en-US")} lines`
  const how = "read it with Read (offset and limit) or search it with Grep"
  const where = c.spill === undefined
    ? `the full output (${size}) could not be saved`
    : c.spill.complete
    ? `the full output (${size}) is in ${c.spill.path}: ${how}`
    : `the output (${size}) is in ${c.spill.path} only in part (saving stopped at its cap or at a write error): ${how}`
  return `${first}\n\n[... ${cut.toLocaleString("en-US")} characters cut from the middle of the output; ${where} ...]\n\n${last}`
}
