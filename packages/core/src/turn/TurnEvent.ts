/**
 * What the turn loop emits: raw model stream events as they arrive (in batches, one per network
 * read, so a consumer pays per batch and not per event), notices from the resilience layers, each
 * final assistant message,
 * the tool results that answer it, stage reports, and exactly one `TurnComplete` at the end.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type { AssistantMessage, UserMessage } from "../message/Message.js"
import type { ModelError } from "../model/ModelError.js"
import type { ModelNotice } from "../model/ModelNotice.js"
import type { StreamEvent } from "../model/StreamEvent.js"
import type { ToolEvent } from "../tool/ToolEvent.js"
import type { StageReport } from "./Stage.js"

/**
 * Why a turn ended: the model answered without tool calls (`completed`), the iteration budget ran
 * out (`max_turns`), the model call failed (`model_error`), the turn was interrupted while
 * streaming (`aborted_streaming`) or running tools (`aborted_tools`), the conversation cannot be
 * made to fit the context window (`prompt_too_long`: compaction failed or its breaker tripped),
 * the answer was still cut by `max_tokens` after the allowed continuations (`max_output_tokens`), or
 * the session's spending budget is spent (`budget_exhausted`, see `TurnLoop.Options.budget`), or
 * the answers failed to give the structured output asked for too often
 * (`structured_output_retry_exhausted`, see `StructuredOutput`).
 *
 * @category Models
 */
export type TerminalReason =
  | "completed"
  | "max_turns"
  | "model_error"
  | "aborted_streaming"
  | "aborted_tools"
  | "prompt_too_long"
  | "max_output_tokens"
  | "budget_exhausted"
  | "structured_output_retry_exhausted"

/** @category Models */
export type TurnEvent = Data.TaggedEnum<{
  /** Raw model stream events, in order, as they arrived (never empty). */
  StreamEvents: { readonly events: ReadonlyArray<StreamEvent> }
  /** A finished assistant message (already in the conversation). */
  Assistant: { readonly message: AssistantMessage }
  /** The tool results answering the previous assistant message (already in the conversation). */
  ToolResults: { readonly message: UserMessage }
  /** A tool call is still running (emitted every progress interval while it runs). */
  ToolProgress: { readonly toolUseId: string; readonly toolName: string; readonly elapsedSeconds: number }
  /** What a running tool call reported (a subagent's prompt and events), for the call `toolUseId`. */
  ToolReported: { readonly toolUseId: string; readonly event: ToolEvent }
  /**
   * A resilience layer's notice: a retry and its wait, a heartbeat, a retraction of the partial
   * answer streamed so far (its events are void), a model switch, a stalled stream.
   */
  Notice: { readonly notice: ModelNotice }
  /** The user message that asks the model to go on after an answer cut by `max_tokens` (already in the conversation). */
  Continuation: { readonly message: UserMessage }
  /** A preprocessing stage is doing slow work (`"compacting"`). */
  Status: { readonly status: string }
  /** A preprocessing stage changed the conversation. */
  StageApplied: { readonly report: StageReport }
  /** The turn is over. Always the last event. */
  TurnComplete: {
    readonly reason: TerminalReason
    /** Model requests made in this turn. */
    readonly iterations: number
    readonly lastMessage: AssistantMessage | undefined
    readonly error: ModelError | undefined
    /** For `prompt_too_long` and `max_output_tokens`: what happened, for people. */
    readonly message?: string | undefined
    /** With an output schema, a `completed` turn's structured output (the accepted `StructuredOutput` call's input). */
    readonly structuredOutput?: unknown
  }
}>

/** Constructors and matchers for `TurnEvent`. @category Constructors */
export const TurnEvent = Data.taggedEnum<TurnEvent>()
