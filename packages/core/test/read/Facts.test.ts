/**
 * The projections over transcripts written by hand, for what a scripted session does not produce:
 * a transcript from before envelopes (each prompt starts a turn, the policy is not recorded), a
 * compaction whose rewrite carries the summary and a new answer inline, and the diffs of file calls
 * whose content before is known from a whole-file Read, or not known at all.
 */
import { assert, describe, it } from "@effect/vitest"
import { FileEdits, Handoff, Message, ReadModel, ReplayCase, Transcript, TranscriptEntry } from "@keel/core"
import { Either } from "effect"

const cwd = "/project"

/** A transcript's bytes from payloads: the envelope fields filled in, one chain. */
const transcript = (payloads: ReadonlyArray<TranscriptEntry.Payload>): Transcript.Decoded => {
  let parentUuid: string | null = null
  const text = payloads.map((payload, i) => {
    const uuid = `u${i}`
    const entry = { ...payload, uuid, parentUuid, sessionId: "s1", timestamp: new Date(i * 1000).toISOString(), cwd, version: 1 as const }
    parentUuid = uuid
    return TranscriptEntry.encodeLine(entry as TranscriptEntry.Entry)
  }).join("")
  const parsed = Transcript.parseEntries(new TextEncoder().encode(text), { file: "/keel/s1.jsonl", sessionId: "s1" })
  if (Either.isLeft(parsed)) assert.fail(parsed.left.message)
  return parsed.right
}

const answer = (id: string, content: ReadonlyArray<Message.ContentBlock>) =>
  new Message.AssistantMessage({ id, content, model: "claude-sonnet-4-6", stop_reason: content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn" })
const call = (id: string, name: string, input: unknown) => new Message.ToolUseBlock({ id, name, input })
const result = (id: string, content: string, isError = false) =>
  new Message.ToolResultBlock({ tool_use_id: id, content, ...(isError ? { is_error: true } : {}) })

describe("Facts", () => {
  it("a transcript without envelopes: each prompt starts a turn; a compaction's summary and inline answer are found", () => {
    const summary = "The user asked for a README; it was written."
    const decoded = transcript([
      { type: "user", message: Message.user("write a README") },
      { type: "assistant", message: answer("m1", [call("c1", "Write", { file_path: "README.md", content: "hi\n" })]) },
      { type: "user", message: Message.user([result("c1", `File created successfully at: ${cwd}/README.md`)]) },
      { type: "assistant", message: answer("m2", [Message.text("Done.")]) },
      { type: "user", message: Message.user("now shorten it") },
      // A compaction that replaced everything with its summary, and the answer that followed it.
      {
        type: "rewrite",
        trigger: "autocompact",
        compaction: { trigger: "auto", preTokens: 1000, postTokens: 100, durationMs: 5 },
        from: 5,
        length: 2,
        ops: [
          {
            message: Message.user([
              Message.text(`This session is being continued from a previous conversation.\n\n<summary>\n${summary}\n</summary>`),
              Message.text("now shorten it")
            ])
          },
          { message: answer("m3", [Message.text("Shortened.")]) }
        ]
      }
    ])
    const read = ReadModel.make(decoded)
    assert.deepStrictEqual(read.turns.map((t) => [t.turnId, t.prompt, t.envelope, t.requests]), [
      ["u0", "write a README", null, 2],
      ["u4", "now shorten it", null, 1]
    ])
    const write = ReadModel.toolCalls(read)[0]!
    assert.deepStrictEqual(write.decision.outcome, "allowed")
    assert.deepStrictEqual(write.decision.by, "unrecorded")
    assert.deepStrictEqual(read.files.written, [`${cwd}/README.md`])
    assert.deepStrictEqual(read.turns[1]!.items.map((i) => i._tag), ["rewrite", "text"])
    assert.strictEqual(read.turns[1]!.answer, "Shortened.")

    const handoff = Handoff.make(read)
    assert.strictEqual(handoff.summary.compaction, summary)
    assert.include(Handoff.toMarkdown(handoff), `### Earlier conversation (compaction summary)\n\n${summary}`)

    // The answer written inline was a request on the compacted conversation.
    const replay = ReplayCase.make(decoded, ReadModel.headerOf(read))
    const sent = ReplayCase.conversations(replay)
    assert.strictEqual(sent.length, 3)
    assert.strictEqual(sent[2]!.length, 1)
    assert.include(JSON.stringify(Message.toParam(sent[2]![0]!)), "<summary>")
  })
})

describe("FileEdits", () => {
  const calls = (list: ReadonlyArray<Omit<FileEdits.Call, "cwd">>) => FileEdits.track(list.map((c) => ({ ...c, cwd })))

  it("an Edit after a whole-file Read is the whole file's diff; without one, its fragment", () => {
    const { edits, files } = calls([
      { id: "r", name: "Read", input: { file_path: "a.ts" }, output: "     1\tconst a = 1\n     2\tconst b = 2", isError: false },
      { id: "e1", name: "Edit", input: { file_path: "a.ts", old_string: "b = 2", new_string: "b = 3" }, output: "ok", isError: false },
      { id: "e2", name: "Edit", input: { file_path: "b.ts", old_string: "x", new_string: "y" }, output: "ok", isError: false },
      { id: "e3", name: "Edit", input: { file_path: "a.ts", old_string: "a = 1", new_string: "a = 0" }, output: "<tool_use_error>no</tool_use_error>", isError: true }
    ])
    assert.deepStrictEqual(edits.get("e1"), {
      file: `${cwd}/a.ts`,
      baseline: "recorded",
      applied: true,
      patch: `--- ${cwd}/a.ts\n+++ ${cwd}/a.ts\n@@ -1,2 +1,2 @@\n const a = 1\n-const b = 2\n+const b = 3\n`
    })
    assert.deepStrictEqual(edits.get("e2"), {
      file: `${cwd}/b.ts`,
      baseline: "fragment",
      applied: true,
      patch: `--- ${cwd}/b.ts\n+++ ${cwd}/b.ts\n@@ -1,1 +1,1 @@\n-x\n+y\n`
    })
    // A failed edit shows what it asked for, and does not move the content on.
    assert.strictEqual(edits.get("e3")!.applied, false)
    assert.include(edits.get("e3")!.patch, "-const a = 1\n+const a = 0\n const b = 3")
    assert.deepStrictEqual(files.map((f) => [f.file, f.calls, f.created, f.patch !== null]), [
      [`${cwd}/a.ts`, ["e1"], false, true],
      [`${cwd}/b.ts`, ["e2"], false, false]
    ])
  })

  it("a partial Read gives no content; a Write over unknown content is shown against an empty file", () => {
    const { edits, files } = calls([
      { id: "r", name: "Read", input: { file_path: "c.ts", offset: 2 }, output: "     2\tb\n\n(Lines 2-2 of 3. Use offset and limit to read other parts.)", isError: false },
      { id: "w", name: "Write", input: { file_path: "c.ts", content: "new\n" }, output: `The file ${cwd}/c.ts has been updated.`, isError: false }
    ])
    assert.deepStrictEqual(edits.get("w"), {
      file: `${cwd}/c.ts`,
      baseline: "unknown",
      applied: true,
      patch: `--- /dev/null\n+++ ${cwd}/c.ts\n@@ -0,0 +1,1 @@\n+new\n`
    })
    assert.isNull(files[0]!.patch)
  })
})
