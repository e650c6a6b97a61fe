/**
 * Transcripts, pure and through the recorder (in memory): a conversation changed by the real
 * context stages, or by arbitrary edits, is written as appends and rewrites and replays to exactly
 * the same messages; and what `parse` makes of files that are cut, corrupt or not Keel's.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  ContextCollapse,
  Ids,
  Message,
  Microcompact,
  SessionState,
  SessionStore,
  Snip,
  TestModel,
  TokenUsage,
  Transcript,
  TranscriptEntry,
  TranscriptRecorder
} from "@keel/core"
import { Effect, Either, FastCheck, Option, Ref } from "effect"
import * as Conversations from "./support/Conversations.js"
import { plain } from "./support/Sessions.js"

const cwd = "/work/project"
const encoder = new TextEncoder()
const bytes = (text: string) => encoder.encode(text)

/** A recorder over an in-memory store for session `id`, with its state and store. */
const recorded = (id: string, messages: ReadonlyArray<Message.Message> = []) =>
  Effect.gen(function*() {
    const store = SessionStore.make({ home: "/keel", files: SessionStore.memoryFiles() })
    const state = yield* SessionState.make(id, messages)
    const recorder = yield* TranscriptRecorder.make({
      store,
      cwd,
      sessionId: id,
      state,
      primaryModel: Effect.succeed("claude-test"),
      uuid: Ids.seeded(1).uuid
    })
    return { store, state, recorder, load: store.load(cwd, id) }
  })

/** `messages` changed by `choices`: each message kept, dropped, replaced or followed by a new one. */
const edit = (messages: ReadonlyArray<Message.Message>, choices: ReadonlyArray<number>): Array<Message.Message> => {
  const out: Array<Message.Message> = []
  messages.forEach((m, i) => {
    const c = choices[i % choices.length] ?? 0
    if (c === 1) return
    if (c === 2) out.push(Message.user(`replacement of ${i}`))
    else out.push(m)
    if (c === 3) out.push(Message.user(`inserted after ${i}`))
  })
  return out
}

describe("Transcript.diff", () => {
  it("appends when the conversation starts with what the file holds, and rewrites with ranges otherwise", () => {
    const [a, b, c, d] = [Message.user("a"), Message.user("b"), Message.user("c"), Message.user("d")]
    assert.deepStrictEqual(Transcript.diff([a, b], [a, b]), { _tag: "Unchanged" })
    assert.deepStrictEqual(Transcript.diff([a, b], [a, b, c]), { _tag: "Append", messages: [c] })
    // The same text in a new object is a new message: identity, not value, decides.
    const b2 = Message.user("b")
    assert.deepStrictEqual(Transcript.diff([a, b, c], [a, b2, c, d]), {
      _tag: "Rewrite",
      from: 3,
      length: 4,
      ops: [{ keep: [0, 1] }, { message: b2 }, { keep: [2, 3] }, { message: d }]
    })
    // A compaction: everything replaced by one message, the last kept.
    assert.deepStrictEqual(Transcript.diff([a, b, c], [d, c]), {
      _tag: "Rewrite",
      from: 3,
      length: 2,
      ops: [{ message: d }, { keep: [2, 3] }]
    })
  })
})

