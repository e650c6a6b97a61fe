/**
 * An answer as Claude Code prints it in `stream-json`: one `assistant` message per content block,
 * each with the answer's id, usage and stop reason; other messages, and one-block answers, unchanged.
 */
import { assert, describe, it } from "@effect/vitest"
import { Message, SdkBlocks, SdkProjection, TokenUsage } from "@keel/core"

const stamp = (() => {
  let n = 0
  return () => `uuid-${++n}`
})()

const answer = (content: ReadonlyArray<Message.ContentBlock>) => ({
  type: "assistant" as const,
  message: SdkProjection.apiMessage(
    new Message.AssistantMessage({ id: "msg_1", model: "claude-test", content: [...content], stop_reason: "tool_use" }),
    "claude-test",
    TokenUsage.zero
  ),
  parent_tool_use_id: null,
  uuid: "first",
  session_id: "s"
})

describe("SdkBlocks.perBlock", () => {
  it("text and two tool calls: three messages, same id and usage, one block each, the first keeps its uuid", () => {
    const whole = answer([
      new Message.TextBlock({ text: "Reading." }),
      new Message.ToolUseBlock({ id: "toolu_1", name: "Read", input: {} }),
      new Message.ToolUseBlock({ id: "toolu_2", name: "Read", input: {} })
    ])
    const parts = SdkBlocks.perBlock(whole, stamp)
    assert.deepStrictEqual(
      parts.map((p) => p.type === "assistant" && [p.message.id, p.message.stop_reason, p.message.content.length]),
      [["msg_1", "tool_use", 1], ["msg_1", "tool_use", 1], ["msg_1", "tool_use", 1]]
    )
    assert.deepStrictEqual(parts.map((p) => p.uuid), ["first", "uuid-1", "uuid-2"])
    for (const p of parts) assert.deepStrictEqual(p.type === "assistant" && p.message.usage, whole.message.usage)
  })

  it("a one-block answer is printed as it is", () => {
    const one = answer([new Message.TextBlock({ text: "Done." })])
    assert.deepStrictEqual(SdkBlocks.perBlock(one, stamp), [one])
  })
})
