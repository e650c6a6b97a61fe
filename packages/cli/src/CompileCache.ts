/**
 * Loads a CommonJS bundle (the CLI's `bundle/*.cjs` chunks) through a V8 code cache: Node 20 has no
 * `module.enableCompileCache`, and compiling the bundle's modules was a third of `keel -p`'s start.
 * Each chunk is compiled as a `vm.Script` with the `cachedData` an earlier run left; a run that had
 * none (or whose cache V8 refused) writes one when it exits, holding every function compiled by
 * then, so the next run skips their parsing and compiling too.
 *
 * A cache file is found by its chunk's identity (path, device, inode, size, modification and change
 * times), the Node version and the architecture, holds that identity (compared whole) and a CRC-32
 * of its bytes: V8 itself checks little more than the source's length, so a stale, foreign or
 * corrupt cache is never handed to it; it is ignored (and replaced at exit), silently.
 * Writing a cache removes the one it replaces and any left unused for a week.
 * Caches go in `$KEEL_COMPILE_CACHE`, else `<tmpdir>/keel-compile-cache-<uid>` (created private);
 * a cache is used only when its file is the user's own, has no other links, and lies in a folder
 * of the user's that nobody else can write. `KEEL_COMPILE_CACHE=0` turns the cache off.
 *
 * Plain Node, no Effect: it runs before the kernel (and Effect) has loaded.
 *
 * @since 0.1.0
 */
import { isAscii } from "node:buffer"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as vm from "node:vm"
import * as zlib from "node:zlib"

/** The checksum the cache files carry (Node ≥ 20.15); without it there is no cache. */
const crc32: ((data: Uint8Array) => number) | undefined = typeof zlib.crc32 === "function" ? zlib.crc32 : undefined

/**
 * The folder caches go in, from the environment: `KEEL_COMPILE_CACHE` (a folder; `0` or `off`: no
 * cache), else a private folder of this user's in the OS temp dir. `undefined`: no cache.
 */
export const cacheDir = (env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const set = env.KEEL_COMPILE_CACHE
  if (set === "0" || set === "off") return undefined
  if (set !== undefined && set !== "") return set
  return path.join(os.tmpdir(), `keel-compile-cache-${process.getuid?.() ?? "user"}`)
}

const hex = (text: string): string => (crc32!(Buffer.from(text)) >>> 0).toString(16).padStart(8, "0")

/** Where `file`'s cache is and whose it is. */
export interface CacheKey {
  /** `<dir>/<name>-<path's hash>-<identity's hash>.v8`. */
  readonly file: string
  /**
   * The source's path, its identity by `stat` (device, inode, size, modification and change times),
   * this Node and this architecture: written in the cache and compared whole when it is read, so a
   * hash collision cannot hand V8 another file's cache.
   */
  readonly identity: string
}

/** The cache of `file` in `dir`. */
export const cacheKeyOf = (file: string, dir: string): CacheKey => {
  const s = fs.statSync(file, { bigint: true })
  const identity = [file, s.dev, s.ino, s.size, s.mtimeNs, s.ctimeNs, process.version, process.arch].join("\0")
  return { file: path.join(dir, `${path.basename(file)}-${hex(file)}-${hex(identity)}.v8`), identity }
}

/** Caches not written for a week are removed (by the next process that writes one). */
const STALE_MS = 7 * 24 * 60 * 60 * 1000

/**
 * Removes, beside the cache just written, the caches it replaces (the same file at the same path,
 * an earlier build of it) and any cache not rewritten for {@link STALE_MS}.
 */
const prune = (written: string): void => {
  const dir = path.dirname(written)
  const own = path.basename(written)
  const sameFile = own.slice(0, own.lastIndexOf("-") + 1)
  const now = Date.now()
  for (const name of fs.readdirSync(dir)) {
    if (name === own || !name.endsWith(".v8")) continue
    const file = path.join(dir, name)
    try {
      if (name.startsWith(sameFile) || now - fs.statSync(file).mtimeMs > STALE_MS) fs.rmSync(file, { force: true })
    } catch {
      // Gone already, or not ours to remove.
    }
  }
}

/**
 * The cache's data when its file is this user's, holds `key`'s identity and its checksum holds;
 * otherwise nothing. The file: the data's CRC-32, the identity's length (both 4 bytes, LE), the
 * identity, the data.
 */
