/**
 * End to end: one process per session, and torn transcripts, with the real `keel` binary against
 * the loopback fake API. Two runs resuming one session at once (the first held mid-turn by a
 * stalled stream, or an SDK host holding it open) → the second fails fast (exit 3) naming the
 * holder, and `--fork-session` still works; a stale lock (a dead pid) is taken over, another host's
 * is respected; a transcript with a corrupt middle line or a truncated last line resumes with a
 * warning and stays resumable; `keel doctor` repairs it, keeping the original.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { SessionStore, Transcript } from "@keel/core"
import { Either } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { hostname } from "node:os"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, lines, live, run, start, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const model = "claude-sonnet-4-6"
const text = (value: string) => FakeAnthropic.textReply(value, { model })

/** A project folder (its real path) and the `KEEL_HOME` its runs use. */
const place = () => {
  const dir = fs.realpathSync(workdir())
  return { dir, home: path.join(dir, ".keel-home") }
}
type Place = ReturnType<typeof place>

const fileOf = (at: Place, id: string) => path.join(at.home, "projects", SessionStore.slug(at.dir), `${id}.jsonl`)
const lockOf = (at: Place, id: string) => path.join(at.home, "projects", SessionStore.slug(at.dir), `${id}.lock`)

/** Runs `keel -p <prompt> --output-format stream-json ...args` in `at` against a fake playing `script`. */
const keel = async (at: Place, script: ReadonlyArray<FakeAnthropic.ScriptItem>, args: ReadonlyArray<string> = [], prompt = "go") => {
  const server = await fake(script)
  const r = await run(["-p", prompt, "--output-format", "stream-json", ...args], {
    env: { ...envFor(server), KEEL_HOME: at.home },
    cwd: at.dir
  })
  const messages = r.stdout.trim() === "" ? [] : lines(r.stdout)
  return { ...r, server, messages, sessionId: messages[0]?.session_id as string }
}

/** The transcript replayed strictly: no line skipped. */
const replayed = (at: Place, id: string) => {
  const file = fileOf(at, id)
  const parsed = Transcript.parseEntries(fs.readFileSync(file), { file, sessionId: id })
  if (Either.isLeft(parsed)) assert.fail(parsed.left.message)
  return parsed.right
}

