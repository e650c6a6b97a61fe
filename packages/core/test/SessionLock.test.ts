/**
 * The session lock: taken with its holder's pid, host and start; a second taker (in this process
 * or another) fails naming the holder; released with its scope (and never when it is another's);
 * stale locks (a dead pid of this host, this pid without this process's token) taken over;
 * another host's lock and an unreadable lock respected.
 */
import { assert, describe, it } from "@effect/vitest"
import { SessionLock, SessionStore } from "@keel/core"
import { Effect, Exit, Scope } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { hostname, tmpdir } from "node:os"
import * as path from "node:path"

const transcript = () => path.join(fs.mkdtempSync(path.join(tmpdir(), "keel-lock-")), "projects", "p", "s1.jsonl")
const holderOf = (file: string) => JSON.parse(fs.readFileSync(SessionLock.lockFileOf(file), "utf8"))
const deadPid = () => spawnSync("true").pid!

describe("SessionLock", () => {
  it.effect("taken with pid, host and start; a second taker in this process fails naming it; released with the scope", () =>
    Effect.gen(function*() {
      const file = transcript()
      const scope = yield* Scope.make()
      yield* Scope.extend(SessionLock.acquire("s1", file), scope)
      const holder = holderOf(file)
      assert.deepStrictEqual([holder.pid, holder.host], [process.pid, hostname()])
      assert.isFalse(Number.isNaN(Date.parse(holder.startedAt)))
      const second = yield* Effect.flip(Effect.scoped(SessionLock.acquire("s1", file)))
      assert.strictEqual(second._tag, "SessionLocked")
      assert.strictEqual(
        second.message,
        `session s1 is in use by pid ${process.pid} on host ${hostname()} (since ${holder.startedAt}); ` +
          "wait for it to finish, or use --fork-session to continue in a new session"
      )
      yield* Scope.close(scope, Exit.void)
      assert.isFalse(fs.existsSync(SessionLock.lockFileOf(file)))
      // Free again.
      yield* Effect.scoped(SessionLock.acquire("s1", file))
      assert.deepStrictEqual(fs.readdirSync(path.dirname(file)), [], "no temporary file or lock left")
    }))

  it.effect("a stale lock (a dead pid of this host, or this pid without this process's token) is taken over", () =>
    Effect.gen(function*() {
      for (const pid of [deadPid(), process.pid]) {
        const file = transcript()
        fs.mkdirSync(path.dirname(file), { recursive: true })
        fs.writeFileSync(SessionLock.lockFileOf(file), JSON.stringify({ pid, host: hostname(), startedAt: "2026-01-01T00:00:00Z", token: "old" }))
        yield* Effect.scoped(Effect.gen(function*() {
          yield* SessionLock.acquire("s1", file)
          assert.strictEqual(holderOf(file).pid, process.pid)
          assert.notStrictEqual(holderOf(file).token, "old")
        }))
        assert.deepStrictEqual(fs.readdirSync(path.dirname(file)), [], "the stale lock is gone, nothing left aside")
      }
    }))

  it.effect("another host's lock and an unreadable lock are respected, and left as they are", () =>
    Effect.gen(function*() {
      const file = transcript()
      fs.mkdirSync(path.dirname(file), { recursive: true })
      const lockFile = SessionLock.lockFileOf(file)
      const theirs = JSON.stringify({ pid: 1, host: "elsewhere", startedAt: "2026-01-01T00:00:00Z", token: "t" })
      fs.writeFileSync(lockFile, theirs)
      const foreign = yield* Effect.flip(Effect.scoped(SessionLock.acquire("s1", file)))
      assert.strictEqual(foreign._tag, "SessionLocked")
      assert.include(foreign.message, `in use by pid 1 on host elsewhere (since 2026-01-01T00:00:00Z)`)
      assert.include(foreign.message, `if that host no longer runs it, remove ${lockFile}`)
      assert.strictEqual(fs.readFileSync(lockFile, "utf8"), theirs)
      fs.writeFileSync(lockFile, "{half")
      const unreadable = yield* Effect.flip(Effect.scoped(SessionLock.acquire("s1", file)))
      assert.include(unreadable.message, `a lock file that cannot be read (${lockFile})`)
      assert.strictEqual(fs.readFileSync(lockFile, "utf8"), "{half")
    }))

  it.effect("a release never removes a lock that is no longer this taking's", () =>
    Effect.gen(function*() {
      const file = transcript()
      yield* Effect.scoped(Effect.gen(function*() {
        yield* SessionLock.acquire("s1", file)
        // Someone replaced it (by hand, or a takeover after a pid was reused).
        fs.writeFileSync(SessionLock.lockFileOf(file), JSON.stringify({ pid: 1, host: "elsewhere", startedAt: "x", token: "other" }))
      }))
      assert.strictEqual(holderOf(file).token, "other")
    }))

  it.effect("the memory store locks per session too; the no-op store does not", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      yield* Effect.scoped(Effect.gen(function*() {
        yield* store.lock("/p", "s1")
        const second = yield* Effect.flip(Effect.scoped(store.lock("/p", "s1")))
        assert.strictEqual(second._tag, "SessionLocked")
        yield* Effect.scoped(store.lock("/p", "s2"))
      }))
      yield* Effect.scoped(store.lock("/p", "s1"))
    }).pipe(Effect.provide(SessionStore.layerMemory())))
})
