/**
 * Tool-call rounds for stage tests: an assistant message calling a tool and the user message
 * answering it, and the result a conversation gives a call.
 */
import { Message, TestModel } from "@keel/core"

/** An assistant message calling `name` with `input` (id `id`), and the user message answering it with `result`. */
export const round = (id: string, name: string, input: object, result: string): Array<Message.Message> => [
  new Message.AssistantMessage({ content: [TestModel.toolUse(name, input, id)], id: `msg_${id}` }),
  Message.user([new Message.ToolResultBlock({ tool_use_id: id, content: result })])
]

/** The content of the result answering `id`. */
export const resultOf = (messages: ReadonlyArray<Message.Message>, id: string): unknown => {
  for (const m of messages) {
    if (m instanceof Message.UserMessage) for (const r of m.toolResults) if (r.tool_use_id === id) return r.content
  }
  return undefined
}
