/**
 * The parts of a compaction, each on its own: what is kept of the summary answer (the analysis
 * dropped, the tags stripped), the tail kept verbatim (the last tool round), the summary request
 * (the conversation's own, the instruction last, the breakpoint where the previous request had it),
 * and the files re-attached within their budget (large ones named).
 */
import { NodeContext } from "@effect/platform-node"
import * as FileSystem from "@effect/platform/FileSystem"
import { assert, describe, it } from "@effect/vitest"
import { Compaction, FileRestore, Message, type ModelRequest, PromptCaching, Summary, SummaryPrompt } from "@keel/core"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const call = (id: string, input: object = {}) =>
  new Message.AssistantMessage({ content: [new Message.ToolUseBlock({ id, name: "Read", input })] })
const result = (id: string, text = "ok") =>
  new Message.UserMessage({ content: [new Message.ToolResultBlock({ tool_use_id: id, content: text })] })
const answer = (text: string) => new Message.AssistantMessage({ content: [new Message.TextBlock({ text })] })

describe("SummaryPrompt.summaryText", () => {
  it("drops the analysis and keeps the summary without its tags", () => {
    assert.strictEqual(
      SummaryPrompt.summaryText("<analysis>\nscratch <summary>not this</summary>\n</analysis>\n<summary>\n1. Intent\n</summary>\ntrailer"),
      "1. Intent"
    )
  })
  it("keeps an answer without tags whole, and what follows an unclosed <summary>", () => {
    assert.strictEqual(SummaryPrompt.summaryText("  plain summary  "), "plain summary")
    assert.strictEqual(SummaryPrompt.summaryText("<analysis>a</analysis><summary>cut off"), "cut off")
    assert.strictEqual(SummaryPrompt.summaryText("<analysis>never closed"), "")
  })
  it("finds the summary in the opening of a compacted conversation, tagged (older transcripts) or not", () => {
    assert.strictEqual(SummaryPrompt.summaryIn(SummaryPrompt.continuation("1. Intent\n2. Concepts")), "1. Intent\n2. Concepts")
    assert.strictEqual(SummaryPrompt.summaryIn("Earlier:\n\n<summary>\nold\n</summary>"), "old")
    assert.isUndefined(SummaryPrompt.summaryIn("a prompt"))
  })
  it("asks for the analysis first, the nine sections, text only, constraints verbatim, and the user's instructions", () => {
    const text = SummaryPrompt.prompt("focus on the API")
    assert.isTrue(text.startsWith(SummaryPrompt.HEADING))
    assert.isBelow(text.indexOf("<analysis>"), text.indexOf("<summary>"))
    SummaryPrompt.SECTIONS.forEach((title, i) => assert.include(text, `${i + 1}. ${title}`))
    assert.include(text, "Do not call any tool")
    assert.include(text, "word for word")
    assert.isTrue(text.endsWith("focus on the API"))
  })
})

describe("Compaction.lastToolRound", () => {
  const prompt = Message.user("go")
  it("is the answer with tool calls and their results when the conversation ends in them", () => {
    assert.strictEqual(Compaction.lastToolRound([prompt, call("a"), result("a"), call("b"), result("b")], 1_000), 3)
  })
  it("is absent when the conversation ends otherwise, or the round is over the budget", () => {
    assert.isUndefined(Compaction.lastToolRound([prompt, call("a"), result("a"), answer("done")], 1_000))
    assert.isUndefined(Compaction.lastToolRound([prompt, answer("done"), Message.user("next")], 1_000))
    assert.isUndefined(Compaction.lastToolRound([prompt, call("a"), result("a", "x".repeat(4_000))], 500))
  })
  it("assembles the opening before a kept round as its own message", () => {
    const opening = [new Message.TextBlock({ text: "summary" })]
    const round = [call("a"), result("a")]
    const out = Compaction.assemble(opening, round, true)
    assert.deepStrictEqual(out.map((m) => m.role), ["user", "assistant", "user"])
    assert.strictEqual(out[1], round[0])
    assert.deepStrictEqual(Compaction.assemble(opening, [], false).map((m) => m.content), [opening])
  })
})

