/**
 * One writer per session: an exclusive lock held for as long as a process writes a session's
 * transcript, as a file next to it (`<id>.lock`) holding `{pid, host, startedAt, token}`.
 *
 * - Taking it: the lock's content is written to a private temporary file, then hard-linked to the
 *   lock's name. A link, like `open(O_EXCL)`, fails when the name exists, and unlike it the lock is
 *   never seen half written. (A file system without hard links falls back to `open(O_EXCL)`.)
 * - A lock already there is **stale** when it was taken on this host by a process that is gone
 *   (`kill(pid, 0)` answers `ESRCH`), or by this very pid without this process holding it (a pid
 *   reused after a restart). A stale lock is taken over atomically: it is renamed aside to a name
 *   of its own (of two processes doing so, one rename wins and the other finds nothing), checked to
 *   be the lock judged stale, removed, and the lock taken as above.
 * - A lock taken on **another host** is always respected, whatever its age: this host cannot tell
 *   whether that process still runs (a shared home over NFS), and a long REPL session may hold a
 *   lock for days. The message names the lock file, to be removed by hand once that host is done.
 * - A lock file that cannot be read as a lock is respected too (fail closed), naming the file.
 * - Released when the scope closes (normal end, failure, interruption) if it is still this
 *   process's (its token), and, for a process that exits without closing its scopes
 *   (`process.exit` on a second signal), by an `exit` handler.
 *
 * In one process a session is locked once: a second session taking the same id fails as another
 * process would.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import { hostname } from "node:os"
import * as nodePath from "node:path"
import { SessionLocked, TranscriptIoError } from "./TranscriptError.js"

/** What a lock file holds. @category Models */
export interface Holder {
  readonly pid: number
  readonly host: string
  /** When it was taken (ISO 8601). */
  readonly startedAt: string
  /** This taking's own id, so a release never removes another process's lock. */
  readonly token: string
}

/** The lock file of the transcript `file` (`<id>.jsonl` → `<id>.lock`). @category Paths */
export const lockFileOf = (file: string): string => file.replace(/\.jsonl$/, "") + ".lock"

/** The locks this process holds: lock file → token. */
const held = new Map<string, string>()
let exitHookInstalled = false

const installExitHook = () => {
  if (exitHookInstalled) return
  exitHookInstalled = true
  // A process that exits without closing its scopes (a forced exit) still leaves no lock behind.
  process.on("exit", () => {
    for (const [file, token] of held) releaseSync(file, token)
  })
}

const readHolder = (file: string): Holder | "missing" | "unreadable" => {
  let text: string
  try {
    text = fs.readFileSync(file, "utf8")
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT" ? "missing" : "unreadable"
  }
  try {
    const json = JSON.parse(text) as Partial<Holder>
    return typeof json.pid === "number" && typeof json.host === "string" && typeof json.startedAt === "string" &&
        typeof json.token === "string"
      ? json as Holder
      : "unreadable"
  } catch {
    return "unreadable"
  }
}

/** Whether process `pid` of this host runs (a process of another user that we may not signal does). */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== "ESRCH"
  }
}

/** Whether `holder` is a lock nobody holds any more (see the module's doc). @category Predicates */
export const isStale = (holder: Holder, lockFile: string, host = hostname()): boolean => {
  if (holder.host !== host) return false
  if (holder.pid === process.pid) return held.get(lockFile) !== holder.token
  return !isAlive(holder.pid)
}

const releaseSync = (file: string, token: string) => {
  const holder = readHolder(file)
  if (typeof holder === "object" && holder.token === token) {
    try {
      fs.unlinkSync(file)
    } catch {
      // Gone already.
    }
  }
  if (held.get(file) === token) held.delete(file)
}

