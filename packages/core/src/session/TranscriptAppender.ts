/**
 * Appending to transcript files without a thread-pool round trip per append: each file is held
 * open (`O_APPEND`) from its first append until its next flush, and appends are written with
 * `writeSync` on that descriptor. A small append to the page cache takes ~1 µs this way, where an
 * `open`/`write`/`close` through libuv's thread pool took ~40 µs of work and, with the event loop
 * busy, milliseconds of waiting on a tool round's critical path.
 *
 * Crash safety is the same as with asynchronous appends, and stricter in time: when `append`
 * returns, the bytes are in the kernel (a process killed after that keeps them; only a machine that
 * goes down before the flush can lose them). A failed or partial write closes the file and fails;
 * its caller (the recorder) then writes nothing more, so a torn entry is never followed by another.
 *
 * `sync` (once per turn) detaches the file's descriptor, then `fsync`s and closes it in the thread
 * pool: the next append opens the file again. Closing at each flush bounds the descriptors a
 * long-lived process holds to the sessions in the middle of a turn, needs no scope of its own, and
 * keeps what appends through a fresh `open` did: a transcript removed or moved between turns is
 * created again by the next one.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as nodePath from "node:path"
import { TranscriptIoError } from "./TranscriptError.js"

/** @category Models */
export interface Appender {
  /**
   * Appends `data` to `file`, whole; with `create`, creates the file (and its folder) exclusively
   * first and answers `false`, writing nothing, if it exists.
   */
  readonly append: (file: string, data: Uint8Array, create: boolean) => Effect.Effect<boolean, TranscriptIoError>
  /** Flushes `file` to disk (`fsync`) and closes it; the next append opens it again. */
  readonly sync: (file: string) => Effect.Effect<void, TranscriptIoError>
  /** How many files are held open now (for tests). */
  readonly openFiles: () => number
}

const reasonOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** Writes all of `data` at the end of `fd` (a regular file takes it in one write; a short one continues). */
const writeAll = (fd: number, data: Uint8Array): void => {
  let offset = 0
  while (offset < data.length) offset += fs.writeSync(fd, data, offset, data.length - offset)
}

/**
 * An appender over `node:fs`. Descriptors it holds are closed by `sync`, on a failed write, and (a
 * process that ends without a flush) by the system when the process exits.
 *
 * @category Constructors
 */
export const make = (): Appender => {
  const open = new Map<string, number>()

  const descriptor = (file: string, create: boolean): number | "exists" => {
    const held = open.get(file)
    // A file held open exists: an exclusive create of it fails as the `open` would.
    if (held !== undefined) return create ? "exists" : held
    let fd: number
    if (create) {
      fs.mkdirSync(nodePath.dirname(file), { recursive: true })
      try {
        fd = fs.openSync(file, "ax")
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "EEXIST") return "exists"
        throw e
      }
    } else {
      fd = fs.openSync(file, "a")
    }
    open.set(file, fd)
    return fd
  }

  const close = (file: string, fd: number) => {
    if (open.get(file) === fd) open.delete(file)
    try {
      fs.closeSync(fd)
    } catch {
      // Closed already.
    }
  }

  return {
    append: (file, data, create) =>
      Effect.try({
        try: () => {
          const fd = descriptor(file, create)
          if (fd === "exists") return false
          try {
            writeAll(fd, data)
          } catch (e) {
            close(file, fd)
            throw e
          }
          return true
        },
        catch: (e) => new TranscriptIoError({ file, operation: "write", reason: reasonOf(e) })
      }),
    sync: (file) =>
      Effect.async<void, TranscriptIoError>((resume) => {
        const done = (error: unknown) =>
          resume(error == null ? Effect.void : Effect.fail(new TranscriptIoError({ file, operation: "sync", reason: reasonOf(error) })))
        const flush = (fd: number) =>
          fs.fsync(fd, (synced) => fs.close(fd, (closed) => done(synced ?? closed)))
        const held = open.get(file)
        if (held !== undefined) {
          // Detached first: an append that comes while this flush runs opens its own descriptor.
          open.delete(file)
          return flush(held)
        }
        fs.open(file, "a", (error, fd) => (error != null ? done(error) : flush(fd)))
      }),
    openFiles: () => open.size
  }
}
