/**
 * End to end, `keel -p --record` against the loopback fake of the Messages API: the session's
 * journal is written beside its transcript (`<session id>.journal`): every request body byte for
 * byte as the server received it (once per distinct body), the 429 that was retried, each stream's
 * reads, the tool call with its input and output, and the turn with its prompt. The journal's calls
 * are what `ReplayModel` serves. Without `--record` (or `KEEL_RECORD=1`) there is no journal.
 *
 * `keel replay <session>` runs the recording again with no API at all (the fake is closed): it
 * passes; a journal whose recorded body was changed diverges at that call, exit 1, with the path
 * and a diff; a journal that is not one is exit 2, saying why. A recorded session killed mid-turn
 * and resumed: `durable-turns.e2e.test.ts`.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Journal, JournalEntry, ReplayModel, SessionStore } from "@keel/core"
import { Either } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, lines, run, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex")

/** `keel -p go` in a fresh folder against a fake playing: a 429, a Read of notes.md, then an answer. */
const session = async (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const dir = workdir()
  fs.writeFileSync(path.join(dir, "notes.md"), "The answer is 42.\n")
  const server = await fake([
    FakeAnthropic.errorReply(429, "rate_limit_error", "Slow down", { "retry-after": "0" }),
    FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "notes.md" }, id: "toolu_read" }]),
    FakeAnthropic.textReply("It is 42.")
  ])
  const home = path.join(dir, ".keel-home")
  const r = await run(["-p", "go", "--output-format", "stream-json", "--verbose", "--allowedTools", "Read", ...args], {
    env: { ...envFor(server), KEEL_HOME: home, ...env },
    cwd: dir
  })
  assert.strictEqual(r.code, 0, r.stderr)
  const sessionId = lines(r.stdout)[0].session_id as string
  const transcript = path.join(home, "projects", SessionStore.slug(fs.realpathSync(dir)), `${sessionId}.jsonl`)
  return { server, transcript, journal: Journal.fileOf(transcript), dir, home, sessionId }
}

describe("keel --record", () => {
  it("journals every call beside the transcript: bodies as sent, the 429, the reads, the tool call and the turn", async () => {
    const { journal, server, transcript } = await session(["--record"])
    assert.isTrue(fs.existsSync(transcript))
    assert.strictEqual(journal, transcript.replace(/\.jsonl$/, ".journal"))
    const entries = Either.getOrThrow(JournalEntry.parse(fs.readFileSync(journal, "utf8")))
    const header = entries[0]!
    assert.isTrue(header.type === "journal" && header.version === JournalEntry.VERSION && typeof header.seed === "number")
    // The run, for keel replay: its command line, folder and configuring variables (never a key).
    assert.isTrue(header.type === "journal" && header.argv?.includes("--record") === true && header.cwd !== undefined)
    assert.isTrue(header.type === "journal" && header.env !== undefined && !("ANTHROPIC_API_KEY" in header.env) && !("KEEL_HOME" in header.env))
    // Three calls, their bodies exactly what the server received.
    const calls = ReplayModel.calls(entries)
    assert.strictEqual(calls.length, 3)
    assert.strictEqual(server.requests.length, 3)
    calls.forEach((call, i) => {
      assert.strictEqual(call.body, server.requests[i]!.raw)
      assert.strictEqual(call.hash, sha256(server.requests[i]!.raw))
    })
    // The first two calls sent the same body (the retry): stored once.
    assert.strictEqual(entries.filter((e) => e.type === "body").length, 2)
    assert.deepStrictEqual(calls.map((c) => c.end?.outcome + (c.end?.error ? `:${c.end.error._tag}` : "")), [
      "failed:RateLimited",
      "done",
      "done"
    ])
    assert.isAbove(calls[1]!.chunks.length, 0)
    const tool = entries.filter((e) => e.type === "tool_start" || e.type === "tool_end")
    assert.deepStrictEqual(tool.map((e) => e.type), ["tool_start", "tool_end"])
    assert.isTrue(tool[0]!.type === "tool_start" && tool[0]!.name === "Read" && tool[0]!.id === "toolu_read")
    assert.isTrue(tool[1]!.type === "tool_end" && tool[1]!.outcome === "done" && String(tool[1]!.output).includes("The answer is 42."))
    const turn = entries.filter((e) => e.type === "turn_start" || e.type === "turn_end")
    assert.deepStrictEqual(turn.map((e) => e.type), ["turn_start", "turn_end"])
    assert.isTrue(turn[0]!.type === "turn_start" && turn[0]!.prompt === "go")
    // The journal is the user's own.
    assert.strictEqual(fs.statSync(journal).mode & 0o077, 0)
  }, 60_000)

  it("KEEL_RECORD=1 records too; without either there is no journal, and resuming such a session does not start one", async () => {
    const recorded = await session([], { KEEL_RECORD: "1" })
    assert.isTrue(fs.existsSync(recorded.journal))
    const plain = await session([])
    assert.isTrue(fs.existsSync(plain.transcript))
    assert.isFalse(fs.existsSync(plain.journal))
    const again = await fake([FakeAnthropic.textReply("Again.")])
    const resumed = await run(["--resume", plain.sessionId, "-p", "again"], {
      env: { ...envFor(again), KEEL_HOME: plain.home },
      cwd: plain.dir
    })
    assert.strictEqual(resumed.code, 0, resumed.stderr)
    assert.strictEqual(resumed.stdout, "Again.\n")
    assert.isFalse(fs.existsSync(plain.journal))
  }, 60_000)
})