describe("TranscriptRecorder", () => {
  it.effect("the real stages' rewrites (snip, microcompact, collapse) and arbitrary edits replay to the same messages", () =>
    Effect.gen(function*() {
      const shapes = FastCheck.sample(Conversations.shapes, { numRuns: 40, seed: 7 })
      const choices = FastCheck.sample(FastCheck.array(FastCheck.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 9 }), {
        numRuns: 40,
        seed: 11
      })
      let rewrites = 0
      for (const [n, shape] of shapes.entries()) {
        const id = `session-${n}`
        const { load, recorder, state } = yield* recorded(id, Conversations.build(shape))
        assert.deepStrictEqual(yield* recorder.checkpoint({ sync: true }), [])
        const steps: ReadonlyArray<(ms: ReadonlyArray<Message.Message>) => ReadonlyArray<Message.Message>> = [
          (ms) => Snip.snip(ms).messages,
          (ms) => Microcompact.clear(ms, { keepRecent: 1, tools: ["Read"] }).messages,
          (ms) => ContextCollapse.collapse(ms, { verbatimTurns: 1, summarizedTurns: 2 }).messages,
          (ms) => edit(ms, choices[n]!),
          (ms) => [...ms, Message.user("one more")]
        ]
        for (const step of steps) {
          const before = yield* Ref.get(state.messages)
          const after = step(before)
          if (after !== before && Transcript.diff(before, after)._tag === "Rewrite") rewrites++
          yield* Ref.set(state.messages, after)
          recorder.note({ stage: "test", report: "changed" })
          assert.deepStrictEqual(yield* recorder.checkpoint(), [])
          const loaded = yield* load
          assert.deepStrictEqual(plain(loaded.messages), plain(after))
          assert.deepStrictEqual(loaded.warnings, [])
        }
      }
      // The samples did exercise rewrites, not only appends.
      assert.isAbove(rewrites, 40)
    }))

  it.effect("a rewrite entry costs what changed: ranges for kept messages, inline only the new ones", () =>
    Effect.gen(function*() {
      const history = Array.from({ length: 200 }, (_, i) => Message.user(`message ${i} ` + "x".repeat(1_000)))
      const { recorder, state, store } = yield* recorded("big", history)
      yield* recorder.checkpoint()
      const before = (yield* store.list(cwd))[0]!.size
      const replaced = [...history]
      replaced[100] = Message.user("replaced")
      yield* Ref.set(state.messages, replaced)
      recorder.note({ stage: "snip", report: "replaced 1" })
      yield* recorder.checkpoint()
      const after = (yield* store.list(cwd))[0]!.size
      const loaded = yield* store.load(cwd, "big")
      assert.deepStrictEqual(plain(loaded.messages), plain(replaced))
      // 200 messages of ~1 KB, then one rewrite line of well under 1 KB (envelope, two ranges, one message).
      assert.isAbove(before, 200 * 1_000)
      assert.isBelow(after - before, 600)
    }))

  it.effect("usage, file state and model changes are entries; loading restores them", () =>
    Effect.gen(function*() {
      const { load, recorder, state } = yield* recorded("totals", [Message.user("hi")])
      yield* Ref.set(state.model, "claude-test")
      yield* Ref.update(state.usage, (u) =>
        TokenUsage.addTo(u, "claude-test", TokenUsage.fromResponse(new Message.Usage({ input_tokens: 7, output_tokens: 3 }))))
      yield* Ref.set(state.fileState, new Map([["/a", 1], ["/b", 2]]))
      yield* recorder.checkpoint()
      yield* Ref.set(state.model, "claude-fallback")
      yield* Ref.update(state.usage, (u) =>
        TokenUsage.addTo(u, "claude-fallback", TokenUsage.fromResponse(new Message.Usage({ input_tokens: 1, output_tokens: 1 }))))
      yield* Ref.update(state.fileState, (m) => new Map(m).set("/b", 5))
      yield* recorder.checkpoint()
      const loaded = yield* load
      assert.deepStrictEqual([...loaded.fileState], [["/a", 1], ["/b", 5]])
      assert.deepStrictEqual(loaded.usage.get("claude-test")?.inputTokens, 7)
      assert.deepStrictEqual(loaded.usage.get("claude-fallback")?.requests, 1)
      // The last call was on a fallback: a resumed session goes back to the session's own model.
      assert.deepStrictEqual([loaded.model, loaded.lastModel], ["claude-test", "claude-fallback"])
    }))
})

/** A transcript's text from entries `payloads`, chained, for session `id`. */
const transcript = (id: string, payloads: ReadonlyArray<TranscriptEntry.Payload>): string => {
  let parent: string | null = null
  let out = ""
  payloads.forEach((payload, i) => {
    const uuid = `uuid-${i}`
    out += TranscriptEntry.encodeLine({
      ...payload,
      uuid,
      parentUuid: parent,
      sessionId: id,
      timestamp: "2026-01-01T00:00:00.000Z",
      cwd,
      version: 1
    } as TranscriptEntry.Entry)
    parent = uuid
  })
  return out
}

