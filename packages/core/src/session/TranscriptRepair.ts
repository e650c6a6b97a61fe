/**
 * A conversation cut by a crash made valid again: every tool call left without a result gets the
 * result the turn loop gives an interrupted call ({@link answerDangling}). `Transcript` re-exports it.
 *
 * @since 0.1.0
 */
import { AssistantMessage, type ContentBlock, type Message, ToolResultBlock, ToolUseBlock, UserMessage } from "../message/Message.js"
import { interruptedResult } from "../tool/ToolRuntime.js"

/**
 * `messages` with every `tool_use` answered: a call whose result never made it to the transcript
 * (the process stopped while it ran, or after it finished and before its round was written) gets
 * its `recorded` result when the session's journal has one, else the "interrupted" result the turn
 * loop gives an interrupted call. Unchanged messages stay the same objects.
 *
 * @category Repair
 */
export const answerDangling = (
  messages: ReadonlyArray<Message>,
  recorded?: (toolUseId: string) => ToolResultBlock | undefined
): ReadonlyArray<Message> => {
  let out: Array<Message> | undefined
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!
    if (!(m instanceof AssistantMessage) || allAnswered(m, messages[i + 1])) continue
    const uses = m.toolUses
    if (uses.length === 0) continue
    const next = messages[i + 1]
    const results = next instanceof UserMessage ? next.toolResults : []
    const answered = new Set(results.map((r) => r.tool_use_id))
    const missing = uses.filter((u) => !answered.has(u.id)).map((u) => recorded?.(u.id) ?? interruptedResult(u.id))
    if (missing.length === 0) continue
    out ??= [...messages]
    if (results.length > 0) {
      const others = (next as UserMessage).content as ReadonlyArray<ContentBlock>
      out[i + 1] = new UserMessage({
        content: [...results, ...missing, ...others.filter((b) => !(b instanceof ToolResultBlock))]
      })
    } else {
      out.splice(i + 1, 0, new UserMessage({ content: missing }))
    }
  }
  return out ?? messages
}

/**
 * Whether every tool call of `m` has its result in `next`: a scan of their blocks, with nothing
 * allocated (a resumed session checks each of its answers before the first request).
 */
const allAnswered = (m: AssistantMessage, next: Message | undefined): boolean => {
  for (const use of m.content) {
    if (!(use instanceof ToolUseBlock)) continue
    if (!(next instanceof UserMessage) || typeof next.content === "string") return false
    let found = false
    for (const b of next.content) {
      if (b instanceof ToolResultBlock && b.tool_use_id === use.id) {
        found = true
        break
      }
    }
    if (!found) return false
  }
  return true
}
