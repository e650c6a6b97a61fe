/**
 * Token accounting for a request about to be sent: the API's own count for everything up to the
 * last answer (its usage: input + cache read + cache creation + output), plus about one token per
 * four characters for the messages added after it. Each message's estimate is computed once and
 * cached (messages are immutable), so estimating before a call costs time proportional to the
 * messages added since the last answer, not to the history.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Option from "effect/Option"
import {
  AssistantMessage,
  DocumentBlock,
  ImageBlock,
  type Message,
  RedactedThinkingBlock,
  TextBlock,
  ThinkingBlock,
  ToolResultBlock,
  ToolUseBlock,
  type UserMessage
} from "../message/Message.js"
import * as ModelCapabilities from "../model/ModelCapabilities.js"

/** Characters per token in the rough estimate. @category Constants */
export const CHARS_PER_TOKEN = 4

/** What an image or a document costs in the estimate (Claude Code's flat figure). @category Constants */
export const MEDIA_TOKENS = 2_000

/** The context window assumed when nothing says otherwise. @category Constants */
export const DEFAULT_CONTEXT_WINDOW = ModelCapabilities.DEFAULT_CONTEXT_WINDOW

const cache = new WeakMap<Message, number>()

const blockChars = (block: UserMessage["content"][number]): number => {
  if (block instanceof TextBlock) return block.text.length
  if (block instanceof ToolUseBlock) return block.name.length + JSON.stringify(block.input ?? {}).length
  if (block instanceof ToolResultBlock) {
    if (block.content === undefined) return 0
    if (typeof block.content === "string") return block.content.length
    let n = 0
    for (const part of block.content) n += blockChars(part)
    return n
  }
  if (block instanceof ThinkingBlock) return block.thinking.length
  if (block instanceof RedactedThinkingBlock) return block.data.length
  if (block instanceof ImageBlock || block instanceof DocumentBlock) return MEDIA_TOKENS * CHARS_PER_TOKEN
  return JSON.stringify(block).length
}

/** The estimated tokens of one message (cached per message). @category Estimates */
export const ofMessage = (message: Message): number => {
  const cached = cache.get(message)
  if (cached !== undefined) return cached
  let chars = 0
  if (typeof message.content === "string") chars = message.content.length
  else for (const block of message.content) chars += blockChars(block)
  const tokens = Math.ceil(chars / CHARS_PER_TOKEN)
  cache.set(message, tokens)
  return tokens
}

/** The estimated tokens of these messages, ignoring any usage they carry. @category Estimates */
export const ofMessages = (messages: ReadonlyArray<Message>): number => {
  let n = 0
  for (const m of messages) n += ofMessage(m)
  return n
}

/**
 * The estimated size of a request carrying `messages`: the usage of the last answer that has one,
 * plus estimates of the messages after it (all of them, plus `overhead` for the system prompt and
 * tools, when no answer has usage yet).
 *
 * @category Estimates
 */
export const ofRequest = (messages: ReadonlyArray<Message>, overhead = 0): number => {
  let added = 0
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!
    if (m instanceof AssistantMessage && m.usage !== undefined) {
      const u = m.usage
      return u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) +
        u.output_tokens + added
    }
    added += ofMessage(m)
  }
  return added + overhead
}

/**
 * A model's context window, from the capability table (`ModelCapabilities`): 1,000,000 tokens for a
 * model named with Claude Code's `[1m]` suffix, 200,000 for a model the table does not know.
 *
 * @category Windows
 */
export const windowFor = (model: string, table?: ModelCapabilities.Table): number =>
  ModelCapabilities.of(model, table).contextWindow

/**
 * `KEEL_AUTO_COMPACT_WINDOW`: the context window compaction works against, for every model (unset:
 * each model's own, see {@link windowFor}); also for tests with a small window.
 *
 * @category Configuration
 */
export const windowConfig: Config.Config<number | undefined> = Config.integer("KEEL_AUTO_COMPACT_WINDOW").pipe(
  Config.validate({ message: "must be a number of tokens, at least 1,000", validation: (n) => n >= 1_000 }),
  Config.option,
  Config.map(Option.getOrUndefined)
)
