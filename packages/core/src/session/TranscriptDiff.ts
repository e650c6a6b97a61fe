/**
 * What to append to a transcript for a change of the conversation: the new messages when the
 * conversation only grew, else the conversation as ranges of what the file holds and new messages
 * inline (a rewrite).
 *
 * Rewrites are found by object identity. Messages are immutable and every stage returns its
 * unchanged messages as the same objects (see `Stage`), so a stage's output compared with what the
 * file already holds tells exactly which messages are new: an entry costs what changed, never the
 * whole history.
 *
 * @since 0.1.0
 */
import type { Message } from "../message/Message.js"

/** One op of a rewrite: a range of the previous conversation kept, or a message written inline. @category Models */
export type RewriteOp = { readonly keep: readonly [number, number] } | { readonly message: Message }

/** How the conversation changed since the file last described it. @category Models */
export type Change =
  | { readonly _tag: "Unchanged" }
  | { readonly _tag: "Append"; readonly messages: ReadonlyArray<Message> }
  | { readonly _tag: "Rewrite"; readonly from: number; readonly length: number; readonly ops: ReadonlyArray<RewriteOp> }

/**
 * The change from `persisted` (the conversation the file describes) to `current`. When `current`
 * starts with `persisted` (same objects) the new messages are appended; otherwise `current` is
 * described as ranges of `persisted` kept in order and new messages inline. Linear in the lengths,
 * by pointer comparisons.
 *
 * @category Diffing
 */
export const diff = (persisted: ReadonlyArray<Message>, current: ReadonlyArray<Message>): Change => {
  if (current === persisted) return { _tag: "Unchanged" }
  if (current.length >= persisted.length) {
    let i = 0
    while (i < persisted.length && current[i] === persisted[i]) i++
    if (i === persisted.length) {
      return current.length === persisted.length
        ? { _tag: "Unchanged" }
        : { _tag: "Append", messages: current.slice(persisted.length) }
    }
  }
  const index = new Map<Message, number>()
  for (let i = 0; i < persisted.length; i++) if (!index.has(persisted[i]!)) index.set(persisted[i]!, i)
  const ops: Array<RewriteOp> = []
  let from = -1
  let to = -1
  const flush = () => {
    if (from >= 0) ops.push({ keep: [from, to] })
    from = -1
  }
  for (const m of current) {
    const j = index.get(m)
    if (j !== undefined && from >= 0 && j === to) {
      to++
      continue
    }
    flush()
    if (j !== undefined) {
      from = j
      to = j + 1
    } else {
      ops.push({ message: m })
    }
  }
  flush()
  return { _tag: "Rewrite", from: persisted.length, length: current.length, ops }
}
