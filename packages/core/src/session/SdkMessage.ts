/**
 * The messages a session emits, shaped as Claude Code's headless `stream-json` protocol and the
 * Claude Agent SDK's `SDKMessage` union, so their consumers can read Keel's output unchanged.
 * Every message carries `uuid` and `session_id`.
 *
 * @since 0.1.0
 */
import type { MessageParam, StopReason } from "../message/Message.js"
import type { StreamEvent } from "../model/StreamEvent.js"
import type * as TurnEvent from "../turn/TurnEvent.js"
import type { PermissionDenial } from "./SessionState.js"

/** `system`/`init`: the first message of a session. @category Models */
export interface SystemInit {
  readonly type: "system"
  readonly subtype: "init"
  readonly cwd: string
  readonly session_id: string
  readonly tools: ReadonlyArray<string>
  readonly mcp_servers: ReadonlyArray<{ readonly name: string; readonly status: string }>
  readonly model: string
  readonly permissionMode: string
  readonly slash_commands: ReadonlyArray<string>
  readonly apiKeySource: string
  readonly claude_code_version: string
  readonly output_style: string
  readonly skills: ReadonlyArray<string>
  readonly plugins: ReadonlyArray<{ readonly name: string; readonly path: string }>
  /** The agent types `Task` offers, by name (when the session was told them). */
  readonly agents?: ReadonlyArray<string>
  readonly uuid: string
}

/**
 * The API's assistant message, as `assistant` messages carry it: the Messages API's `Message`
 * (`BetaMessage` in the SDK's types), every field present; the ones Keel does not use are `null`.
 *
 * @category Models
 */
export interface ApiAssistantMessage {
  readonly id: string
  readonly type: "message"
  readonly role: "assistant"
  readonly model: string
  readonly content: MessageParam["content"]
  readonly stop_reason: StopReason | null
  readonly stop_sequence: string | null
  readonly stop_details: null
  readonly container: null
  readonly context_management: null
  readonly diagnostics: null
  readonly usage: NonNullableUsage
}

/** `assistant`: a finished assistant message. @category Models */
export interface Assistant {
  readonly type: "assistant"
  readonly message: ApiAssistantMessage
  readonly parent_tool_use_id: string | null
  readonly uuid: string
  readonly session_id: string
}

/** `user`: the prompt, or tool results. @category Models */
export interface User {
  readonly type: "user"
  readonly message: MessageParam
  readonly parent_tool_use_id: string | null
  readonly isSynthetic?: boolean
  /** For a message carrying one tool result: the call's structured result (`ToolResultBlock.toolUseResult`). */
  readonly tool_use_result?: unknown
  readonly uuid: string
  readonly session_id: string
}

/** `stream_event`: a raw model stream event (with `--include-partial-messages`). @category Models */
export interface PartialAssistant {
  readonly type: "stream_event"
  readonly event: StreamEvent
  readonly parent_tool_use_id: string | null
  readonly uuid: string
  readonly session_id: string
}

/** `max_retries` of an `api_retry` whose retries have no count limit (persistent mode, 429/529). @category Constants */
export const UNBOUNDED_RETRIES = Number.MAX_SAFE_INTEGER

/** `system`/`api_retry`: a failed request will be retried after `retry_delay_ms`. @category Models */
export interface ApiRetry {
  readonly type: "system"
  readonly subtype: "api_retry"
  readonly attempt: number
  /** {@link UNBOUNDED_RETRIES} when the retries have no count limit (persistent mode, 429/529). */
  readonly max_retries: number
  readonly retry_delay_ms: number
  /** `null` when there was no HTTP answer (connection error, idle or truncated stream). */
  readonly error_status: number | null
  readonly error: string
  /** What failed, for people. */
  readonly error_message: string
  readonly uuid: string
  readonly session_id: string
}

