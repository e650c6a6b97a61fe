/**
 * The entries of a session transcript: one JSON object per line of
 * `$KEEL_HOME/projects/<cwd slug>/<session id>.jsonl`, appended when final and never rewritten.
 *
 * Every entry carries Claude Code's envelope (`type`, `uuid`, `parentUuid`, `sessionId`,
 * `timestamp`, `cwd`) and Keel's format `version` (a number, where Claude Code writes its program
 * version as a string: that is how a foreign file is told apart). `parentUuid` is the previous
 * entry's `uuid`, `null` for the first: the entries form one chain, and a break in it (two writers,
 * a spliced file) is detected on load. A `user` or `assistant` entry's `uuid` is the uuid of the SDK
 * message that reported it (`MessageIds`), as in Claude Code: `resumeSessionAt` names one.
 *
 * The conversation is rebuilt from the entries in order:
 * - `user` / `assistant`: a message appended to the conversation, in the API's shape (`role`,
 *   `content` blocks) plus, for answers, `id`, `model`, `stop_reason` and `usage`.
 * - `rewrite`: the conversation was replaced by a stage (compaction, snip, microcompact, collapse,
 *   the tool result budget, `/compact`): the new conversation is `ops` in order, each a range of
 *   the previous conversation kept (`keep: [from, to)`) or a message written inline. Unchanged
 *   messages cost a range, not a copy, so an entry is as large as what changed.
 * - `model`: the model of the session's calls changed (`fallback` when it is a fallback model).
 * - `usage`: the session's token totals per model (cumulative), whenever they changed.
 * - `file_state`: files read or written since the last such entry, with their mtime then.
 * - `origin`: this session began as a fork of, or a `/clear` after, session `from`.
 * - `system_prompt`: a system prompt as sent, under the sha256 `hash` the envelopes name; written
 *   once per file, before the first envelope that names it (`TurnEnvelope.SystemPromptRecord`).
 * - `envelope`: what one model turn was built from (`TurnEnvelope`, format
 *   `TurnEnvelope.FORMAT`): written after the turn's user message, before the model is called.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { AssistantMessage, Message, UserMessage } from "../message/Message.js"
import * as Action from "../action/Action.js"
import * as Admission from "../admission/Admission.js"
import * as Goal from "../goal/Goal.js"
import { TokenUsage } from "./TokenUsage.js"
import * as TranscriptFastEncode from "./TranscriptFastEncode.js"
import * as TurnEnvelope from "./TurnEnvelope.js"

/** The transcript format this Keel writes and reads. @category Constants */
export const VERSION = 1

const envelope = {
  uuid: Schema.String,
  parentUuid: Schema.NullOr(Schema.String),
  sessionId: Schema.String,
  /** ISO 8601, from the `Clock`. */
  timestamp: Schema.String,
  cwd: Schema.String,
  version: Schema.Literal(VERSION)
}

/** A user message: a prompt, tool results, a continuation request. @category Schemas */
export const UserEntry = Schema.Struct({ type: Schema.Literal("user"), ...envelope, message: UserMessage })

/** An assistant message, with its id, model, stop reason and usage. @category Schemas */
export const AssistantEntry = Schema.Struct({ type: Schema.Literal("assistant"), ...envelope, message: AssistantMessage })

/** A range of the previous conversation kept by a rewrite: messages `[from, to)`. @category Schemas */
export const Keep = Schema.Struct({ keep: Schema.Tuple(Schema.Int, Schema.Int) })

/** A message a rewrite writes inline (new, or a replacement of an old one). @category Schemas */
export const Inline = Schema.Struct({ message: Message })

/** The compaction a rewrite records, as `system`/`compact_boundary` reports it. @category Schemas */
export const CompactionInfo = Schema.Struct({
  trigger: Schema.Literal("auto", "manual"),
  preTokens: Schema.Number,
  postTokens: Schema.Number,
  durationMs: Schema.Number
})

/**
 * The conversation replaced: `from` is the length of the conversation before (checked on replay),
 * `length` the length after; `trigger` names the stages that did it (comma-separated).
 *
 * @category Schemas
 */
export const RewriteEntry = Schema.Struct({
  type: Schema.Literal("rewrite"),
  ...envelope,
  trigger: Schema.String,
  compaction: Schema.optional(CompactionInfo),
  from: Schema.Int,
  length: Schema.Int,
  ops: Schema.Array(Schema.Union(Keep, Inline))
})

