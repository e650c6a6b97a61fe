/**
 * What every conversation sent to the model must satisfy, checked after each pipeline stage:
 * every `tool_use` is answered by a `tool_result` in the next message, every `tool_result` answers
 * a `tool_use` of the previous message, thinking blocks keep their signatures, and the conversation
 * starts with a user message.
 *
 * @since 0.1.0
 */
import { AssistantMessage, type Message, ThinkingBlock, ToolResultBlock, ToolUseBlock } from "../message/Message.js"

/**
 * The violations in a conversation; empty when it is valid. The last assistant message may have
 * unanswered tool calls only if `openTail` is set (a loop that is about to run them).
 *
 * @category Validation
 */
export const violations = (messages: ReadonlyArray<Message>, options: { readonly openTail?: boolean } = {}): Array<string> => {
  const out: Array<string> = []
  if (messages.length > 0 && messages[0]!.role !== "user") out.push("the conversation must start with a user message")
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!
    if (m instanceof AssistantMessage) {
      for (const b of m.content) {
        if (b instanceof ThinkingBlock && b.signature.length === 0) out.push(`message ${i}: thinking block without signature`)
      }
      const uses = m.toolUses
      if (uses.length === 0) continue
      const next = messages[i + 1]
      if (next === undefined) {
        if (options.openTail !== true) out.push(`message ${i}: tool_use ${uses.map((u) => u.id).join(", ")} unanswered`)
        continue
      }
      const answered = new Set(
        typeof next.content === "string"
          ? []
          : next.content.filter((b) => b instanceof ToolResultBlock).map((b) => (b as ToolResultBlock).tool_use_id)
      )
      for (const u of uses) if (!answered.has(u.id)) out.push(`message ${i}: tool_use ${u.id} unanswered`)
    } else if (typeof m.content !== "string") {
      const prev = messages[i - 1]
      const asked = new Set(
        prev instanceof AssistantMessage
          ? prev.content.filter((b) => b instanceof ToolUseBlock).map((b) => (b as ToolUseBlock).id)
          : []
      )
      for (const b of m.content) {
        if (b instanceof ToolResultBlock && !asked.has(b.tool_use_id)) {
          out.push(`message ${i}: tool_result ${b.tool_use_id} answers no tool_use of the previous message`)
        }
      }
    }
  }
  return out
}
