/**
 * Where a session's journal goes: the record of everything non-deterministic that crossed its
 * boundary (see `JournalEntry`). Appending is synchronous, like `Ids.uuid`: a recorder appends
 * from inside a model stream, once per read, and an effect per line would cost more than the line.
 * `memory` keeps the entries (the testing layer's journal); `file` appends JSON lines to a file.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs"
import { dirname } from "node:path"
import * as JournalEntry from "./JournalEntry.js"

/** @category Models */
export interface Service {
  /** `Clock` milliseconds when the journal started (its header's `startedAt`). */
  readonly startedAt: number
  /** Appends one entry. */
  readonly append: (entry: JournalEntry.Entry) => void
  /** The entries appended so far, in order (a file journal keeps none in memory: empty). */
  readonly entries: () => ReadonlyArray<JournalEntry.Entry>
}

/** @category Context */
export class Journal extends Context.Tag("@keel/core/Journal")<Journal, Service>() {}

const header = (startedAt: number): JournalEntry.Entry => ({ type: "journal", version: JournalEntry.VERSION, startedAt })

/** A journal kept in memory, started at `startedAt` (`Clock` ms), its header written. @category Constructors */
export const memory = (startedAt: number): Service => {
  const entries: Array<JournalEntry.Entry> = [header(startedAt)]
  return Journal.of({ startedAt, append: (entry) => void entries.push(entry), entries: () => entries })
}

/** A journal in memory, for tests and replays: read it back with `entries`. @category Layers */
export const layerMemory: Layer.Layer<Journal> = Layer.effect(Journal, Effect.map(Clock.currentTimeMillis, memory))

/** Why a journal file cannot be written. @category Errors */
export class JournalUnwritable extends Schema.TaggedError<JournalUnwritable>("@keel/JournalUnwritable")(
  "JournalUnwritable",
  { path: Schema.String, message: Schema.String }
) {}

/**
 * A journal appending JSON lines to `path` (its folder made if missing), the file held open for
 * the layer's lifetime and each line written whole with one `write`, so a crash loses at most the
 * line being written and never leaves two lines merged.
 *
 * @category Layers
 */
export const layerFile = (path: string): Layer.Layer<Journal, JournalUnwritable> =>
  Layer.scoped(
    Journal,
    Effect.gen(function*() {
      const fd = yield* Effect.acquireRelease(
        Effect.try({
          try: () => {
            mkdirSync(dirname(path), { recursive: true })
            return openSync(path, "a")
          },
          catch: (e) => new JournalUnwritable({ path, message: (e as Error).message })
        }),
        (fd) => Effect.sync(() => closeSync(fd))
      )
      const startedAt = yield* Clock.currentTimeMillis
      const append = (entry: JournalEntry.Entry) => {
        writeSync(fd, JournalEntry.encodeLine(entry) + "\n")
      }
      append(header(startedAt))
      return Journal.of({ startedAt, append, entries: () => [] })
    })
  )
