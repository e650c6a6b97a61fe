/**
 * What the file tools know of the files in a session: which were read (or written), and their
 * modification time then. Edit and overwriting Write require a read whose mtime still matches, so
 * the model never writes over a file it has not seen or that changed under it. Kept in the
 * session's `fileState` Ref: the session is a requirement of both operations.
 *
 * Recording costs O(1), not a copy of the map per read (a session that read 1,000 files copied
 * 1,000 entries per read): the Ref holds a {@link Files}, one version of a map that each record
 * extends in place. Only the latest version of a lineage reads as a map; an older one still tells
 * which paths were recorded after it ({@link changedSince}), which is all the transcript asks of
 * the version it last wrote.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { SessionState } from "../session/SessionState.js"

/** The map and the log of recorded paths that the versions of one lineage share. */
interface Lineage {
  readonly map: Map<string, number>
  /** Each path recorded with a new mtime, in order (a path may repeat). */
  readonly log: Array<string>
  /** The newest version: the only one whose reads are the map's. */
  latest: Files | undefined
}

/**
 * One version of the session's file state: reads (`get`, iteration) see the lineage's map, so they
 * are meant on the latest version (the one in the Ref); `logged` is how many records it includes.
 *
 * @category Models
 */
export class Files implements ReadonlyMap<string, number> {
  /** @internal */
  constructor(readonly lineage: Lineage, readonly logged: number) {}
  get size(): number {
    return this.lineage.map.size
  }
  get(path: string): number | undefined {
    return this.lineage.map.get(path)
  }
  has(path: string): boolean {
    return this.lineage.map.has(path)
  }
  forEach(f: (mtime: number, path: string, map: ReadonlyMap<string, number>) => void): void {
    this.lineage.map.forEach((mtime, path) => f(mtime, path, this))
  }
  entries(): MapIterator<[string, number]> {
    return this.lineage.map.entries()
  }
  keys(): MapIterator<string> {
    return this.lineage.map.keys()
  }
  values(): MapIterator<number> {
    return this.lineage.map.values()
  }
  [Symbol.iterator](): MapIterator<[string, number]> {
    return this.lineage.map.entries()
  }
}

/**
 * `files` with `path` at `mtimeMs`: the same version when nothing changes; the latest version of a
 * lineage extended in place; any other map (a plain `Map`, an older version) copied into a new lineage.
 *
 * @category Combinators
 */
export const set = (files: ReadonlyMap<string, number>, path: string, mtimeMs: number): Files => {
  const latest = files instanceof Files && files.lineage.latest === files
  if (latest && files.get(path) === mtimeMs) return files
  const lineage: Lineage = latest ? files.lineage : { map: new Map(files), log: [], latest: undefined }
  lineage.map.set(path, mtimeMs)
  lineage.log.push(path)
  const next = new Files(lineage, lineage.log.length)
  lineage.latest = next
  return next
}

/**
 * The paths recorded in `files` since version `last` when `files` extends it (same lineage, later),
 * else `undefined` (compare the maps whole). A path set back to the mtime it had at `last` counts.
 *
 * @category Accessors
 */
export const changedSince = (
  files: ReadonlyMap<string, number>,
  last: ReadonlyMap<string, number>
): ReadonlySet<string> | undefined =>
  files instanceof Files && last instanceof Files && files.lineage === last.lineage && last.logged <= files.logged &&
    files.lineage.latest === files
    ? new Set(files.lineage.log.slice(last.logged, files.logged))
    : undefined

/**
 * Whether `files` reads as what it held when it was taken: any map but an older version of a
 * lineage (whose reads are the latest version's). An unreadable one is compared as unknown.
 *
 * @category Accessors
 */
export const readable = (files: ReadonlyMap<string, number>): boolean =>
  !(files instanceof Files) || files.lineage.latest === files

/** Records that `path` was read or written when its mtime was `mtimeMs`. @category Recording */
export const record = (path: string, mtimeMs: number): Effect.Effect<void, never, SessionState> =>
  Effect.flatMap(SessionState, (state) => Ref.update(state.fileState, (m) => set(m, path, mtimeMs)))

/** The mtime recorded for `path`, if it was read in this session. @category Accessors */
export const lastSeen = (path: string): Effect.Effect<number | undefined, never, SessionState> =>
  Effect.flatMap(SessionState, (state) => Effect.map(Ref.get(state.fileState), (m) => m.get(path)))
