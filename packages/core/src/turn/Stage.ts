/**
 * A preprocessing stage: takes the conversation about to be sent and returns a (possibly) smaller
 * one plus a report of what it changed. Stages run in order in the `Pipeline` before every model call.
 *
 * The contract every stage keeps (the transcript, the token estimate and prompt caching rely on it):
 *
 * - **Identity.** A stage that changes nothing returns the very array it was given. A stage that
 *   changes some messages returns the others as the same objects, in their order: the transcript
 *   records a change as the ranges kept plus the new messages, found by comparing objects
 *   (`Transcript.diff`), the token estimate is cached per message object, and a message rebuilt
 *   with equal content would be written to the transcript again.
 * - **Immutability.** Messages are never mutated; a changed message is a new one.
 * - **Validity.** The output must keep the request valid (every `tool_use` answered, roles
 *   alternating, thinking blocks in place): the `Pipeline` checks the `Invariants` after each stage
 *   and discards an output that newly breaks them.
 *
 * A stage is addressed by its {@link Id} (`Snip.id`, `Autocompact.id`, ...): `Pipeline.without`,
 * `Pipeline.insertBefore` and their kin edit a pipeline by id, never by name or position.
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import type { Message } from "../message/Message.js"
import type { ModelRequest, ToolDefinition } from "../model/ModelRequest.js"
import type { StageMemory } from "./StageMemory.js"

/**
 * The request a conversation is sent in, without its messages: model, `max_tokens`, system prompt
 * (and its stable part), tools, thinking and further parameters. A stage that asks the model about
 * the conversation (a compaction summary) sends the same, so its request shares the cached prefix.
 *
 * @category Models
 */
export type RequestShape = Omit<ModelRequest, "messages" | "source" | "span" | "overloadBudget" | "cacheTailAt">

/** What a stage knows about the request it prepares. @category Models */
export interface StageContext {
  readonly model: string
  /** The iteration of the turn loop, from 1. */
  readonly iteration: number
  /** The session the conversation belongs to. */
  readonly sessionId: string
  /**
   * The session's memory for stages (`StageMemory`): a stage that remembers anything of the
   * conversation keeps it there, never in itself, so it is dropped with the session. Absent for a
   * run outside a session (then a stage starts afresh).
   */
  readonly memory?: StageMemory | undefined
  /** The output-token cap of the request. */
  readonly maxTokens: number
  /** The system prompt of the request, if any (stages that call the model may reuse it). */
  readonly system?: ModelRequest["system"] | undefined
  /** The working directory the tools resolve relative paths against. */
  readonly cwd?: string | undefined
  /** The tools of the request (a model call over history with tool calls must declare them). */
  readonly tools?: ReadonlyArray<ToolDefinition> | undefined
  /** The whole request the conversation is about to be sent in, without its messages (see {@link RequestShape}). */
  readonly request?: RequestShape | undefined
  /** The session's transcript file, when it is written: a compaction points the model at it for detail. */
  readonly transcriptPath?: string | undefined
  /**
   * The result size a tool declares (`Tool.maxResultChars`), by tool name: `Infinity` for a tool
   * that bounds its output itself, `undefined` for one that declares none (or is unknown).
   */
  readonly resultLimit?: ((toolName: string) => number | undefined) | undefined
}

/** A compaction that replaced the conversation with a shorter one. @category Models */
export interface Compaction {
  readonly trigger: "auto" | "manual"
  /** Estimated tokens before and after. */
  readonly preTokens: number
  readonly postTokens: number
  readonly durationMs: number
}

/**
 * What a stage did. `report` is absent when the stage changed nothing. `halt` ends the turn (terminal
 * reason `prompt_too_long`) with its text as the error: the stage's circuit breaker tripped.
 *
 * @category Models
 */
export interface StageResult {
  readonly messages: ReadonlyArray<Message>
  readonly report?: string | undefined
  readonly compaction?: Compaction | undefined
  /** Why a compaction that was due did not happen (it failed, or the breaker is open). */
  readonly compactionError?: string | undefined
  readonly halt?: string | undefined
}

/**
 * A stage's identity: one object per stage kind, exported by its module (`Snip.id`). Its `name`
 * names the stage in reports and transcripts.
 *
 * @category Models
 */
export interface Id {
  readonly _tag: "StageId"
  readonly name: string
}

/** A new stage identity named `name` (compared by identity, not by name). @category Constructors */
export const id = (name: string): Id => ({ _tag: "StageId", name })

/** A preprocessing stage. @category Models */
export interface Stage {
  readonly id: Id
  readonly run: (messages: ReadonlyArray<Message>, context: StageContext) => Effect.Effect<StageResult>
  /**
   * When the stage is about to do slow work on these messages (a model call), a status to show
   * while it runs (`"compacting"`). Cheap and synchronous: called before `run`.
   */
  readonly announce?: ((messages: ReadonlyArray<Message>, context: StageContext) => string | undefined) | undefined
}

/** A stage report, as the turn loop emits it. @category Models */
export interface StageReport {
  readonly stage: string
  readonly report: string
  readonly compaction?: Compaction | undefined
  /** Why a compaction that was due did not happen (see `StageResult.compactionError`). */
  readonly compactionError?: string | undefined
}
