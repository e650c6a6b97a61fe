/**
 * The snip stage: drops stale duplicates. When a file was read again (same path, offset and limit)
 * and came back unchanged, the older read's result is replaced by a one-line note: the model has
 * the same text later in the conversation. Blocks are never removed, so every `tool_use` keeps its
 * `tool_result`.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { AssistantMessage, type Message, ToolResultBlock, ToolUseBlock, UserMessage } from "../message/Message.js"
import { id as stageId, type Stage } from "../turn/Stage.js"
import * as StageMemory from "../turn/StageMemory.js"

/**
 * A copy of `message` (one this stage already holds) with tool result `toolUseId`'s content
 * replaced by {@link STALE}: what the classes' constructors make without validation (the same
 * fields, in the same order), assigned once instead of copied and looked up for defaults (a resumed
 * session's first turn may snip thousands of reads).
 */
const staleCopy = (message: UserMessage, toolUseId: string): UserMessage =>
  Object.assign(Object.create(UserMessage.prototype), {
    content: (message.content as ReadonlyArray<Message["content"][number]>).map((b) =>
      b instanceof ToolResultBlock && b.tool_use_id === toolUseId
        ? Object.assign(Object.create(ToolResultBlock.prototype), b, { content: STALE })
        : b
    ),
    role: "user"
  })

/** This stage's identity, for editing a pipeline (`Pipeline.without(Snip.id)`). @category Constants */
export const id = stageId("snip")

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
    out[r.messageIndex] = staleCopy(m, r.toolUseId)
  }
  return { messages: out, snipped: stale.size }
}

/** What the stage remembers of one session (in its `StageMemory`): the index, replaced when the history is. */
interface Slot {
  index: SessionIndex
}

/** The index of one session's reads: the latest read of each key, and how far it has looked. */
interface SessionIndex {
  examined: number
  lastExamined: Message | undefined
  /** tool_use_id → key, for the reads asked for so far. */
  readonly keys: Map<string, string>
  /** key → the latest read's content, tool_use_id and message index. */
  readonly latest: Map<string, { readonly content: string; readonly toolUseId: string; readonly messageIndex: number }>
}

/**
 * The stage. It indexes reads as they arrive, so a call costs time in proportion to the new
 * messages; a history replaced from below (a compaction, a stage that rewrote earlier messages) is
 * indexed again from the start.
 *
 * @category Constructors
 */
export const make = (options: Options = {}): Effect.Effect<Stage> =>
  Effect.sync(() => {
    const readTool = options.readTool ?? { name: "Read", keyFields: ["file_path", "offset", "limit"] }
    const fresh = (): SessionIndex => ({ examined: 0, lastExamined: undefined, keys: new Map(), latest: new Map() })
    return {
      id,
      run: (messages, context) =>
        Effect.map(StageMemory.slotOf<Slot>(context.memory, id, () => ({ index: fresh() })), (slot) => {
          let index = slot.index
          if (index.examined > messages.length || messages[index.examined - 1] !== index.lastExamined) {
            index = fresh()
            slot.index = index
          }
          let out: Array<Message> | undefined
          let snipped = 0
          const replace = (messageIndex: number, toolUseId: string) => {
            out ??= [...messages]
            const m = out[messageIndex] as UserMessage
            out[messageIndex] = staleCopy(m, toolUseId)
            snipped++
          }
          for (let i = index.examined; i < messages.length; i++) {
            const m = messages[i]!
            if (m instanceof AssistantMessage) {
              for (const b of m.content) {
                if (b instanceof ToolUseBlock && b.name === readTool.name) {
                  const input = (b.input ?? {}) as Record<string, unknown>
                  index.keys.set(b.id, JSON.stringify(readTool.keyFields.map((f) => input[f] ?? null)))
                }
              }
            } else if (typeof m.content !== "string") {
              for (const b of m.content) {
                if (!(b instanceof ToolResultBlock) || b.is_error === true || typeof b.content !== "string") continue
                const key = index.keys.get(b.tool_use_id)
                if (key === undefined || b.content === STALE) continue
                const previous = index.latest.get(key)
                if (previous !== undefined && previous.content === b.content) replace(previous.messageIndex, previous.toolUseId)
                index.latest.set(key, { content: b.content, toolUseId: b.tool_use_id, messageIndex: i })
              }
            }
          }
          const result = out ?? messages
          index.examined = result.length
          index.lastExamined = result[result.length - 1]
          return snipped === 0
            ? { messages }
            : { messages: result, report: `replaced ${snipped} stale read(s) of unchanged files` }
        })
    } satisfies Stage
  })