/** The model of the session's calls changed. @category Schemas */
export const ModelEntry = Schema.Struct({
  type: Schema.Literal("model"),
  ...envelope,
  model: Schema.String,
  /** A fallback model (after overloads), not the session's own choice: a resumed session goes back to the last non-fallback model. */
  fallback: Schema.Boolean
})


/** The session's token totals per model, cumulative. @category Schemas */
export const UsageEntry = Schema.Struct({
  type: Schema.Literal("usage"),
  ...envelope,
  models: Schema.Record({ key: Schema.String, value: TokenUsage })
})

/** Files read or written since the last `file_state` entry: absolute path → mtime (ms) then. @category Schemas */
export const FileStateEntry = Schema.Struct({
  type: Schema.Literal("file_state"),
  ...envelope,
  files: Schema.Record({ key: Schema.String, value: Schema.Number })
})

/** How this session began: a fork of session `from`, or a `/clear` in it. @category Schemas */
export const OriginEntry = Schema.Struct({
  type: Schema.Literal("origin"),
  ...envelope,
  source: Schema.Literal("fork", "clear"),
  from: Schema.String
})

/**
 * The inputs waiting for their turn, whole, each time the queue changes: a restarted process
 * queues them again (same ids). An empty `queue` says nothing waits.
 *
 * @category Entries
 */
export const QueueEntry = Schema.Struct({
  type: Schema.Literal("queue"),
  ...envelope,
  queue: Schema.Array(Admission.Saved)
})

/**
 * What happened to a pending action (opened, answered, cancelled): a restarted process puts the
 * actions still open back, and the read model lists them.
 *
 * @category Entries
 */
export const ActionEntry = Schema.Struct({
  type: Schema.Literal("action"),
  ...envelope,
  action: Action.Event
})

/**
 * The session's goal each time it changes (`null`: cleared).
 *
 * @category Entries
 */
export const GoalEntry = Schema.Struct({
  type: Schema.Literal("goal"),
  ...envelope,
  goal: Schema.NullOr(Goal.Goal)
})

/** A system prompt as sent, stored once per file under its sha256 (see `TurnEnvelope`). @category Schemas */
export const SystemPromptEntry = Schema.Struct({
  type: Schema.Literal("system_prompt"),
  ...envelope,
  ...TurnEnvelope.SystemPromptRecord.fields
})

/** What one model turn was built from (see `TurnEnvelope`). @category Schemas */
export const TurnEnvelopeEntry = Schema.Struct({
  type: Schema.Literal("envelope"),
  ...envelope,
  ...TurnEnvelope.fields
})

/** Every entry, by `type`. @category Schemas */
export const Entry = Schema.Union(
  UserEntry,
  AssistantEntry,
  RewriteEntry,
  ModelEntry,
  UsageEntry,
  FileStateEntry,
  OriginEntry,
  QueueEntry,
  ActionEntry,
  GoalEntry,
  SystemPromptEntry,
  TurnEnvelopeEntry
)

/** @category Models */
export type Entry = typeof Entry.Type

/** The entry types, each with its schema (to decode a line with the precise schema of its `type`). @category Schemas */
export const schemas = {
  user: UserEntry,
  assistant: AssistantEntry,
  rewrite: RewriteEntry,
  model: ModelEntry,
  usage: UsageEntry,
  file_state: FileStateEntry,
  origin: OriginEntry,
  queue: QueueEntry,
  action: ActionEntry,
  goal: GoalEntry,
  system_prompt: SystemPromptEntry,
  envelope: TurnEnvelopeEntry
} as const

/** The envelope fields, which the writer fills in. @category Models */
export type Envelope = "uuid" | "parentUuid" | "sessionId" | "timestamp" | "cwd" | "version"

/** An entry without its envelope: what the session decides to write. @category Models */
export type Payload = Entry extends infer E ? E extends Entry ? Omit<E, Envelope> : never : never

const encodeEntry = Schema.encodeSync(Entry)

/**
 * One line of the file for an entry, newline included. Message entries and rewrites of the common
 * shapes are encoded by copying (`TranscriptFastEncode`, byte for byte the Schema's line), the
 * rest by the Schema.
 *
 * @category Encoding
 */
export const encodeLine = (entry: Entry): string =>
  JSON.stringify(TranscriptFastEncode.entry(entry, VERSION) ?? encodeEntry(entry)) + "\n"

/** The message entry for a message (`user` or `assistant`). @category Constructors */
export const messagePayload = (message: Message): Payload =>
  message instanceof AssistantMessage ? { type: "assistant", message } : { type: "user", message }
