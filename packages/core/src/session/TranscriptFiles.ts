/**
 * The file operations a `SessionStore` is made of ({@link Files}), and their two backends: the
 * file system ({@link fileSystemFiles}: appends and flushes through a `TranscriptAppender`) and
 * memory ({@link memoryFiles}, for tests and embedders that keep transcripts elsewhere).
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as nodePath from "node:path"
import * as SessionLock from "./SessionLock.js"
import * as TranscriptAppender from "./TranscriptAppender.js"
import { type SessionLocked, TranscriptIoError } from "./TranscriptError.js"

/** The file operations a store is made of (see {@link make}). @category Models */
export interface Files {
  /** The file's bytes, or `None` when there is no such file. */
  readonly read: (file: string) => Effect.Effect<Option.Option<Uint8Array>, TranscriptIoError>
  /** The first `bytes` bytes (fewer for a shorter file). */
  readonly head: (file: string, bytes: number) => Effect.Effect<Uint8Array, TranscriptIoError>
  /** Appends `data`; with `create`, creates the file exclusively and answers `false` if it exists. */
  readonly append: (file: string, data: Uint8Array, create: boolean) => Effect.Effect<boolean, TranscriptIoError>
  readonly sync: (file: string) => Effect.Effect<void, TranscriptIoError>
  readonly truncate: (file: string, length: number) => Effect.Effect<void, TranscriptIoError>
  /** The `.jsonl` files of a folder (none when it does not exist), newest first where the backend can tell. */
  readonly list: (
    directory: string
  ) => Effect.Effect<ReadonlyArray<{ readonly name: string; readonly modifiedAt: number; readonly size: number }>, TranscriptIoError>
  /** Holds the write lock of session `sessionId`, whose transcript is `file`, for the life of the scope. */
  readonly lock: (sessionId: string, file: string) => Effect.Effect<void, SessionLocked | TranscriptIoError, Scope.Scope>
}

const ioError = (file: string, operation: string) => (error: { readonly message: string }) =>
  new TranscriptIoError({ file, operation, reason: error.message })

const isSystem = (error: unknown, reason: string): boolean =>
  typeof error === "object" && error !== null && (error as { _tag?: unknown })._tag === "SystemError" &&
  (error as { reason?: unknown }).reason === reason

/**
 * The file operations on the `@effect/platform` `FileSystem`, but for appends and flushes, which go
 * through a `TranscriptAppender` (a file held open between flushes, written without the thread pool).
 *
 * @category Constructors
 */
export const fileSystemFiles = (fs: FileSystem.FileSystem, path: Path.Path): Files => {
  const appender = TranscriptAppender.make()
  return {
    read: (file) =>
      fs.readFile(file).pipe(
        Effect.map(Option.some),
        Effect.catchAll((e) => (isSystem(e, "NotFound") ? Effect.succeed(Option.none()) : Effect.fail(ioError(file, "read")(e))))
      ),
    head: (file, bytes) =>
      Effect.scoped(Effect.flatMap(fs.open(file, { flag: "r" }), (f) => f.readAlloc(bytes))).pipe(
        Effect.map(Option.getOrElse(() => new Uint8Array())),
        Effect.mapError(ioError(file, "read"))
      ),
    append: appender.append,
    sync: appender.sync,
    truncate: (file, length) => fs.truncate(file, length).pipe(Effect.mapError(ioError(file, "truncate"))),
    list: (directory) =>
      Effect.gen(function*() {
        const names = yield* fs.readDirectory(directory).pipe(
          Effect.catchIf((e) => isSystem(e, "NotFound"), () => Effect.succeed([] as Array<string>))
        )
        const out: Array<{ name: string; modifiedAt: number; size: number }> = []
        for (const name of names) {
          if (!name.endsWith(".jsonl")) continue
          const info = yield* Effect.option(fs.stat(path.join(directory, name)))
          if (Option.isNone(info) || info.value.type !== "File") continue
          out.push({
            name,
            modifiedAt: Option.match(info.value.mtime, { onNone: () => 0, onSome: (d) => d.getTime() }),
            size: Number(info.value.size)
          })
        }
        return out
      }).pipe(Effect.mapError(ioError(directory, "list"))),
    lock: SessionLock.acquire
  }
}

/**
 * Files in memory: a map from path to bytes, with modification times from the `Clock` (ties
 * broken by the order of writes). For tests and embedders that keep transcripts elsewhere.
 *
 * @category Constructors
 */
export const memoryFiles = (): Files => {
  const store = new Map<string, { data: Uint8Array; modifiedAt: number; sequence: number }>()
  let sequence = 0
  const lock = SessionLock.memory()
  const missing = (file: string, operation: string) =>
    new TranscriptIoError({ file, operation, reason: "no such file" })
  return {
    read: (file) => Effect.sync(() => Option.fromNullable(store.get(file)?.data)),
    head: (file, bytes) =>
      Effect.suspend(() => {
        const f = store.get(file)
        return f === undefined ? Effect.fail(missing(file, "read")) : Effect.succeed(f.data.slice(0, bytes))
      }),
    append: (file, data, create) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const f = store.get(file)
        if (create && f !== undefined) return false
        const before = f?.data ?? new Uint8Array()
        const next = new Uint8Array(before.length + data.length)
        next.set(before)
        next.set(data, before.length)
        store.set(file, { data: next, modifiedAt: now, sequence: ++sequence })
        return true
      }),
    sync: () => Effect.void,
    truncate: (file, length) =>
      Effect.suspend(() => {
        const f = store.get(file)
        if (f === undefined) return Effect.fail(missing(file, "truncate"))
        store.set(file, { ...f, data: f.data.slice(0, length) })
        return Effect.void
      }),
    list: (directory) =>
      Effect.sync(() => {
        const out: Array<{ name: string; modifiedAt: number; size: number; sequence: number }> = []
        for (const [file, f] of store) {
          if (nodePath.dirname(file) !== directory || !file.endsWith(".jsonl")) continue
          out.push({ name: nodePath.basename(file), modifiedAt: f.modifiedAt, size: f.data.length, sequence: f.sequence })
        }
        // Same-millisecond writes (a TestClock) are ordered by the order of writes.
        return out.sort((a, b) => b.modifiedAt - a.modifiedAt || b.sequence - a.sequence)
          .map((f) => ({ name: f.name, modifiedAt: f.modifiedAt, size: f.size }))
      }),
    lock
  }
}