const until = async (check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> => {
  const started = Date.now()
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** A pid that no process has: one of a process that has exited. */
const deadPid = (): number => spawnSync("true").pid!

const lockMessage = (id: string, pid: number) =>
  new RegExp(
    `^keel: session ${id} is in use by pid ${pid} on host ${hostname().replace(/[.]/g, "\\.")} \\(since \\d{4}-\\d\\d-\\d\\dT[^)]+\\); ` +
      `wait for it to finish, or use --fork-session to continue in a new session\\n$`
  )

describe("one process per session", { timeout: 120_000 }, () => {
  it("a second --resume while the first runs fails fast (exit 3, naming pid and host); --fork-session works; the session resumes after", async () => {
    const at = place()
    const first = await keel(at, [text("one")])
    assert.strictEqual(first.code, 0, first.stderr)
    const id = first.sessionId

    // The first resume is held mid-turn: its stream stalls.
    const stalled = await fake([{ ...text("never finishes"), stallAfter: 2 }])
    const holder = start(["-p", "two", "--output-format", "stream-json", "--resume", id], {
      env: { ...envFor(stalled), KEEL_HOME: at.home },
      cwd: at.dir
    })
    await until(() => stalled.requests.length === 1, "the first resume's request")
    const lock = JSON.parse(fs.readFileSync(lockOf(at, id), "utf8"))
    assert.deepStrictEqual([lock.pid, lock.host], [holder.child.pid, hostname()])

    const started = Date.now()
    const second = await keel(at, [text("never asked")], ["--resume", id], "three")
    assert.strictEqual(second.code, 3)
    assert.match(second.stderr, lockMessage(id, holder.child.pid!))
    assert.strictEqual(second.server.requests.length, 0)
    assert.isBelow(Date.now() - started, 15_000)
    // --continue picks the same session, and is refused the same way.
    const continued = await keel(at, [text("never asked")], ["--continue"], "four")
    assert.deepStrictEqual([continued.code, continued.stderr], [3, second.stderr])

    // A fork writes a session of its own: it runs while the first one is held.
    const fork = await keel(at, [text("forked")], ["--resume", id, "--fork-session"], "five")
    assert.strictEqual(fork.code, 0, fork.stderr)
    assert.notStrictEqual(fork.sessionId, id)
    assert.deepStrictEqual(fork.server.requests[0]!.body.messages.length, 3)
    assert.isFalse(fs.existsSync(lockOf(at, fork.sessionId)), "the fork's lock is released")

    holder.child.kill("SIGINT")
    assert.strictEqual((await holder.done).code, 130)
    assert.isFalse(fs.existsSync(lockOf(at, id)), "the lock is released on exit")

    const after = await keel(at, [text("six")], ["--resume", id], "again")
    assert.strictEqual(after.code, 0, after.stderr)
    assert.strictEqual(after.stderr, "")
    const decoded = replayed(at, id)
    assert.deepStrictEqual(decoded.dropped, [])
    assert.include(JSON.stringify(decoded.loaded.messages.at(-1)), "six")
  })

  it("an SDK host (--input-format stream-json) holds the lock while it runs; a -p resume is refused until it ends", async () => {
    const at = place()
    const first = await keel(at, [text("one")])
    const id = first.sessionId
    const server = await fake([text("two")])
    const host = live(["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--resume", id], {
      env: { ...envFor(server), KEEL_HOME: at.home },
      cwd: at.dir
    })
    await until(() => fs.existsSync(lockOf(at, id)), "the host's lock")
    const refused = await keel(at, [text("never asked")], ["--resume", id], "three")
    assert.strictEqual(refused.code, 3)
    assert.match(refused.stderr, lockMessage(id, host.child.pid!))
    host.end()
    assert.strictEqual((await host.done).code, 0, host.stderr())
    assert.isFalse(fs.existsSync(lockOf(at, id)))
    const after = await keel(at, [text("three")], ["--resume", id], "three")
    assert.strictEqual(after.code, 0, after.stderr)
  })

  it("a stale lock (its pid is gone) is taken over; another host's lock is respected, saying how to remove it", async () => {
    const at = place()
    const first = await keel(at, [text("one")])
    const id = first.sessionId
    const stale = { pid: deadPid(), host: hostname(), startedAt: "2026-01-01T00:00:00.000Z", token: "old" }
    fs.writeFileSync(lockOf(at, id), JSON.stringify(stale))
    const taken = await keel(at, [text("two")], ["--resume", id], "two")
    assert.strictEqual(taken.code, 0, taken.stderr)
    assert.isFalse(fs.existsSync(lockOf(at, id)))

    const elsewhere = { pid: 1234, host: "another-host.example", startedAt: "2026-01-01T00:00:00.000Z", token: "theirs" }
    fs.writeFileSync(lockOf(at, id), JSON.stringify(elsewhere))
    const refused = await keel(at, [text("never asked")], ["--resume", id], "three")
    assert.strictEqual(refused.code, 3)
    assert.include(refused.stderr, `session ${id} is in use by pid 1234 on host another-host.example (since 2026-01-01T00:00:00.000Z)`)
    assert.include(refused.stderr, `if that host no longer runs it, remove ${lockOf(at, id)}`)
    assert.deepStrictEqual(JSON.parse(fs.readFileSync(lockOf(at, id), "utf8")), elsewhere, "another host's lock is left alone")
  })
})

describe("torn transcripts and keel doctor", { timeout: 120_000 }, () => {
  /** A session of two turns, then `tear` applied to its lines. */
  const torn = async (tear: (lines: Array<string>) => string) => {
    const at = place()
    const first = await keel(at, [text("one")], [], "first")
    const id = first.sessionId
    const second = await keel(at, [text("two")], ["--resume", id], "second")
    assert.strictEqual(second.code, 0, second.stderr)
    const file = fileOf(at, id)
    const original = fs.readFileSync(file, "utf8").split("\n").filter((l) => l !== "")
    fs.writeFileSync(file, tear(original))
    return { at, id, file, original }
  }

  it("a corrupt middle line: resume goes on from the entries before it, with a warning on stderr and in stream-json; doctor repairs it keeping a .bak", async () => {
    // The second turn's prompt is the bad line: the session resumes after the first turn.
    const { at, file, id, original } = await torn((ls) => {
      const i = ls.findIndex((l) => l.includes("\"second\""))
      return [...ls.slice(0, i), "{not json", ...ls.slice(i + 1)].join("\n") + "\n"
    })
    const badLine = original.findIndex((l) => l.includes("\"second\"")) + 1
    const tornBytes = fs.readFileSync(file)

    const resumed = await keel(at, [text("three")], ["--resume", id], "third")
    assert.strictEqual(resumed.code, 0, resumed.stderr)
    assert.include(resumed.stderr, `keel: ${file}: `)
    assert.match(resumed.stderr, new RegExp(`\\d+ lines could not be replayed, from line ${badLine} \\(it is not JSON`))
    assert.include(resumed.stderr, `keel doctor ${id} repairs the file`)
    const warning = resumed.messages.find((m) => m.type === "system" && m.subtype !== "init")
    assert.isDefined(warning, "a system warning in stream-json")
    assert.include(JSON.stringify(warning), `could not be replayed, from line ${badLine}`)
    // The model saw the first turn and the new prompt, not what followed the bad line.
    const sent = resumed.server.requests[0]!.body.messages
    assert.deepStrictEqual(sent.map((m: any) => m.role), ["user", "assistant", "user"])
    assert.include(JSON.stringify(sent[0]), "first")
    assert.include(JSON.stringify(sent[2]), "third")
    // What it appended chains from the last valid entry: the next resume sees it.
    const again = await keel(at, [text("four")], ["--resume", id], "fourth")
    assert.strictEqual(again.code, 0, again.stderr)
    assert.deepStrictEqual(again.server.requests[0]!.body.messages.length, 5)

    const before = fs.readFileSync(file)
    const doctor = await run(["doctor", id], { env: { KEEL_HOME: at.home }, cwd: at.dir })
    assert.strictEqual(doctor.code, 0, doctor.stderr)
    assert.include(doctor.stdout, `dropped line ${badLine}: it is not JSON`)
    const backups = fs.readdirSync(path.dirname(file)).filter((f) => f.startsWith(`${id}.jsonl.bak-`))
    assert.strictEqual(backups.length, 1)
    assert.deepStrictEqual(fs.readFileSync(path.join(path.dirname(file), backups[0]!)), before, "the original is kept whole")
    assert.include(doctor.stdout, backups[0]!)
    assert.isTrue(tornBytes.length > 0)
    // The repaired file replays with nothing skipped, and resumes without a warning.
    const repaired = replayed(at, id)
    assert.deepStrictEqual(repaired.dropped, [])
    assert.strictEqual(repaired.loaded.messages.length, 6)
    const clean = await keel(at, [text("five")], ["--resume", id], "fifth")
    assert.deepStrictEqual([clean.code, clean.stderr], [0, ""])

    const healthy = await run(["doctor", fileOf(at, id)], { env: { KEEL_HOME: at.home }, cwd: at.dir })
    assert.strictEqual(healthy.code, 0, healthy.stderr)
    assert.include(healthy.stdout, "healthy")
    assert.strictEqual(fs.readdirSync(path.dirname(file)).filter((f) => f.includes(".bak-")).length, 1)
  })

  it("a truncated last line and a line that breaks the chain: resume warns and goes on; doctor drops both", async () => {
    const { at, id, original } = await torn((ls) => {
      // A stray entry from a second writer (chained to the first entry), and a last line cut short.
      const stray = JSON.parse(ls[2]!)
      stray.uuid = "stray-uuid"
      stray.parentUuid = JSON.parse(ls[0]!).uuid
      return [...ls.slice(0, 3), JSON.stringify(stray), ...ls.slice(3)].join("\n") + "\n" + ls.at(-1)!.slice(0, 20)
    })
    const resumed = await keel(at, [text("three")], ["--resume", id], "third")
    assert.strictEqual(resumed.code, 0, resumed.stderr)
    assert.include(resumed.stderr, "line 4 could not be replayed (its parentUuid")
    assert.include(resumed.stderr, "the last line is incomplete")
    assert.strictEqual(resumed.server.requests[0]!.body.messages.length, 5)
    const doctor = await run(["doctor", id], { env: { KEEL_HOME: at.home }, cwd: at.dir })
    assert.strictEqual(doctor.code, 0, doctor.stderr)
    assert.include(doctor.stdout, "dropped line 4: its parentUuid")
    assert.strictEqual(replayed(at, id).dropped.length, 0)
    assert.isAbove(original.length, 3)
  })

  it("doctor: an unknown session exits 1; a session in use exits 3 and is not touched", async () => {
    const at = place()
    const missing = await run(["doctor", "no-such-session"], { env: { KEEL_HOME: at.home }, cwd: at.dir })
    assert.strictEqual(missing.code, 1)
    assert.include(missing.stderr, "keel doctor: no session no-such-session")
    const first = await keel(at, [text("one")])
    const id = first.sessionId
    fs.writeFileSync(lockOf(at, id), JSON.stringify({ pid: process.pid, host: hostname(), startedAt: "2026-01-01T00:00:00.000Z", token: "t" }))
    const bytes = fs.readFileSync(fileOf(at, id))
    const busy = await run(["doctor", id], { env: { KEEL_HOME: at.home }, cwd: at.dir })
    assert.strictEqual(busy.code, 3)
    assert.include(busy.stderr, `session ${id} is in use by pid ${process.pid}`)
    assert.deepStrictEqual(fs.readFileSync(fileOf(at, id)), bytes)
  })
})
