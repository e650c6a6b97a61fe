/**
 * Opening a file for reading only when it is a regular file. `open` on a named pipe blocks until a
 * writer comes (for ever, if none does), and reading a device or a socket may never end: a path
 * that is not a regular file is refused by `stat` before it is opened, and the open itself is
 * non-blocking (`O_NONBLOCK`) and checked again on the descriptor (`fstat`), so a file swapped for
 * a pipe between the two cannot hang the read either.
 *
 * The calls are synchronous on the descriptor, except reads past the first {@link SYNC_READ_BYTES}
 * of a file: on a regular file each is a few microseconds from the page cache, where a round trip
 * through libuv's thread pool cost ~40 µs of work and a wait for the event loop (a small file's
 * Read made nine of them). A read far into a large file (counting its lines) still goes through
 * the thread pool, so it does not hold the event loop for long.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"

/** A path that exists but is not a regular file (a pipe, socket, device or directory). @category Errors */
export class NotRegularFile extends Schema.TaggedError<NotRegularFile>("@keel/tools/RegularFile/NotRegularFile")(
  "NotRegularFile",
  { path: Schema.String, kind: Schema.String }
) {
  override get message(): string {
    return `${this.path} is ${this.kind}, not a regular file; file tools read and write regular files only ` +
      "(reading a pipe, socket or device could wait for ever)."
  }
}

/** The file could not be opened or read (missing, no permission, I/O error). @category Errors */
export class FileAccessError extends Schema.TaggedError<FileAccessError>("@keel/tools/RegularFile/FileAccessError")(
  "FileAccessError",
  { path: Schema.String, code: Schema.optional(Schema.String), reason: Schema.String }
) {
  override get message(): string {
    return `Cannot read ${this.path}: ${this.reason}`
  }
}

/** What kind of thing `stats` describes, with an article ("a named pipe (FIFO)"). @category Utils */
export const kindOf = (stats: fs.Stats): string =>
  stats.isFile()
    ? "a regular file"
    : stats.isDirectory()
    ? "a directory"
    : stats.isFIFO()
    ? "a named pipe (FIFO)"
    : stats.isSocket()
    ? "a socket"
    : stats.isCharacterDevice()
    ? "a character device"
    : stats.isBlockDevice()
    ? "a block device"
    : "not a regular file"

const accessError = (file: string) => (e: unknown) => {
  const err = e as NodeJS.ErrnoException
  return new FileAccessError({ path: file, ...(err.code === undefined ? {} : { code: err.code }), reason: err.message ?? String(e) })
}

/**
 * Fails with {@link NotRegularFile} when `file` (followed through symlinks) exists and is not a
 * regular file; succeeds when it is one or does not exist (a file about to be created).
 *
 * @category Checks
 */
export const checkTarget = (file: string): Effect.Effect<void, NotRegularFile> =>
  Effect.flatMap(
    Effect.sync(() => fs.statSync(file, { throwIfNoEntry: false })),
    (stats) => stats === undefined || stats.isFile() ? Effect.void : Effect.fail(new NotRegularFile({ path: file, kind: kindOf(stats) }))
  )

/**
 * Bytes from a file's start read synchronously (1 MiB); reads past them go through the thread
 * pool. A Read without a range reads at most 256 KB of text, so it never waits on the pool.
 *
 * @category Constants
 */
export const SYNC_READ_BYTES = 1_048_576

/** An open regular file: its descriptor and its `fstat` when opened. @category Models */
export interface Opened {
  readonly fd: number
  readonly stats: fs.Stats
}

/**
 * The `stat` of `file` (followed through symlinks), or `undefined` when it does not exist; any
 * other failure (no permission, a loop of links) fails with {@link FileAccessError}.
 *
 * @category Checks
 */
export const stat = (file: string): Effect.Effect<fs.Stats | undefined, FileAccessError> =>
  Effect.try({ try: () => fs.statSync(file, { throwIfNoEntry: false }), catch: accessError(file) })

/**
 * Opens `file` for reading, in `Scope` (closed with it), only if it is a regular file: checked by
 * `stat` first, opened with `O_NONBLOCK`, and checked again with `fstat` on the descriptor.
 *
 * @category Opening
 */
export const open = (file: string): Effect.Effect<Opened, NotRegularFile | FileAccessError, Scope.Scope> =>
  Effect.gen(function*() {
    const before = yield* Effect.try({ try: () => fs.statSync(file), catch: accessError(file) })
    if (!before.isFile()) return yield* new NotRegularFile({ path: file, kind: kindOf(before) })
    const fd = yield* Effect.acquireRelease(
      Effect.try({ try: () => fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK), catch: accessError(file) }),
      (fd) =>
        Effect.sync(() => {
          try {
            fs.closeSync(fd)
          } catch {
            // Closed already.
          }
        })
    )
    const stats = yield* Effect.try({ try: () => fs.fstatSync(fd), catch: accessError(file) })
    if (!stats.isFile()) return yield* new NotRegularFile({ path: file, kind: kindOf(stats) })
    return { fd, stats }
  })

/**
 * Reads up to `length` bytes from `position` into `buffer` (from its start): how many were read (0
 * at the end of the file). Synchronous within the first {@link SYNC_READ_BYTES}, through the
 * thread pool past them.
 *
 * @category Reading
 */
export const readAt = (
  opened: Opened,
  file: string,
  buffer: Uint8Array,
  length: number,
  position: number
): Effect.Effect<number, FileAccessError> => {
  const size = Math.min(length, buffer.length)
  return position + size <= SYNC_READ_BYTES
    ? Effect.try({ try: () => fs.readSync(opened.fd, buffer, 0, size, position), catch: accessError(file) })
    // Not interruptible: the scope closes the descriptor, never under a read in flight.
    : Effect.uninterruptible(Effect.async<number, FileAccessError>((resume) =>
      fs.read(opened.fd, buffer, 0, size, position, (error, bytesRead) =>
        resume(error === null ? Effect.succeed(bytesRead) : Effect.fail(accessError(file)(error))))
    ))
}

/**
 * The first `max` bytes of the file (all of it when shorter). The buffer starts at the size the
 * file had when opened (and one byte more, to see the end), and grows only if the file did.
 *
 * @category Reading
 */
export const readHead = (opened: Opened, file: string, max: number): Effect.Effect<Uint8Array, FileAccessError> =>
  Effect.gen(function*() {
    let buffer = new Uint8Array(Math.min(max, opened.stats.size + 1))
    let got = 0
    for (;;) {
      if (got === buffer.length) {
        const grown = new Uint8Array(Math.min(max, buffer.length * 2))
        grown.set(buffer)
        buffer = grown
      }
      const n = yield* readAt(opened, file, buffer.subarray(got), buffer.length - got, got)
      if (n === 0 || got + n >= max) return buffer.subarray(0, got + n)
      got += n
    }
  })