describe("Summary.requestFor", () => {
  const shape = {
    model: "claude-sonnet-4-6",
    max_tokens: 32_000,
    system: [{ type: "text" as const, text: "stable" }, { type: "text" as const, text: "session" }],
    systemStableBlocks: 1,
    tools: [{ name: "Read", description: "reads", input_schema: { type: "object" as const } }],
    params: { temperature: 0 },
    thinking: { effort: "high" as const }
  }
  const context = { model: "claude-sonnet-4-6", iteration: 3, sessionId: "s", maxTokens: 32_000, request: shape }
  // The previous request was [prompt] (answered by a tool call); the results came since.
  const conversation = [Message.user("read it"), call("a"), result("a")]

  it("is the conversation's request with the instruction merged into its last user message", () => {
    const request = Summary.requestFor(conversation, context, "keep the API", true)
    const { messages, source, cacheTailAt, ...rest } = request
    assert.deepStrictEqual(rest, shape)
    assert.strictEqual(source, "background")
    assert.strictEqual(cacheTailAt, 0)
    assert.strictEqual(messages.length, 3)
    assert.deepStrictEqual(messages.slice(0, 2), conversation.slice(0, 2))
    const last = messages[2]!.content as ReadonlyArray<Message.ContentBlock>
    assert.strictEqual(last[0], (conversation[2]!.content as ReadonlyArray<Message.ContentBlock>)[0])
    assert.include((last[1] as Message.TextBlock).text, "keep the API")
  })

  it("puts the tail breakpoint where the previous request had it, and none after", () => {
    const previous: ModelRequest.ModelRequest = { ...shape, messages: conversation.slice(0, 1), source: "foreground" }
    const marked = PromptCaching.mark(previous)
    const summary = PromptCaching.mark(Summary.requestFor(conversation, context, undefined, true))
    assert.deepStrictEqual(summary.system, marked.system)
    assert.deepStrictEqual(summary.tools, marked.tools)
    assert.strictEqual(summary.messages[0], marked.messages[0])
    assert.notInclude(JSON.stringify(summary.messages.slice(1)), "cache_control")
  })

  it("shares no cache for a shortened conversation, and finds no previous request before an answer", () => {
    assert.isUndefined(Summary.requestFor(conversation, context, undefined, false).cacheTailAt)
    assert.isUndefined(Summary.previousTail([Message.user("first")]))
    assert.strictEqual(Summary.previousTail([Message.user("a"), answer("b"), Message.user("c"), answer("d")]), 2)
  })
})

describe("FileRestore.restoredFiles", () => {
  it.effect("attaches small files as on disk now, names large ones with their size, skips the kept ones", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keel-restore-"))
      fs.writeFileSync(path.join(dir, "small.txt"), "small now")
      fs.writeFileSync(path.join(dir, "large.txt"), "x".repeat(9_000))
      fs.writeFileSync(path.join(dir, "kept.txt"), "kept")
      const messages = [
        Message.user("go"),
        call("1", { file_path: "large.txt" }),
        result("1"),
        call("2", { file_path: "small.txt" }),
        result("2"),
        call("3", { file_path: "gone.txt" }),
        result("3"),
        call("4", { file_path: "kept.txt" }),
        result("4")
      ]
      const blocks = yield* FileRestore.restoredFiles(yield* FileSystem.FileSystem, {}, messages, messages.slice(-2), dir)
      assert.deepStrictEqual(blocks.map((b) => b.text), [
        SummaryPrompt.attachedFile("small.txt", "small now"),
        SummaryPrompt.listedFiles([{ path: "large.txt", bytes: 9_000 }])
      ])
      // Past the total budget (here 4 characters), a small file is named too.
      const tight = yield* FileRestore.restoredFiles(yield* FileSystem.FileSystem, { restoreTokensTotal: 1 }, messages, [], dir)
      assert.deepStrictEqual(tight.map((b) => b.text), [
        SummaryPrompt.attachedFile("kept.txt", "kept"),
        SummaryPrompt.listedFiles([{ path: "small.txt", bytes: 9 }, { path: "large.txt", bytes: 9_000 }])
      ])
    }).pipe(Effect.provide(NodeContext.layer)))
})
