/**
 * End to end, `keel -p --record` against the loopback fake of the Messages API: the session's
 * journal is written beside its transcript (`<session id>.journal`): every request body byte for
 * byte as the server received it (once per distinct body), the 429 that was retried, each stream's
 * reads, the tool call with its input and output, and the turn with its prompt. The journal's calls
 * are what `ReplayModel` serves. Without `--record` (or `KEEL_RECORD=1`) there is no journal.
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
  return { server, transcript, journal: Journal.fileOf(transcript) }
}

describe("keel --record", () => {
  it("journals every call beside the transcript: bodies as sent, the 429, the reads, the tool call and the turn", async () => {
    const { journal, server, transcript } = await session(["--record"])
    assert.isTrue(fs.existsSync(transcript))
    assert.strictEqual(journal, transcript.replace(/\.jsonl$/, ".journal"))
    const entries = Either.getOrThrow(JournalEntry.parse(fs.readFileSync(journal, "utf8")))
    const header = entries[0]!
    assert.isTrue(header.type === "journal" && header.version === JournalEntry.VERSION && typeof header.seed === "number")
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

  it("KEEL_RECORD=1 records too; without either there is no journal", async () => {
    const recorded = await session([], { KEEL_RECORD: "1" })
    assert.isTrue(fs.existsSync(recorded.journal))
    const plain = await session([])
    assert.isTrue(fs.existsSync(plain.transcript))
    assert.isFalse(fs.existsSync(plain.journal))
  }, 60_000)
})