const file = "/keel/projects/x/s.jsonl"
const parse = (text: string | Uint8Array, sessionId = "s") =>
  Transcript.parse(typeof text === "string" ? bytes(text) : text, { file, sessionId })

const call = TestModel.toolUse("Read", { file_path: "/a" }, "toolu_1")
const basic: ReadonlyArray<TranscriptEntry.Payload> = [
  { type: "user", message: Message.user("hello") },
  { type: "assistant", message: TestModel.message([call]) },
  { type: "user", message: Message.user([new Message.ToolResultBlock({ tool_use_id: "toolu_1", content: "a" })]) },
  { type: "assistant", message: TestModel.message([Message.text("done")]) }
]

describe("Transcript.parse", () => {
  it("replays a well-formed transcript; the first prompt is known", () => {
    const loaded = Either.getOrThrow(parse(transcript("s", basic)))
    assert.strictEqual(loaded.messages.length, 4)
    assert.strictEqual(loaded.firstPrompt, "hello")
    assert.strictEqual(loaded.lastUuid, "uuid-3")
    assert.deepStrictEqual(loaded.tail, { validBytes: bytes(transcript("s", basic)).length, truncated: false, missingNewline: false })
  })

  it("a truncated last line is skipped with a warning naming the file and line; the rest replays", () => {
    const whole = transcript("s", basic)
    const cut = whole.slice(0, whole.length - 40)
    const loaded = Either.getOrThrow(parse(cut))
    assert.strictEqual(loaded.messages.length, 3)
    assert.deepStrictEqual(loaded.warnings, [
      `${file}:4: the last line is incomplete (the process stopped while writing it); it was skipped`
    ])
    assert.isTrue(loaded.tail.truncated)
    assert.strictEqual(loaded.tail.validBytes, bytes(transcript("s", basic.slice(0, 3))).length)
  })

  it("a UTF-8 sequence cut by the truncation is a truncated line too", () => {
    const whole = bytes(transcript("s", [...basic, { type: "user", message: Message.user("é".repeat(20)) }]))
    const loaded = Either.getOrThrow(parse(whole.slice(0, whole.length - 30)))
    assert.strictEqual(loaded.messages.length, 4)
    assert.strictEqual(loaded.warnings.length, 1)
  })

  it("a corrupt line in the middle: the replay stops there, with one warning naming the file and the line", () => {
    const lines = transcript("s", basic).split("\n")
    lines[2] = lines[2]!.slice(0, 30)
    const loaded = Either.getOrThrow(parse(lines.join("\n")))
    // The entries after it chain from the line that is lost: they are skipped too.
    assert.strictEqual(loaded.messages.length, 2)
    assert.strictEqual(loaded.lastUuid, "uuid-1")
    assert.strictEqual(loaded.warnings.length, 1)
    assert.match(loaded.warnings[0]!, new RegExp(`^${file}: 2 lines could not be replayed, from line 3 \\(it is not JSON`))
    assert.include(loaded.warnings[0]!, "keel doctor s repairs the file")
    // Nothing is cut when the file is continued: only a torn last line would be.
    assert.isFalse(loaded.tail.truncated)
    assert.strictEqual(loaded.tail.validBytes, bytes(lines.join("\n")).length)
  })

  it("entries appended after a torn line chain from the last valid entry, and replay", () => {
    const lines = transcript("s", basic).split("\n").filter((l) => l !== "")
    lines[2] = "{not json"
    const next = JSON.parse(lines[3]!)
    const appended = JSON.stringify({ ...next, uuid: "uuid-new", parentUuid: "uuid-1" })
    const decoded = Either.getOrThrow(Transcript.parseEntries(bytes([...lines, appended].join("\n") + "\n"), { file, sessionId: "s" }))
    assert.deepStrictEqual(decoded.entries.map((e) => e.uuid), ["uuid-0", "uuid-1", "uuid-new"])
    assert.deepStrictEqual(decoded.dropped.map((d) => d.line), [3, 4])
    assert.deepStrictEqual(decoded.lines.length, 3)
  })

  it("an entry that does not decode, a broken chain, another session's entry, a bad rewrite: skipped, by line", () => {
    const lines = transcript("s", basic).split("\n")
    const cases: ReadonlyArray<readonly [(ls: Array<string>) => void, number, string]> = [
      [(ls) => (ls[1] = ls[1]!.replace("\"role\":\"assistant\"", "\"role\":\"robot\"")), 2, "a \"assistant\" entry that does not decode: message.role"],
      [(ls) => (ls[2] = ls[2]!.replace("\"parentUuid\":\"uuid-1\"", "\"parentUuid\":\"uuid-0\"")), 3, "does not follow"],
      [(ls) => (ls[3] = ls[3]!.replace("\"sessionId\":\"s\"", "\"sessionId\":\"other\"")), 4, "an entry of session other"],
      [(ls) => (ls[1] = ls[1]!.replace("\"type\":\"assistant\"", "\"type\":\"musing\"")), 2, "unknown entry type \"musing\""]
    ]
    for (const [mutate, line, reason] of cases) {
      const copy = [...lines]
      mutate(copy)
      const decoded = Either.getOrThrow(Transcript.parseEntries(bytes(copy.join("\n")), { file, sessionId: "s" }))
      assert.strictEqual(decoded.dropped[0]!.line, line, reason)
      assert.include(decoded.dropped[0]!.reason, reason)
      assert.strictEqual(decoded.loaded.entries, line - 1, reason)
      assert.include(decoded.loaded.warnings[0]!, reason)
    }
    const rewrite = transcript("s", [...basic, {
      type: "rewrite",
      trigger: "snip",
      from: 4,
      length: 2,
      ops: [{ keep: [2, 9] }]
    }])
    const decoded = Either.getOrThrow(Transcript.parseEntries(bytes(rewrite), { file, sessionId: "s" }))
    assert.deepStrictEqual(decoded.dropped, [{ line: 5, reason: "a rewrite keeps messages [2, 9) of 4" }])
    assert.strictEqual(decoded.loaded.messages.length, 4)
  })

  it("a first entry that does not replay is still corrupt: there is nothing to resume from", () => {
    const lines = transcript("s", basic).split("\n")
    lines[0] = lines[0]!.replace("\"role\":\"user\"", "\"role\":\"robot\"")
    const error = Either.getLeft(parse(lines.join("\n"))).pipe(Option.getOrThrow)
    assert.deepStrictEqual([error._tag, error.line], ["CorruptTranscript", 1])
  })

  it("a file that is not a Keel transcript of this session is foreign", () => {
    const claudeCode = JSON.stringify({
      parentUuid: null,
      isSidechain: false,
      type: "user",
      message: { role: "user", content: "hi" },
      uuid: "u1",
      timestamp: "2026-01-01T00:00:00.000Z",
      cwd,
      sessionId: "s",
      version: "2.1.87"
    }) + "\n"
    const cases: ReadonlyArray<readonly [string, string, string]> = [
      [claudeCode, "s", "carry version \"2.1.87\", another program's"],
      ["hello world\n", "s", "it is not JSON"],
      [transcript("other", basic), "s", "it is the transcript of session other"],
      [transcript("s", basic).replace("\"version\":1", "\"version\":2"), "s", "transcript format 2, newer than this Keel reads"]
    ]
    for (const [text, id, reason] of cases) {
      const error = Either.getLeft(parse(text, id)).pipe(Option.getOrThrow)
      assert.strictEqual(error._tag, "ForeignTranscript", reason)
      assert.strictEqual(error.line, 1)
      assert.include(error.message, reason)
      assert.include(error.message, `${file}:1: not a Keel transcript of this session`)
    }
  })

  it("the file's text, read whole, replays as its lines read one by one: byte ranges, marks, a line not UTF-8", () => {
    const wide: ReadonlyArray<TranscriptEntry.Payload> = [
      ...basic,
      { type: "user", message: Message.user("é ✓ 😀 ".repeat(5)) },
      { type: "assistant", message: TestModel.message([Message.text("ünïcödé")]) }
    ]
    const lines = transcript("s", wide).split("\n")
    // A byte order mark at the start of the file and before a line in the middle: each is dropped
    // as the decoder drops it at the start of what it decodes.
    lines[0] = "\uFEFF" + lines[0]
    lines[4] = "\uFEFF" + lines[4]
    const whole = bytes(lines.join("\n"))
    const decoded = Either.getOrThrow(Transcript.parseEntries(whole, { file, sessionId: "s" }))
    assert.strictEqual(decoded.loaded.messages.length, 6)
    assert.deepStrictEqual(decoded.dropped, [])
    assert.strictEqual(decoded.loaded.firstPrompt, "hello")
    // Each entry's byte range is its line's bytes, after the characters of more than one byte.
    const decoder = new TextDecoder()
    decoded.lines.forEach(([start, end], i) =>
      assert.strictEqual(JSON.parse(decoder.decode(whole.subarray(start, end))).uuid, decoded.entries[i]!.uuid)
    )
    assert.strictEqual(decoded.loaded.tail.validBytes, whole.length)
    // A line that is not UTF-8 is dropped, by line, and the lines after it still replay.
    const bad = new Uint8Array([...bytes(lines.slice(0, 2).join("\n") + "\n"), 0xff, 0xfe, 0x0a, ...bytes(lines.slice(2).join("\n"))])
    const torn = Either.getOrThrow(Transcript.parseEntries(bad, { file, sessionId: "s" }))
    assert.deepStrictEqual(torn.dropped[0], { line: 3, reason: "it is not UTF-8 text" })
    assert.strictEqual(torn.loaded.messages.length, 6)
    assert.strictEqual(torn.loaded.tail.validBytes, bad.length)
  })

  it("an empty file is an empty session; blank lines are ignored; a last entry without its newline counts", () => {
    assert.strictEqual(Either.getOrThrow(parse("")).messages.length, 0)
    const text = transcript("s", basic)
    const loaded = Either.getOrThrow(parse(text.replace("\n", "\n\n").slice(0, -1)))
    assert.strictEqual(loaded.messages.length, 4)
    assert.isTrue(loaded.tail.missingNewline)
    assert.isFalse(loaded.tail.truncated)
  })
})