/** Creates `file` holding `text` only if no such file exists; answers whether it did. */
const createExclusive = (file: string, text: string): boolean => {
  const temp = `${file}.${process.pid}-${randomUUID()}.tmp`
  fs.writeFileSync(temp, text, { flag: "wx" })
  try {
    fs.linkSync(temp, file)
    return true
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code === "EEXIST") return false
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw e
    // No hard links here: O_EXCL (a reader may then meet the file before its content; it is unreadable, and respected).
    try {
      fs.writeFileSync(file, text, { flag: "wx" })
      return true
    } catch (e2) {
      if ((e2 as NodeJS.ErrnoException).code === "EEXIST") return false
      throw e2
    }
  } finally {
    fs.rmSync(temp, { force: true })
  }
}

/** Moves a stale lock aside and removes it, unless it changed since it was judged stale (then it is put back). */
const takeOver = (file: string, stale: Holder) => {
  const aside = `${file}.stale-${process.pid}-${randomUUID()}`
  try {
    fs.renameSync(file, aside)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return // Another process moved it first.
    throw e
  }
  const moved = readHolder(aside)
  if (typeof moved === "object" && moved.token === stale.token) {
    fs.rmSync(aside, { force: true })
    return
  }
  // A live lock taken meanwhile: put it back (exclusively; if that fails, a third lock is there now).
  try {
    fs.linkSync(aside, file)
  } finally {
    fs.rmSync(aside, { force: true })
  }
}

/** The one-line failure for a lock held by `holder`. */
const locked = (sessionId: string, lockFile: string, holder: Holder | "unreadable") =>
  new SessionLocked({
    sessionId,
    lockFile,
    pid: holder === "unreadable" ? undefined : holder.pid,
    host: holder === "unreadable" ? undefined : holder.host,
    startedAt: holder === "unreadable" ? undefined : holder.startedAt,
    foreignHost: holder !== "unreadable" && holder.host !== hostname()
  })

/**
 * Takes session `sessionId`'s lock for transcript `file` (synchronously; see the module's doc).
 *
 * @category Locking
 */
export const acquireSync = (sessionId: string, file: string): { readonly lockFile: string; readonly token: string } => {
  const lockFile = lockFileOf(file)
  fs.mkdirSync(nodePath.dirname(lockFile), { recursive: true })
  const token = randomUUID()
  const text = JSON.stringify({ pid: process.pid, host: hostname(), startedAt: new Date().toISOString(), token }) + "\n"
  // Bounded: each round either takes the lock, finds a live one, or removes a stale one.
  for (let attempt = 0; attempt < 5; attempt++) {
    if (createExclusive(lockFile, text)) {
      held.set(lockFile, token)
      installExitHook()
      return { lockFile, token }
    }
    const holder = readHolder(lockFile)
    if (holder === "missing") continue
    if (holder === "unreadable" || !isStale(holder, lockFile)) throw locked(sessionId, lockFile, holder)
    takeOver(lockFile, holder)
  }
  const holder = readHolder(lockFile)
  throw locked(sessionId, lockFile, typeof holder === "object" ? holder : "unreadable")
}

/**
 * Holds session `sessionId`'s lock (for its transcript `file`) for the life of the scope.
 *
 * @category Locking
 */
export const acquire = (
  sessionId: string,
  file: string
): Effect.Effect<void, SessionLocked | TranscriptIoError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.try({
      try: () => acquireSync(sessionId, file),
      catch: (e) =>
        e instanceof SessionLocked
          ? e
          : new TranscriptIoError({ file: lockFileOf(file), operation: "lock", reason: e instanceof Error ? e.message : String(e) })
    }),
    ({ lockFile, token }) => Effect.sync(() => releaseSync(lockFile, token))
  )

/**
 * In-memory locks (the memory store's): one holder per key, released with the scope.
 *
 * @category Locking
 */
export const memory = () => {
  const holders = new Set<string>()
  return (sessionId: string, file: string): Effect.Effect<void, SessionLocked, Scope.Scope> =>
    Effect.acquireRelease(
      Effect.suspend(() => {
        if (holders.has(file)) {
          return Effect.fail(
            new SessionLocked({
              sessionId,
              lockFile: lockFileOf(file),
              pid: process.pid,
              host: hostname(),
              startedAt: undefined,
              foreignHost: false
            })
          )
        }
        holders.add(file)
        return Effect.void
      }),
      () => Effect.sync(() => holders.delete(file))
    )
}