const readCache = (key: CacheKey): Buffer | undefined => {
  let fd: number | undefined
  try {
    fd = fs.openSync(key.file, "r")
    const uid = process.getuid?.()
    if (uid !== undefined) {
      // Code V8 runs must be this user's own: the file theirs and not linked from elsewhere, in a
      // folder of theirs that no one else may write (a folder another user made in /tmp is not).
      const file = fs.fstatSync(fd)
      const folder = fs.statSync(path.dirname(key.file))
      if (file.uid !== uid || file.nlink !== 1 || folder.uid !== uid || (folder.mode & 0o022) !== 0) return undefined
    }
    const bytes = fs.readFileSync(fd)
    if (bytes.length < 8) return undefined
    const identityEnd = 8 + bytes.readUInt32LE(4)
    if (identityEnd > bytes.length || bytes.toString("utf8", 8, identityEnd) !== key.identity) return undefined
    const data = bytes.subarray(identityEnd)
    return (crc32!(data) >>> 0) === bytes.readUInt32LE(0) ? data : undefined
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/** Writes `data` as `key`'s cache (see {@link readCache}), through a temporary file renamed into place. */
const writeCache = (key: CacheKey, data: Buffer): void => {
  const dir = path.dirname(key.file)
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  const uid = process.getuid?.()
  if (uid !== undefined && fs.statSync(dir).uid !== uid) return
  const identity = Buffer.from(key.identity)
  const head = Buffer.alloc(8)
  head.writeUInt32LE(crc32!(data) >>> 0, 0)
  head.writeUInt32LE(identity.length, 4)
  const tmp = `${key.file}.${process.pid}.tmp`
  try {
    fs.writeFileSync(tmp, Buffer.concat([head, identity, data]), { mode: 0o600 })
    fs.renameSync(tmp, key.file)
  } catch {
    fs.rmSync(tmp, { force: true })
    return
  }
  prune(key.file)
}

/** How a {@link load} went: the exports, whether V8 took a cache, whether one is written at exit. */
export interface Loaded {
  readonly exports: unknown
  readonly cached: boolean
  readonly writesCache: boolean
}

/** The caches to write as the process exits (one `exit` listener for them all). */
const pending: Array<() => void> = []

const atExit = (write: () => void): void => {
  if (pending.length === 0) {
    process.once("exit", () => {
      for (const w of pending.splice(0)) {
        try {
          w()
        } catch {
          // A cache that cannot be written is only a slower next start.
        }
      }
    })
  }
  pending.push(write)
}

/** The files loaded so far, by path: a chunk runs once however many chunks require it. */
const loaded = new Map<string, Loaded & { readonly module: { exports: unknown } }>()

/**
 * Runs the CommonJS file `file` (a path or `file:` URL) as Node would `require` it, compiled with
 * its code cache from `dir` when there is a good one, and returns its exports; when there was none,
 * the cache is written as the process exits. Its `require` of a relative `.cjs` file (another chunk
 * of the bundle) loads that file the same way; any other `require` is Node's. Never fails for a
 * cache's sake.
 */
export const load = (file: string | URL, dir: string | undefined = cacheDir()): Loaded => {
  const filename = typeof file === "string" ? path.resolve(file) : fileURLToPath(file)
  const known = loaded.get(filename)
  if (known !== undefined) return { ...known, exports: known.module.exports }
  const bytes = fs.readFileSync(filename)
  // An ASCII source (the bundle is one) decodes to a one-byte string: a copy, not a UTF-8 decode.
  const source = bytes.toString(typeof isAscii === "function" && isAscii(bytes) ? "latin1" : "utf8")
  let key: CacheKey | undefined
  try {
    key = dir !== undefined && crc32 !== undefined ? cacheKeyOf(filename, dir) : undefined
  } catch {
    key = undefined
  }
  const cachedData = key !== undefined ? readCache(key) : undefined
  // Node's CommonJS wrapper, on the source's first line (line numbers stay the file's), strict as
  // the ES modules the bundle was made of.
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {"use strict";${source}\n})`, {
    filename,
    ...(cachedData !== undefined ? { cachedData } : {})
  })
  const cached = cachedData !== undefined && !script.cachedDataRejected
  const writesCache = key !== undefined && !cached
  if (writesCache) atExit(() => writeCache(key!, script.createCachedData()))
  const module = { exports: {} as unknown }
  const entry = { module, cached, writesCache, exports: undefined }
  loaded.set(filename, entry)
  const dirname = path.dirname(filename)
  const nodeRequire = createRequire(filename)
  const require = Object.assign(
    (id: string) => (id.startsWith("./") && id.endsWith(".cjs") ? load(path.join(dirname, id), dir).exports : nodeRequire(id)),
    nodeRequire
  )
  const wrapper = script.runInThisContext() as (...args: ReadonlyArray<unknown>) => void
  wrapper.call(module.exports, module.exports, require, module, filename, dirname)
  return { exports: module.exports, cached, writesCache }
}
