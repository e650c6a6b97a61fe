/**
 * The snip stage: drops stale duplicates. When a file was read again (same path, offset and limit)
 * and came back unchanged, the older read's result is replaced by a one-line note: the model has
 * the same text later in the conversation. Blocks are never removed, so every `tool_use` keeps its
 * `tool_result`. The conversation is scanned only when a new message carries a read; otherwise a
 * call costs time in proportion to the new messages.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { AssistantMessage, type Message, ToolResultBlock, ToolUseBlock, UserMessage } from "../message/Message.js"
import type { Stage } from "../turn/Stage.js"

/** The note that replaces a stale read. @category Constants */
export const STALE = "[stale: this file was read again later and had not changed; see the later read]"

/** Options. @category Models */
export interface Options {
  /** The read tool and its input fields that identify a read (`Read`: `file_path`, `offset`, `limit`). */
  readonly readTool?: { readonly name: string; readonly keyFields: ReadonlyArray<string> } | undefined
}

interface Read {
  readonly key: string
  readonly content: string
  readonly messageIndex: number
}

/**
 * The conversation with every read that was repeated unchanged later replaced by {@link STALE}.
 * The same array when nothing changes.
 *
 * @category Combinators
 */
export const snip = (
  messages: ReadonlyArray<Message>,
  readTool: { readonly name: string; readonly keyFields: ReadonlyArray<string> } = {
    name: "Read",
    keyFields: ["file_path", "offset", "limit"]
  }
): { readonly messages: ReadonlyArray<Message>; readonly snipped: number } => {
  const keys = new Map<string, string>()
  const reads: Array<Read & { readonly toolUseId: string }> = []
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!
    if (m instanceof AssistantMessage) {
      for (const b of m.content) {
        if (b instanceof ToolUseBlock && b.name === readTool.name) {
          const input = (b.input ?? {}) as Record<string, unknown>
          keys.set(b.id, JSON.stringify(readTool.keyFields.map((f) => input[f] ?? null)))
        }
      }
    } else if (typeof m.content !== "string") {
      for (const b of m.content) {
        if (!(b instanceof ToolResultBlock) || b.is_error === true || typeof b.content !== "string") continue
        const key = keys.get(b.tool_use_id)
        if (key !== undefined && b.content !== STALE) reads.push({ key, content: b.content, messageIndex: i, toolUseId: b.tool_use_id })
      }
    }
  }
  // A read is stale when a later read of the same key returned the same content.
  const latest = new Map<string, string>()
  const stale = new Set<string>()
  for (let i = reads.length - 1; i >= 0; i--) {
    const r = reads[i]!
    if (latest.get(r.key) === r.content) stale.add(r.toolUseId)
    else latest.set(r.key, r.content)
  }
  if (stale.size === 0) return { messages, snipped: 0 }
  const out = [...messages]
  for (const r of reads) {
    if (!stale.has(r.toolUseId)) continue
    const m = out[r.messageIndex] as UserMessage
    out[r.messageIndex] = new UserMessage({
      content: (m.content as ReadonlyArray<Message["content"][number]>).map((b) =>
        b instanceof ToolResultBlock && b.tool_use_id === r.toolUseId ? new ToolResultBlock({ ...b, content: STALE }) : b
      ) as UserMessage["content"]
    })
  }
  return { messages: out, snipped: stale.size }
}

/** The stage. It looks again only when a new message carries a read. @category Constructors */
export const make = (options: Options = {}): Effect.Effect<Stage> =>
  Effect.gen(function*() {
    const readTool = options.readTool ?? { name: "Read", keyFields: ["file_path", "offset", "limit"] }
    const seen = yield* Ref.make(new Map<string, { readonly length: number; readonly last: Message | undefined }>())
    const hasRead = (m: Message) =>
      m instanceof AssistantMessage && m.content.some((b) => b instanceof ToolUseBlock && b.name === readTool.name)
    return {
      name: "snip",
      run: (messages, context) =>
        Effect.gen(function*() {
          const before = (yield* Ref.get(seen)).get(context.sessionId)
          const from = before !== undefined && before.length <= messages.length && messages[before.length - 1] === before.last
            ? before.length
            : 0
          let fresh = false
          for (let i = from; i < messages.length && !fresh; i++) fresh = hasRead(messages[i]!)
          const result = fresh ? snip(messages, readTool) : { messages, snipped: 0 }
          yield* Ref.update(seen, (m) =>
            new Map(m).set(context.sessionId, { length: result.messages.length, last: result.messages.at(-1) }))
          return result.snipped === 0
            ? { messages }
            : { messages: result.messages, report: `replaced ${result.snipped} stale read(s) of unchanged files` }
        })
    } satisfies Stage
  })