describe("Transcript.answerDangling", () => {
  it("answers every call left without a result, as interrupted, keeping the other messages as they are", () => {
    const prompt = Message.user("go")
    const asked = TestModel.message([TestModel.toolUse("Read", { file_path: "/a" }, "t1"), TestModel.toolUse("Read", { file_path: "/b" }, "t2")])
    const partial = Message.user([new Message.ToolResultBlock({ tool_use_id: "t1", content: "a" })])
    const later = Message.user("later")
    const repaired = Transcript.answerDangling([prompt, asked])
    assert.strictEqual(repaired.length, 3)
    assert.strictEqual(repaired[0], prompt)
    assert.deepStrictEqual((repaired[2] as Message.UserMessage).toolResults.map((r) => [r.tool_use_id, r.is_error]), [
      ["t1", true],
      ["t2", true]
    ])
    const middle = Transcript.answerDangling([prompt, asked, partial, later])
    assert.deepStrictEqual((middle[2] as Message.UserMessage).toolResults.map((r) => r.tool_use_id), ["t1", "t2"])
    assert.strictEqual(middle[3], later)
    const whole = [prompt, asked, Message.user([...partial.toolResults, new Message.ToolResultBlock({ tool_use_id: "t2", content: "b" })])]
    assert.strictEqual(Transcript.answerDangling(whole), whole)
  })
})
