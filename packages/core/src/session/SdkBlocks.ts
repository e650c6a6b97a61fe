/**
 * Claude Code's headless `stream-json` prints an answer as one `assistant` message per content block
 * (thinking, text, each tool call), all with the answer's `message.id`, so that an SDK host renders
 * each block as its own item and keys them by that id. The kernel's projection gives whole answers
 * (the transcript and in-process consumers keep them whole); this splits one for printing. Each part
 * keeps the answer's usage and stop reason (a host counts usage once per `message.id`); the first
 * keeps its uuid (the answer's transcript entry's, see `MessageIds`), the others get new ones.
 *
 * @since 0.1.0
 */
import type * as SdkMessage from "./SdkMessage.js"

/**
 * `message` as Claude Code prints it: an `assistant` message with more than one content block as one
 * message per block; anything else as it is.
 *
 * @category Conversions
 */
export const perBlock = (message: SdkMessage.SdkMessage, uuid: () => string): ReadonlyArray<SdkMessage.SdkMessage> => {
  if (message.type !== "assistant") return [message]
  const content = message.message.content
  if (typeof content === "string" || content.length < 2) return [message]
  return content.map((block, i): SdkMessage.Assistant => ({
    ...message,
    message: { ...message.message, content: [block] },
    uuid: i === 0 ? message.uuid : uuid()
  }))
}
