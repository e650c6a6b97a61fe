/**
 * Turn admission as data: what waits to run, in which order. Pure functions over one immutable
 * value, so the order rules are unit-tested apart from any fiber, and the runtime that owns a
 * session's admission (`SessionRuntime`) is the only place that holds one.
 *
 * The order follows Claude Code's queued commands: `now` goes to the head (the runtime also
 * interrupts the running turn for it), `next` goes after the other `now`/`next` entries and before
 * every `later` one, `later` goes to the tail. Among equals, the order of arrival.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { UserMessage } from "../message/Message.js"

/** How urgent a queued input is. @category Models */
export type Priority = "now" | "next" | "later"

/** The priorities, most urgent first. @category Models */
export const PRIORITIES: ReadonlyArray<Priority> = ["now", "next", "later"]

/** The default priority of a submission (Claude Code's, for typed-ahead input). @category Constants */
export const DEFAULT_PRIORITY: Priority = "next"

/** At most this many inputs wait at once; a submission beyond it is refused. @category Constants */
export const MAX_QUEUED = 100

/** Characters of an input's text kept in its preview. @category Constants */
export const PREVIEW_CHARS = 120

/** A priority, as a schema. @category Models */
export const PrioritySchema = Schema.Literal("now", "next", "later")

/**
 * A queued input as the transcript keeps it (a restarted process queues it again, same id).
 *
 * @category Models
 */
export const Saved = Schema.Struct({
  id: Schema.String,
  priority: PrioritySchema,
  input: Schema.Union(Schema.String, UserMessage),
  queuedAt: Schema.Number
})
/** @category Models */
export type Saved = typeof Saved.Type

/** An input waiting for its turn. @category Models */
export interface Queued {
  /** The turn id it will run as. */
  readonly id: string
  readonly priority: Priority
  readonly input: string | UserMessage
  /** The start of its text, on one line. */
  readonly preview: string
  /** When it was submitted (epoch ms, from `Clock`). */
  readonly queuedAt: number
  /**
   * What runs: the user's input (the default; the only kind saved with the session), a reply that
   * needs no model, a turn resumed after a restart, or a goal's continuation.
   */
  readonly kind?: Kind | undefined
}

/** What a queued entry runs. @category Models */
export type Kind = "input" | "reply" | "resume" | "goal"

/** What a listing shows of a queued input (no message objects). @category Models */
export interface Snapshot {
  readonly id: string
  readonly priority: Priority
  readonly preview: string
  readonly queuedAt: number
  /** Its place in the queue, from 0 (the next to run). */
  readonly position: number
  readonly kind: Kind
}

/** The admission state: the running turn, if any, and what waits. @category Models */
export interface Admission {
  readonly running: string | undefined
  readonly queue: ReadonlyArray<Queued>
}

/** Nothing running, nothing waiting. @category Constructors */
export const empty: Admission = { running: undefined, queue: [] }

const rank = (priority: Priority): number => PRIORITIES.indexOf(priority)

/** The preview of an input: its text, whitespace folded, cut at {@link PREVIEW_CHARS}. @category Constructors */
export const preview = (input: string | UserMessage): string => {
  const text = typeof input === "string"
    ? input
    : typeof input.content === "string"
    ? input.content
    : input.content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join(" ")
  const folded = text.replace(/\s+/g, " ").trim()
  return folded.length > PREVIEW_CHARS ? `${folded.slice(0, PREVIEW_CHARS - 1)}…` : folded
}

/** Adds `item` where its priority puts it. @category Transitions */
export const enqueue = (admission: Admission, item: Queued): Admission => {
  // Before the first entry that is less urgent; `now` goes before everything, even another `now`.
  const at = item.priority === "now"
    ? 0
    : admission.queue.findIndex((q) => rank(q.priority) > rank(item.priority))
  const queue = [...admission.queue]
  queue.splice(at === -1 ? queue.length : at, 0, item)
  return { ...admission, queue }
}

/** Without the entry `id` (unchanged if it is not queued). @category Transitions */
export const remove = (admission: Admission, id: string): Admission => ({
  ...admission,
  queue: admission.queue.filter((q) => q.id !== id)
})

/** The entry `id` moved to the head (unchanged if it is not queued). @category Transitions */
export const promote = (admission: Admission, id: string): Admission => {
  const item = admission.queue.find((q) => q.id === id)
  return item === undefined ? admission : { ...admission, queue: [item, ...admission.queue.filter((q) => q !== item)] }
}

/** Nothing waiting (what runs goes on). @category Transitions */
export const clear = (admission: Admission): Admission => ({ ...admission, queue: [] })

/**
 * The next entry to run, and the state with it running; `undefined` while a turn runs or nothing
 * waits.
 *
 * @category Transitions
 */
export const start = (admission: Admission): readonly [Queued | undefined, Admission] => {
  const [head, ...rest] = admission.queue
  if (admission.running !== undefined || head === undefined) return [undefined, admission]
  return [head, { running: head.id, queue: rest }]
}

/** The running turn has ended. @category Transitions */
export const finish = (admission: Admission): Admission => ({ ...admission, running: undefined })

/** Whether `id` waits in the queue. @category Getters */
export const isQueued = (admission: Admission, id: string): boolean => admission.queue.some((q) => q.id === id)

/** The queue as a listing, next to run first. @category Getters */
export const snapshots = (admission: Admission): ReadonlyArray<Snapshot> =>
  admission.queue.map((q, position) => ({
    id: q.id,
    priority: q.priority,
    preview: q.preview,
    queuedAt: q.queuedAt,
    position,
    kind: q.kind ?? "input"
  }))

/** The inputs of the queue as the session saves them (replies, resumes and goal turns are not saved). @category Accessors */
export const saved = (admission: Admission): ReadonlyArray<Saved> =>
  admission.queue.flatMap((q) =>
    (q.kind ?? "input") === "input" ? [{ id: q.id, priority: q.priority, input: q.input, queuedAt: q.queuedAt }] : []
  )
