/** The journal's text format and the request diff: what a reader of a journal or a divergence sees. */
import { assert, describe, it } from "@effect/vitest"
import { Journal, JournalEntry, ModelError, RequestDiff } from "@keel/core"
import { Effect, Either } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

describe("JournalEntry", () => {
  it("round-trips every line type through text, typed errors included", () => {
    const entries: ReadonlyArray<JournalEntry.Entry> = [
      { type: "journal", version: JournalEntry.VERSION, startedAt: 0 },
      { type: "body", hash: "ab", body: "{\"model\":\"m\"}" },
      { type: "call", call: 1, at: 5, hash: "ab" },
      { type: "chunk", call: 1, at: 7, items: [{ type: "ping" }] },
      { type: "end", call: 1, at: 9, outcome: "failed", error: new ModelError.RateLimited({ message: "slow down", status: 429 }) }
    ]
    const text = entries.map(JournalEntry.encodeLine).join("\n")
    const back = Either.getOrThrow(JournalEntry.parse(text))
    assert.strictEqual(back.map(JournalEntry.encodeLine).join("\n"), text)
    const end = back[4]!
    assert.isTrue(end.type === "end" && end.error instanceof ModelError.RateLimited)
  })

  it("skips blank lines and line types it does not know (later versions may add some)", () => {
    const text = `{"type":"journal","version":1,"startedAt":0}\n\n{"type":"tool","id":"x"}\n{"type":"call","call":1,"at":0,"hash":"h"}\n`
    assert.deepStrictEqual(Either.getOrThrow(JournalEntry.parse(text)).map((e) => e.type), ["journal", "call"])
  })

  it("a line that is not JSON, or a known line that does not match, fails naming the line", () => {
    const notJson = JournalEntry.parse(`{"type":"journal","version":1,"startedAt":0}\n{"type":"call",`)
    assert.isTrue(Either.isLeft(notJson) && notJson.left.line === 2 && notJson.left.message.startsWith("not JSON"))
    const wrong = JournalEntry.parse(`{"type":"call","call":"one","at":0,"hash":"h"}`)
    assert.isTrue(Either.isLeft(wrong) && wrong.left.line === 1 && wrong.left.message.includes("call"))
  })
})

describe("RequestDiff", () => {
  it("names the first differing path: nested keys, array items, absent and extra keys", () => {
    assert.strictEqual(RequestDiff.first({ a: 1 }, { a: 1 }), undefined)
    assert.strictEqual(RequestDiff.first({ m: [{ t: "x" }, { t: "y" }] }, { m: [{ t: "x" }, { t: "z" }] })?.path, "$.m[1].t")
    assert.deepStrictEqual(RequestDiff.first({ m: [1] }, { m: [1, 2] }), { path: "$.m[1]", expected: undefined, actual: 2 })
    assert.deepStrictEqual(RequestDiff.first({ a: 1 }, { a: 1, "b-c": 2 }), { path: "$[\"b-c\"]", expected: undefined, actual: 2 })
    assert.strictEqual(RequestDiff.first({ a: 1, b: 2 }, { b: 2 })?.path, "$.a")
  })

  it("renders text as the differing lines with context, and cuts long values", () => {
    const expected = "one\ntwo\nthree\nfour\nfive"
    const actual = "one\ntwo\nthree\nFOUR\nfive"
    assert.strictEqual(RequestDiff.render({ path: "$", expected, actual }), "  two\n  three\n- four\n+ FOUR")
    const long = Array.from({ length: 30 }, (_, i) => `line ${i}`).join("\n")
    const rendered = RequestDiff.render({ path: "$", expected: undefined, actual: long }, 5)
    assert.include(rendered, "+ … 25 more lines")
    assert.include(rendered, "- (absent)")
  })
})