describe("keel replay", () => {
  it("replays a recorded session with no API: pass; a changed recorded body diverges there, naming the field", async () => {
    const { dir, home, journal, server, sessionId } = await session(["--record"])
    await server.close()
    const env = { KEEL_HOME: home, ANTHROPIC_BASE_URL: "http://127.0.0.1:9", ANTHROPIC_API_KEY: "" }
    const passed = await run(["replay", sessionId], { env, cwd: dir })
    assert.strictEqual(passed.code, 0, passed.stdout + passed.stderr)
    assert.match(passed.stdout, /^replay: pass: 3 model calls as recorded, [\d.]+ s of recorded time in \d+ ms\n$/)
    // With the tools run again (the file is still there, unchanged): the same requests, a pass.
    const live = await run(["replay", sessionId, "--tools", "live"], { env, cwd: dir })
    assert.strictEqual(live.code, 0, live.stdout + live.stderr)
    // The file changed since: the live Read answers otherwise, and the next request diverges.
    fs.writeFileSync(path.join(dir, "notes.md"), "The answer is 43.\n")
    const changedFile = await run(["replay", sessionId, "--tools", "live"], { env, cwd: dir })
    assert.strictEqual(changedFile.code, 1, changedFile.stderr)
    assert.match(changedFile.stdout, /^replay: DIVERGED at model call 3 of 3: /)
    assert.include(changedFile.stdout, "+      1\tThe answer is 43.")
    // The recorded request of call 3 said something else: the replay diverges at call 3.
    const text = fs.readFileSync(journal, "utf8")
    const bodies = text.split("\n").filter((l) => l.startsWith("{\"type\":\"body\""))
    const last = JSON.parse(bodies.at(-1)!)
    // As if the kernel had sent another body then: the body and its hash (which its call names) change.
    const body = last.body.replace("The answer is 42.", "The answer is 41.")
    const altered = JSON.stringify({ ...last, hash: sha256(body), body })
    const changed = path.join(dir, "changed.journal")
    fs.writeFileSync(changed, text.replace(bodies.at(-1)!, () => altered).replaceAll(last.hash, sha256(body)))
    fs.copyFileSync(journal.replace(/\.journal$/, ".jsonl"), changed.replace(/\.journal$/, ".jsonl"))
    const diverged = await run(["replay", changed], { env, cwd: dir })
    assert.strictEqual(diverged.code, 1, diverged.stderr)
    assert.match(diverged.stdout, /^replay: DIVERGED at model call 3 of 3: \$\.messages\[2\]\.content\[0\]\.content differs from the recording\n/)
    assert.include(diverged.stdout, "- ")
    assert.include(diverged.stdout, "41.")
    assert.include(diverged.stdout, "42.")
  }, 60_000)

  it("a file that is not a journal, or a session not recorded, is exit 2 saying why", async () => {
    const dir = workdir()
    fs.writeFileSync(path.join(dir, "bad.journal"), "{\"type\":\"journal\",\"version\":1,\"startedAt\":0}\nnot json\n")
    const bad = await run(["replay", "./bad.journal"], { env: { KEEL_HOME: path.join(dir, "h") }, cwd: dir })
    assert.strictEqual(bad.code, 2)
    assert.match(bad.stderr, /bad\.journal line 2: not JSON/)
    const missing = await run(["replay", "0c8e0000-0000-4000-8000-000000000000"], { env: { KEEL_HOME: path.join(dir, "h") }, cwd: dir })
    assert.strictEqual(missing.code, 2)
    assert.match(missing.stderr, /cannot read .*\.journal: no such file/)
    const usage = await run(["replay", "x", "--tools", "sometimes"], { env: {}, cwd: dir })
    assert.strictEqual(usage.code, 2)
    assert.match(usage.stderr, /sometimes/)
  }, 60_000)
})
