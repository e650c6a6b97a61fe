/**
 * What every conversation sent to the model must satisfy, checked after each pipeline stage:
 * every `tool_use` is answered by a `tool_result` in the next message, every `tool_result` answers
 * a `tool_use` of the previous message, thinking blocks keep their signatures and are never the last
 * block of a message, and the conversation is not empty and starts with a user message; a request
 * also ends with one.
 *
 * @since 0.1.0
 */
import {
  AssistantMessage,
  type Message,
  RedactedThinkingBlock,
  ThinkingBlock,
  ToolResultBlock,
  ToolUseBlock
} from "../message/Message.js"

/**
 * The violations in a conversation (a transcript between turns); empty when it is valid.
 *
 * @category Validation
 */
export const violations = (messages: ReadonlyArray<Message>): Array<string> => {
  const out: Array<string> = []
  if (messages.length === 0) return ["the conversation is empty"]
  if (messages[0]!.role !== "user") out.push("the conversation must start with a user message")
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!
    if (m instanceof AssistantMessage) {
      for (const b of m.content) {
        if (b instanceof ThinkingBlock && b.signature.length === 0) out.push(`message ${i}: thinking block without signature`)
      }
      const last = m.content[m.content.length - 1]
      if (last instanceof ThinkingBlock || last instanceof RedactedThinkingBlock) {
        out.push(`message ${i}: a thinking block is the last block`)
      }
      const uses = m.toolUses
      if (uses.length === 0) continue
      const next = messages[i + 1]
      if (next === undefined) continue
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

/**
 * The violations in a conversation about to be sent: those of {@link violations}, and it must end
 * with a user message.
 *
 * @category Validation
 */
export const requestViolations = (messages: ReadonlyArray<Message>): Array<string> => {
  const out = violations(messages)
  if (messages.length > 0 && messages[messages.length - 1]!.role !== "user") {
    out.push("the conversation must end with a user message")
  }
  return out
}
