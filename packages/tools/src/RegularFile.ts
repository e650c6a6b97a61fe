/**
 * Opening a file for reading only when it is a regular file. `open` on a named pipe blocks until a
 * writer comes (for ever, if none does), and reading a device or a socket may never end: a path
 * that is not a regular file is refused by `stat` before it is opened, and the open itself is
 * non-blocking (`O_NONBLOCK`) and checked again on the descriptor (`fstat`), so a file swapped for
 * a pipe between the two cannot hang the read either.
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

/** An open regular file: its handle and its size when opened. @category Models */
export interface Opened {
  readonly handle: fs.promises.FileHandle
  readonly stats: fs.Stats
}

/**
 * Opens `file` for reading, in `Scope` (closed with it), only if it is a regular file: checked by
 * `stat` first, opened with `O_NONBLOCK`, and checked again with `fstat` on the descriptor.
 *
 * @category Opening
 */
export const open = (file: string): Effect.Effect<Opened, NotRegularFile | FileAccessError, Scope.Scope> =>
  Effect.gen(function*() {
    const before = yield* Effect.tryPromise({ try: () => fs.promises.stat(file), catch: accessError(file) })
    if (!before.isFile()) return yield* new NotRegularFile({ path: file, kind: kindOf(before) })
    const handle = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => fs.promises.open(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK),
        catch: accessError(file)
      }),
      (h) => Effect.promise(() => h.close().catch(() => undefined))
    )
    const stats = yield* Effect.tryPromise({ try: () => handle.stat(), catch: accessError(file) })
    if (!stats.isFile()) return yield* new NotRegularFile({ path: file, kind: kindOf(stats) })
    return { handle, stats }
  })

/**
 * Reads up to `length` bytes from `position` into `buffer` (from its start): how many were read (0
 * at the end of the file).
 *
 * @category Reading
 */
export const readAt = (
  opened: Opened,
  file: string,
  buffer: Uint8Array,
  length: number,
  position: number
): Effect.Effect<number, FileAccessError> =>
  Effect.tryPromise({
    try: () => opened.handle.read(buffer, 0, Math.min(length, buffer.length), position).then((r) => r.bytesRead),
    catch: accessError(file)
  })

/** The first `max` bytes of the file (all of it when shorter). @category Reading */
export const readHead = (opened: Opened, file: string, max: number): Effect.Effect<Uint8Array, FileAccessError> =>
  Effect.gen(function*() {
    const buffer = new Uint8Array(max)
    let got = 0
    for (;;) {
      const n = yield* readAt(opened, file, buffer.subarray(got), max - got, got)
      if (n === 0 || got + n >= max) return buffer.subarray(0, got + n)
      got += n
    }
  })