/** `system`/`status`: the conversation is being compacted (the Agent SDK's statuses). @category Models */
export interface Status {
  readonly type: "system"
  readonly subtype: "status"
  readonly status: "compacting" | "requesting" | null
  /** On the status that closes a compaction (`null`): how it went, and why it failed. */
  readonly compact_result?: "success" | "failed"
  readonly compact_error?: string
  readonly uuid: string
  readonly session_id: string
}

/**
 * `system`/`notification` (the Agent SDK's `SDKNotificationMessage`): something a person watching
 * the turn should know, as `text`; Keel's `key`s carry their details as fields of their own.
 *
 * @category Models
 */
export interface NotificationBase<Key extends string> {
  readonly type: "system"
  readonly subtype: "notification"
  readonly key: Key
  /** For people. */
  readonly text: string
  readonly priority: "low" | "medium" | "high" | "immediate"
  readonly uuid: string
  readonly session_id: string
}

/** `api_retry_wait`: still waiting to retry (a heartbeat every 30 s of a long wait). @category Models */
export interface RetryWait extends NotificationBase<"api_retry_wait"> {
  readonly attempt: number
  readonly waited_ms: number
  readonly retry_in_ms: number
}

/** `stream_stalled`: the model stream has gone quiet for half the idle timeout. @category Models */
export interface StreamStalled extends NotificationBase<"stream_stalled"> {
  readonly idle_ms: number
  readonly timeout_ms: number
}

/**
 * `message_retracted`: the partial answer streamed since the last `message_start` (as
 * `stream_event`s) is void; a new attempt follows. Final `assistant` messages are never retracted:
 * they are emitted only once complete.
 *
 * @category Models
 */
export interface Retracted extends NotificationBase<"message_retracted"> {
  readonly reason: "retry" | "fallback"
  readonly message_id: string | null
}

/** The notifications Keel sends. @category Models */
export type Notification = RetryWait | StreamStalled | Retracted

/** `system`/`permission_denied`: a tool call was denied (it is also in the result's `permission_denials`). @category Models */
export interface PermissionDenied {
  readonly type: "system"
  readonly subtype: "permission_denied"
  readonly tool_name: string
  readonly tool_use_id: string
  /** Why, as the model was told. */
  readonly message: string
  readonly uuid: string
  readonly session_id: string
}

/** `system`/`compact_boundary`: the conversation before this point was replaced by a summary. @category Models */
export interface CompactBoundary {
  readonly type: "system"
  readonly subtype: "compact_boundary"
  readonly compact_metadata: {
    readonly trigger: "manual" | "auto"
    readonly pre_tokens: number
    readonly post_tokens: number
    readonly duration_ms: number
  }
  readonly uuid: string
  readonly session_id: string
}

/**
 * A `system`/`informational` warning that the rest of the turn uses `fallback_model` (Claude Code's
 * "Switched to X due to high demand for Y"), with both models as fields.
 *
 * @category Models
 */
export interface ModelFallback {
  readonly type: "system"
  readonly subtype: "informational"
  readonly level: "warning"
  /** For people: "Switched to X due to high demand for Y". */
  readonly content: string
  readonly original_model: string
  readonly fallback_model: string
  readonly error_status: number | null
  readonly uuid: string
  readonly session_id: string
}

/**
 * Token usage with every field of the API's `Usage` present (the SDK's `NonNullableUsage`): the
 * counters Keel does not track are zero, `inference_geo` is `""`, `iterations` is empty.
 *
 * @category Models
 */
export interface NonNullableUsage {
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cache_creation_input_tokens: number
  readonly cache_read_input_tokens: number
  readonly server_tool_use: { readonly web_search_requests: number; readonly web_fetch_requests: number }
  readonly service_tier: "standard" | "priority" | "batch"
  readonly cache_creation: { readonly ephemeral_1h_input_tokens: number; readonly ephemeral_5m_input_tokens: number }
  readonly output_tokens_details: { readonly thinking_tokens: number }
  readonly fallback_credit: null
  readonly inference_geo: string
  readonly iterations: ReadonlyArray<never>
  readonly speed: "standard" | "fast"
}