describe("Journal.layerBeside", () => {
  const call = (n: number): JournalEntry.Entry => ({ type: "call", call: n, at: 0, hash: "h" })

  it.effect("keeps entries until the session attaches its transcript, then writes them beside it; a second process appends", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keel-journal-"))
      const transcript = path.join(dir, "projects", "p", "0c8e.jsonl")
      const runOnce = (seed: number) =>
        Effect.gen(function*() {
          const journal = yield* Journal.Journal
          journal.append(call(1))
          // Nothing is written before the attach (the first process: no file yet).
          if (seed === 7) assert.isFalse(fs.existsSync(Journal.fileOf(transcript)))
          journal.attach(transcript)
          journal.append(call(2))
        }).pipe(Effect.scoped, Effect.provide(Journal.layerBeside(seed)))
      yield* runOnce(7)
      yield* runOnce(8)
      assert.strictEqual(Journal.fileOf(transcript), path.join(dir, "projects", "p", "0c8e.journal"))
      const entries = Either.getOrThrow(JournalEntry.parse(fs.readFileSync(Journal.fileOf(transcript), "utf8")))
      assert.deepStrictEqual(entries.map((e) => e.type === "journal" ? `journal:${e.seed}` : e.type === "call" ? `call:${e.call}` : e.type), [
        "journal:7",
        "call:1",
        "call:2",
        "journal:8",
        "call:1",
        "call:2"
      ])
    }))

  it.effect("a journal that cannot be written stops recording and says why, once; nothing is thrown at the session", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keel-journal-"))
      const blocker = path.join(dir, "file")
      fs.writeFileSync(blocker, "")
      const problem = yield* Effect.gen(function*() {
        const journal = yield* Journal.Journal
        journal.append(call(1))
        // Its folder is a file: the journal cannot be opened.
        journal.attach(path.join(blocker, "s.jsonl"))
        journal.append(call(2))
        return journal.problem()
      }).pipe(Effect.scoped, Effect.provide(Journal.layerBeside(1)))
      assert.match(problem ?? "", /^the journal .*s\.journal cannot be written \(.*\); recording stopped$/)
    }))
})

describe("Journal.layerContinuing", () => {
  const call = (n: number): JournalEntry.Entry => ({ type: "call", call: n, at: 0, hash: "h" })
  const runOnce = (transcript: string) =>
    Effect.gen(function*() {
      const journal = yield* Journal.Journal
      journal.append(call(1))
      const before = journal.active()
      journal.attach(transcript)
      journal.append(call(2))
      return { before, after: journal.active() }
    }).pipe(Effect.scoped, Effect.provide(Journal.layerContinuing()))

  it.effect("a resumed session that was recorded goes on being recorded: its journal is appended to, with a header of no seed", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keel-journal-"))
      const transcript = path.join(dir, "s.jsonl")
      fs.writeFileSync(Journal.fileOf(transcript), JournalEntry.encodeLine({ type: "journal", version: 1, startedAt: 0, seed: 7 }) + "\n")
      assert.deepStrictEqual(yield* runOnce(transcript), { before: true, after: true })
      const entries = Either.getOrThrow(JournalEntry.parse(fs.readFileSync(Journal.fileOf(transcript), "utf8")))
      assert.deepStrictEqual(entries.map((e) => e.type === "journal" ? `journal:${e.seed}` : e.type === "call" ? `call:${e.call}` : e.type), [
        "journal:7",
        "journal:undefined",
        "call:1",
        "call:2"
      ])
    }))

  it.effect("one that was not stays unrecorded: no file, and the recorders are told to do nothing", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keel-journal-"))
      const transcript = path.join(dir, "s.jsonl")
      assert.deepStrictEqual(yield* runOnce(transcript), { before: true, after: false })
      assert.isFalse(fs.existsSync(Journal.fileOf(transcript)))
    }))
})

describe("Journal.configuringEnv", () => {
  it("keeps what configures Keel, never a variable whose name says it holds a secret", () => {
    assert.deepStrictEqual(
      Journal.configuringEnv({
        KEEL_MAX_RETRIES: "3",
        CLAUDE_CODE_MAX_OUTPUT_TOKENS: "9000",
        MAX_THINKING_TOKENS: "1024",
        ANTHROPIC_MODEL: "claude-haiku-4-5",
        ANTHROPIC_API_KEY: "sk-ant-secret",
        CLAUDE_CODE_OAUTH_TOKEN: "secret",
        KEEL_TELEMETRY_AUTH_HEADER: "secret",
        HOME: "/root",
        KEEL_HOME: "/root/.keel",
        PATH: "/bin",
        KEEL_UNSET: undefined
      }),
      { KEEL_MAX_RETRIES: "3", CLAUDE_CODE_MAX_OUTPUT_TOKENS: "9000", MAX_THINKING_TOKENS: "1024", ANTHROPIC_MODEL: "claude-haiku-4-5" }
    )
  })
})
