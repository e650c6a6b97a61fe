/**
 * A preprocessing stage: takes the conversation about to be sent and returns a (possibly) smaller
 * one plus a report of what it changed. Stages run in order in the `Pipeline` before every model call.
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import type { Message } from "../message/Message.js"
import type { ToolDefinition } from "../model/ModelRequest.js"

/** What a stage knows about the request it prepares. @category Models */
export interface StageContext {
  readonly model: string
  /** The iteration of the turn loop, from 1. */
  readonly iteration: number
  /** The session the conversation belongs to (stages with memory keep it per session). */
  readonly sessionId: string
  /** The output-token cap of the request. */
  readonly maxTokens: number
  /** The system prompt of the request, if any (stages that call the model may reuse it). */
  readonly system?: string | ReadonlyArray<{ readonly type: "text"; readonly text: string }> | undefined
  /** The working directory the tools resolve relative paths against. */
  readonly cwd?: string | undefined
  /** The tools of the request (a model call over history with tool calls must declare them). */
  readonly tools?: ReadonlyArray<ToolDefinition> | undefined
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
  readonly halt?: string | undefined
}

/** A preprocessing stage. @category Models */
export interface Stage {
  readonly name: string
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
}
