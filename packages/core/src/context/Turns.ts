/**
 * The turns of a conversation: a turn starts at a prompt (a user message that is not tool results)
 * and runs to the next one. Compaction keeps whole turns and summarises or drops the oldest.
 *
 * @since 0.1.0
 */
import { type ContentBlock, type Message, TextBlock, ToolResultBlock, UserMessage } from "../message/Message.js"

/** Whether a user message is a prompt (not tool results): where a turn starts. @category Predicates */
export const isPrompt = (message: Message): boolean =>
  message instanceof UserMessage &&
  (typeof message.content === "string" || !message.content.some((b) => b instanceof ToolResultBlock))

/** The indexes of the prompts: the starts of the turns. @category Accessors */
export const turnStarts = (messages: ReadonlyArray<Message>): Array<number> => {
  const out: Array<number> = []
  for (let i = 0; i < messages.length; i++) if (isPrompt(messages[i]!)) out.push(i)
  return out
}

/** A user message's content as blocks (a string is one text block), for adding blocks to it. @category Accessors */
export const blocksOf = (message: UserMessage): ReadonlyArray<ContentBlock> =>
  typeof message.content === "string" ? [new TextBlock({ text: message.content })] : message.content
