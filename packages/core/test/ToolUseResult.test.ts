/**
 * A tool call's structured result (`Tool.Structured`) on its way: onto the tool_result block
 * (`toolUseResult`) by the runtime, never into the API payload, through the transcript and back
 * (old transcripts without it still load), and out as `tool_use_result` on the stream-json `user`
 * message, one message per result as Claude Code sends them.
 */
import { assert, describe, it } from "@effect/vitest"
import { Message, SdkProjection, TestModel, Tool, ToolRuntime, Transcript, TranscriptEntry } from "@keel/core"
import { Either } from "effect"

const stamp = (): SdkProjection.Stamp => {
  let n = 0
  return { sessionId: "s", uuid: () => `u${++n}`, parentToolUseId: null }
}

const read = new Message.ToolResultBlock({
  tool_use_id: "toolu_read",
  content: "     1\thello",
  toolUseResult: { type: "text", file: { filePath: "/a", content: "hello", numLines: 1, startLine: 1, totalLines: 1 } }
})
const bash = new Message.ToolResultBlock({
  tool_use_id: "toolu_bash",
  content: "out",
  toolUseResult: { stdout: "out", stderr: "", interrupted: false, isImage: false, noOutputExpected: false }
})

describe("the structured result of a call", () => {
  it("Tool.structured carries output and result; outputOf and structuredOf read either kind of call result", () => {
    const s = Tool.structured("text", { a: 1 })
    assert.deepStrictEqual([Tool.outputOf(s), Tool.structuredOf(s)], ["text", { a: 1 }])
    assert.deepStrictEqual([Tool.outputOf("plain"), Tool.structuredOf("plain")], ["plain", undefined])
    const blocks = [Message.text("x")]
    assert.strictEqual(Tool.outputOf(blocks), blocks)
  })

  it("is never sent to the API", () => {
    const param = Message.toParam(Message.user([read, bash])) as any
    assert.deepStrictEqual(param.content, [
      { type: "tool_result", tool_use_id: "toolu_read", content: "     1\thello" },
      { type: "tool_result", tool_use_id: "toolu_bash", content: "out" }
    ])
  })

  it("an error result carries its message as Claude Code gives it: Error: ...", () => {
    assert.strictEqual(ToolRuntime.errorResult("t", "Exit code 3\nout").toolUseResult, "Error: Exit code 3\nout")
    assert.strictEqual(ToolRuntime.errorResult("t", "Error: No such tool available: X").toolUseResult, "Error: No such tool available: X")
  })

  it("is kept in the transcript, and a transcript written without it still loads", () => {
    const lines = (results: ReadonlyArray<Message.ToolResultBlock>) => {
      const payloads: ReadonlyArray<TranscriptEntry.Payload> = [
        { type: "user", message: Message.user("go") },
        { type: "assistant", message: TestModel.message([TestModel.toolUse("Read", { file_path: "/a" }, "toolu_read")]) },
        { type: "user", message: Message.user(results) }
      ]
      let parent: string | null = null
      return payloads.map((payload, i) => {
        const line = TranscriptEntry.encodeLine({
          ...payload,
          uuid: `uuid-${i}`,
          parentUuid: parent,
          sessionId: "s",
          timestamp: "2026-01-01T00:00:00.000Z",
          cwd: "/p",
          version: 1
        } as TranscriptEntry.Entry)
        parent = `uuid-${i}`
        return line
      }).join("")
    }
    const text = lines([read])
    assert.include(text, `"toolUseResult":{"type":"text"`)
    const load = (t: string) => Either.getOrThrow(Transcript.parse(new TextEncoder().encode(t), { file: "/t.jsonl", sessionId: "s" }))
    const loaded = load(text)
    const block = (loaded.messages[2] as Message.UserMessage).toolResults[0]!
    assert.deepStrictEqual(block.toolUseResult, read.toolUseResult)
    const old = load(lines([new Message.ToolResultBlock({ tool_use_id: "toolu_read", content: "     1\thello" })]))
    assert.strictEqual((old.messages[2] as Message.UserMessage).toolResults[0]!.toolUseResult, undefined)
  })

  it("goes out as tool_use_result, one user message per result (as Claude Code), each with its own", () => {
    const out: Array<any> = []
    SdkProjection.turnEvent({ _tag: "ToolResults", message: Message.user([read, bash]) }, stamp(), "m", out)
    assert.deepStrictEqual(out.map((m) => [m.type, m.message.content.map((b: any) => b.tool_use_id), m.tool_use_result]), [
      ["user", ["toolu_read"], read.toolUseResult],
      ["user", ["toolu_bash"], bash.toolUseResult]
    ])
    assert.notProperty(out[0].message.content[0], "toolUseResult")
    assert.deepStrictEqual(out.map((m) => m.uuid), ["u1", "u2"])
    // A result without a structured result goes without tool_use_result.
    const bare: Array<any> = []
    SdkProjection.turnEvent({ _tag: "ToolResults", message: Message.user([new Message.ToolResultBlock({ tool_use_id: "t", content: "x" })]) }, stamp(), "m", bare)
    assert.notProperty(bare[0], "tool_use_result")
  })
})
