/**
 * A turn cut while it waited for an answer: a process that stopped (killed, or closed) while a
 * tool call waited for permission leaves a conversation whose last answer has tool calls, either
 * unanswered (a crash) or answered "interrupted" (the repair of a closing turn, or of a resumed
 * load). When a pending permission action names one of those calls, the turn can run on from its
 * tool calls once the action is answered, instead of telling the model it was interrupted.
 *
 * @since 0.1.0
 */
import { AssistantMessage, type Message, ToolResultBlock, type ToolUseBlock, UserMessage } from "../message/Message.js"
import { interruptedResult } from "../tool/ToolRuntime.js"
import type * as Action from "../action/Action.js"

/** A cut turn: the conversation to run on from (ending with the answer) and its calls. @category Models */
export interface Cut {
  /** The conversation up to and including the answer whose calls run again. */
  readonly history: ReadonlyArray<Message>
  readonly uses: ReadonlyArray<ToolUseBlock>
  /** The turn the pending action paused, when it says. */
  readonly turnId: string | undefined
}

const INTERRUPTED = interruptedResult("").content

const isInterrupted = (block: ToolResultBlock): boolean =>
  block.is_error === true && JSON.stringify(block.content) === JSON.stringify(INTERRUPTED)

/**
 * `message` is the repair of a cut tool round: tool results for `uses` only, those of the calls
 * that wait (`waiting`) "interrupted".
 */
const isRepair = (message: Message, uses: ReadonlyArray<ToolUseBlock>, waiting: ReadonlyMap<string, unknown>): boolean => {
  if (!(message instanceof UserMessage) || typeof message.content === "string") return false
  const ids = new Set(uses.map((u) => u.id))
  return message.content.every((b) =>
    b instanceof ToolResultBlock && ids.has(b.tool_use_id) && (!waiting.has(b.tool_use_id) || isInterrupted(b))
  )
}

/**
 * The cut turn of `messages`, if a pending permission action of `pending` names a call of its
 * last answer; `undefined` otherwise (nothing to run on from).
 *
 * @category Finding
 */
export const find = (messages: ReadonlyArray<Message>, pending: ReadonlyArray<Action.Pending>): Cut | undefined => {
  const waiting = new Map<string, Action.Pending>()
  for (const action of pending) {
    if (action.request.kind === "permission") waiting.set(action.request.toolUseId, action)
  }
  if (waiting.size === 0) return undefined
  const last = messages.length - 1
  const at = messages[last] instanceof AssistantMessage ? last : last - 1
  const answer = messages[at]
  if (!(answer instanceof AssistantMessage)) return undefined
  const uses = answer.toolUses
  const action = uses.map((u) => waiting.get(u.id)).find((a) => a !== undefined)
  if (action === undefined) return undefined
  if (at !== last && !isRepair(messages[last]!, uses, waiting)) return undefined
  return { history: messages.slice(0, at + 1), uses, turnId: action.turnId ?? undefined }
}