/** Usage with every counter at zero (the `usage` of a result without a model call). @category Constants */
export const emptyUsage: NonNullableUsage = {
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  server_tool_use: { web_search_requests: 0, web_fetch_requests: 0 },
  service_tier: "standard",
  cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 0 },
  output_tokens_details: { thinking_tokens: 0 },
  fallback_credit: null,
  inference_geo: "",
  iterations: [],
  speed: "standard"
}

/** Per-model totals in a `result`. @category Models */
export interface ModelUsageReport {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cacheReadInputTokens: number
  readonly cacheCreationInputTokens: number
  readonly cacheCreationEphemeral5mInputTokens: number
  readonly cacheCreationEphemeral1hInputTokens: number
  readonly webSearchRequests: number
  /** Cumulative over the session; 0 for a model the pricing table does not know. */
  readonly costUSD: number
  readonly contextWindow: number
  readonly maxOutputTokens: number
}

/** `result`: exactly one per turn, always the turn's last message. @category Models */
export interface Result {
  readonly type: "result"
  readonly subtype:
    | "success"
    | "error_max_turns"
    | "error_max_budget_usd"
    | "error_max_structured_output_retries"
    | "error_during_execution"
  readonly is_error: boolean
  /** The final answer (success), or what failed. With an output schema, the structured output as JSON text. */
  readonly result?: string
  /** With an output schema (`--json-schema`, `outputFormat`): the answer, matching it (success only). */
  readonly structured_output?: unknown
  readonly errors?: ReadonlyArray<string>
  readonly api_error_status?: number | null
  readonly duration_ms: number
  readonly duration_api_ms: number
  readonly num_turns: number
  readonly stop_reason: string | null
  readonly total_cost_usd: number
  readonly usage: NonNullableUsage
  readonly modelUsage: Readonly<Record<string, ModelUsageReport>>
  readonly permission_denials: ReadonlyArray<PermissionDenial>
  /** Why the turn ended, in the SDK's `TerminalReason` terms. */
  readonly terminal_reason: TerminalReason
  readonly uuid: string
  readonly session_id: string
}

/**
 * Why a turn ended: the members of the SDK's `TerminalReason` that Keel reports. An answer still
 * cut at the output limit after the allowed continuations is a `model_error`.
 *
 * @category Models
 */
export type TerminalReason =
  | Exclude<TurnEvent.TerminalReason, "max_output_tokens">
  /** A `stream-json` input line that could not start a turn (not JSON, not a user message). */
  | "turn_setup_failed"
  /** A hook stopped the prompt before it reached the model (a UserPromptSubmit hook's block). */
  | "hook_stopped"

/**
 * `system`/`local_command_output`: what a slash command answered without calling the model (`/cost`,
 * `/context`, `/model`, `/help`); its `result` follows.
 *
 * @category Models
 */
export interface LocalCommandOutput {
  readonly type: "system"
  readonly subtype: "local_command_output"
  readonly content: string
  readonly uuid: string
  readonly session_id: string
}

/**
 * `system`/`informational`: a note for people, not the model: a model without a known price (once
 * per model and session), an `@` mention that could not be attached.
 *
 * @category Models
 */
export interface Informational {
  readonly type: "system"
  readonly subtype: "informational"
  readonly level: "info" | "notice" | "suggestion" | "warning"
  readonly content: string
  readonly uuid: string
  readonly session_id: string
}

/** A tool call that is still running (`tool_progress`). @category Models */
export interface ToolProgress {
  readonly type: "tool_progress"
  readonly tool_use_id: string
  readonly tool_name: string
  readonly parent_tool_use_id: string | null
  readonly elapsed_time_seconds: number
  readonly uuid: string
  readonly session_id: string
}

/** Every message a session emits. @category Models */
export type SdkMessage =
  | SystemInit
  | Assistant
  | User
  | PartialAssistant
  | ApiRetry
  | Status
  | Notification
  | ModelFallback
  | CompactBoundary
  | PermissionDenied
  | ToolProgress
  | LocalCommandOutput
  | Informational
  | Result
