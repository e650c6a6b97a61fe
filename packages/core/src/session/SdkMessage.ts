/**
 * The messages a session emits, shaped as Claude Code's headless `stream-json` protocol and the
 * Claude Agent SDK's `SDKMessage` union, so their consumers can read Keel's output unchanged.
 * Every message carries `uuid` and `session_id`.
 *
 * @since 0.1.0
 */
import type { MessageParam } from "../message/Message.js"
import type { StreamEvent } from "../model/StreamEvent.js"
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
  readonly uuid: string
}

/** The API's assistant message, as `assistant` messages carry it. @category Models */
export interface ApiAssistantMessage {
  readonly id: string
  readonly type: "message"
  readonly role: "assistant"
  readonly model: string
  readonly content: MessageParam["content"]
  readonly stop_reason: string | null
  readonly stop_sequence: string | null
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

/** `system`/`api_retry`: a failed request will be retried after `retry_delay_ms`. @category Models */
export interface ApiRetry {
  readonly type: "system"
  readonly subtype: "api_retry"
  readonly attempt: number
  /** `null` when unbounded (persistent mode, 429/529). */
  readonly max_retries: number | null
  readonly retry_delay_ms: number
  /** `null` when there was no HTTP answer (connection error, idle or truncated stream). */
  readonly error_status: number | null
  readonly error: string
  /** What failed, for people. */
  readonly error_message: string
  readonly uuid: string
  readonly session_id: string
}

/**
 * `system`/`status`: still waiting to retry (a heartbeat every 30 s of a long wait), the model
 * stream has gone quiet (half the idle timeout), or the conversation is being compacted.
 *
 * @category Models
 */
export interface Status {
  readonly type: "system"
  readonly subtype: "status"
  readonly status: "retrying" | "stalled" | "compacting" | (string & {})
  readonly attempt?: number
  readonly waited_ms?: number
  readonly retry_in_ms?: number
  readonly idle_ms?: number
  readonly timeout_ms?: number
  readonly uuid: string
  readonly session_id: string
}

/**
 * `system`/`tombstone`: the partial answer streamed since the last `message_start` (as
 * `stream_event`s) is void; a new attempt follows. Final `assistant` messages are never retracted:
 * they are emitted only once complete.
 *
 * @category Models
 */
export interface Tombstone {
  readonly type: "system"
  readonly subtype: "tombstone"
  readonly reason: "retry" | "fallback"
  readonly message_id: string | null
  readonly uuid: string
  readonly session_id: string
}

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

/** `system`/`model_fallback`: the rest of the turn uses `fallback_model`. @category Models */
export interface ModelFallback {
  readonly type: "system"
  readonly subtype: "model_fallback"
  readonly original_model: string
  readonly fallback_model: string
  /** For people: "Switched to X due to high demand for Y". */
  readonly content: string
  readonly error_status: number | null
  readonly uuid: string
  readonly session_id: string
}

/** Token usage with every field present. @category Models */
export interface NonNullableUsage {
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cache_creation_input_tokens: number
  readonly cache_read_input_tokens: number
  readonly server_tool_use: { readonly web_search_requests: number; readonly web_fetch_requests: number }
  readonly service_tier: string
  readonly cache_creation: { readonly ephemeral_1h_input_tokens: number; readonly ephemeral_5m_input_tokens: number }
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
  readonly subtype: "success" | "error_max_turns" | "error_max_budget_usd" | "error_during_execution"
  readonly is_error: boolean
  /** The final answer (success), or what failed. */
  readonly result?: string
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
  readonly terminal_reason: string
  readonly uuid: string
  readonly session_id: string
}

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
  | Tombstone
  | ModelFallback
  | CompactBoundary
  | PermissionDenied
  | ToolProgress
  | LocalCommandOutput
  | Informational
  | Result
