/**
 * The SDK projection: the kernel's facts (turn events, token usage, a turn's end, a command's
 * answer) as the messages of Claude Code's headless protocol and the Agent SDK (`SdkMessage`).
 * Pure functions: what they need they are given, ids included (from the session's `Ids`), so the
 * same facts always give the same messages.
 *
 * @since 0.1.0
 */
import { type AssistantMessage, type Message, type ToolResultBlock, toParam, UserMessage } from "../message/Message.js"
import { category, describe, statusOf } from "../model/ModelError.js"
import type { ModelNotice } from "../model/ModelNotice.js"
import type { ToolEvent } from "../tool/ToolEvent.js"
import type { TurnEvent } from "../turn/TurnEvent.js"
import * as SdkMessage from "./SdkMessage.js"
import type { PermissionDenial } from "./SessionState.js"
import { fromResponse, type TokenUsage, zero as zeroTokens } from "./TokenUsage.js"

/** Who the messages belong to, and where their ids come from. @category Models */
export interface Stamp {
  readonly sessionId: string
  /** A new message id (the session's `Ids`). */
  readonly uuid: () => string
  /**
   * The uuid of a message of the conversation (a prompt, an answer, tool results): its transcript
   * entry's (see `MessageIds`); default a new one.
   */
  readonly messageUuid?: ((message: Message) => string) | undefined
  /** The tool call whose subagent these messages are from (`null` for the session's own). */
  readonly parentToolUseId: string | null
}

/** The usage fields of an SDK message: every field of the API's `Usage` present, from a `TokenUsage`. @category Conversions */
export const usage = (u: TokenUsage): SdkMessage.NonNullableUsage => ({
  input_tokens: u.inputTokens,
  output_tokens: u.outputTokens,
  cache_creation_input_tokens: u.cacheCreationInputTokens,
  cache_read_input_tokens: u.cacheReadInputTokens,
  server_tool_use: { web_search_requests: 0, web_fetch_requests: 0 },
  service_tier: "standard",
  cache_creation: {
    ephemeral_1h_input_tokens: u.cacheCreationEphemeral1hInputTokens,
    ephemeral_5m_input_tokens: u.cacheCreationEphemeral5mInputTokens
  },
  output_tokens_details: { thinking_tokens: 0 },
  fallback_credit: null,
  inference_geo: "",
  iterations: [],
  speed: "standard"
})

/** The `message` field of an `assistant` SDK message. @category Conversions */
export const apiMessage = (
  message: AssistantMessage,
  fallbackModel: string,
  tokens: TokenUsage
): SdkMessage.ApiAssistantMessage => ({
  id: message.id ?? "",
  type: "message",
  role: "assistant",
  model: message.model ?? fallbackModel,
  content: toParam(message).content,
  stop_reason: message.stop_reason ?? null,
  stop_sequence: message.stop_sequence ?? null,
  stop_details: null,
  container: null,
  context_management: null,
  diagnostics: null,
  usage: usage(tokens)
})

/** `1.5 s`, `30 s`: a duration for notification texts. */
const seconds = (ms: number): string => `${Math.round(ms / 100) / 10} s`

/** The SDK message for a resilience layer's notice. @category Conversions */
export const notice = (n: ModelNotice, stamp: Stamp): SdkMessage.SdkMessage => {
  const ids = { uuid: stamp.uuid(), session_id: stamp.sessionId }
  switch (n._tag) {
    case "Retrying":
      return {
        type: "system",
        subtype: "api_retry",
        attempt: n.attempt,
        max_retries: n.maxRetries ?? SdkMessage.UNBOUNDED_RETRIES,
        retry_delay_ms: n.delayMs,
        error_status: statusOf(n.error),
        error: category(n.error),
        error_message: describe(n.error),
        ...ids
      }
    case "Waiting":
      return {
        type: "system",
        subtype: "notification",
        key: "api_retry_wait",
        text: `Still waiting to retry (${seconds(n.remainingMs)} left)`,
        priority: "low",
        attempt: n.attempt,
        waited_ms: n.waitedMs,
        retry_in_ms: n.remainingMs,
        ...ids
      }
    case "StreamStalled":
      return {
        type: "system",
        subtype: "notification",
        key: "stream_stalled",
        text: `No data from the API for ${seconds(n.idleMs)}; the request is retried at ${seconds(n.timeoutMs)}`,
        priority: "medium",
        idle_ms: n.idleMs,
        timeout_ms: n.timeoutMs,
        ...ids
      }
    case "Retracted":
      return {
        type: "system",
        subtype: "notification",
        key: "message_retracted",
        text: n.reason === "retry"
          ? "The partial answer was cut off; asking again"
          : "The partial answer was dropped; asking the fallback model",
        priority: "low",
        reason: n.reason,
        message_id: n.messageId ?? null,
        ...ids
      }
    case "ModelSwitched":
      return {
        type: "system",
        subtype: "informational",
        level: "warning",
        content: `Switched to ${n.to} due to high demand for ${n.from}`,
        original_model: n.from,
        fallback_model: n.to,
        error_status: statusOf(n.error),
        ...ids
      }
  }
}

/** A `system`/`informational` warning for people (a mention not attached, a transcript problem). @category Conversions */
export const warning = (content: string, stamp: Stamp): SdkMessage.Informational => ({
  type: "system",
  subtype: "informational",
  level: "warning",
  content,
  uuid: stamp.uuid(),
  session_id: stamp.sessionId
})

/** The uuid of `message`'s SDK message: its transcript entry's when the stamp knows it. @category Conversions */
export const uuidOf = (message: Message, stamp: Stamp): string =>
  stamp.messageUuid !== undefined ? stamp.messageUuid(message) : stamp.uuid()

/**
 * The `user` message for a message of the conversation (a prompt, tool results, a note), with the
 * uuid of its entry (`options.uuid` when it is part of a message: see {@link toolResults}).
 *
 * @category Conversions
 */
export const user = (
  message: UserMessage,
  stamp: Stamp,
  options: { readonly synthetic?: boolean; readonly uuid?: string } = {}
): SdkMessage.User => ({
  type: "user",
  message: toParam(message),
  ...(options.synthetic === true ? { isSynthetic: true } : {}),
  uuid: options.uuid ?? uuidOf(message, stamp),
  session_id: stamp.sessionId,
  parent_tool_use_id: stamp.parentToolUseId
})

/** `system`/`compact_boundary` for a compaction. @category Conversions */
export const compactBoundary = (
  c: { readonly trigger: "auto" | "manual"; readonly preTokens: number; readonly postTokens: number; readonly durationMs: number },
  stamp: Stamp
): SdkMessage.CompactBoundary => ({
  type: "system",
  subtype: "compact_boundary",
  compact_metadata: { trigger: c.trigger, pre_tokens: c.preTokens, post_tokens: c.postTokens, duration_ms: c.durationMs },
  uuid: stamp.uuid(),
  session_id: stamp.sessionId
})

/**
 * The `system`/`status` that closes a compaction (status `null`): `compact_result` `success`, or
 * `failed` with the reason as `compact_error`. It follows the `compacting` status and comes before
 * the `compact_boundary`, as Claude Code orders them.
 *
 * @category Conversions
 */
export const compactResult = (error: string | undefined, stamp: Stamp): SdkMessage.Status => ({
  type: "system",
  subtype: "status",
  status: null,
  ...(error === undefined ? { compact_result: "success" as const } : { compact_result: "failed" as const, compact_error: error }),
  uuid: stamp.uuid(),
  session_id: stamp.sessionId
})

/** `system`/`status` for a status the Agent SDK names, else an `info` line. @category Conversions */
export const status = (text: string, stamp: Stamp): SdkMessage.SdkMessage =>
  text === "compacting" || text === "requesting"
    ? { type: "system", subtype: "status", status: text, uuid: stamp.uuid(), session_id: stamp.sessionId }
    : { type: "system", subtype: "informational", level: "info", content: text, uuid: stamp.uuid(), session_id: stamp.sessionId }

/** `system`/`local_command_output`: what a command answered. @category Conversions */
export const commandOutput = (content: string, stamp: Stamp): SdkMessage.LocalCommandOutput => ({
  type: "system",
  subtype: "local_command_output",
  content,
  uuid: stamp.uuid(),
  session_id: stamp.sessionId
})

/**
 * `system`/`permission_denied` for each call among `results` that a denial answered (the denials
 * are the session's; the text is what the model was told, without its error wrapper).
 *
 * @category Conversions
 */
export const permissionDenied = (
  results: UserMessage,
  denials: ReadonlyArray<PermissionDenial>,
  stamp: Stamp
): Array<SdkMessage.PermissionDenied> => {
  const out: Array<SdkMessage.PermissionDenied> = []
  for (const block of results.toolResults) {
    const denial = denials.find((d) => d.tool_use_id === block.tool_use_id)
    if (denial === undefined) continue
    const text = typeof block.content === "string" ? block.content : ""
    out.push({
      type: "system",
      subtype: "permission_denied",
      tool_name: denial.tool_name,
      tool_use_id: denial.tool_use_id,
      message: text.replace(/^<tool_use_error>|<\/tool_use_error>$/g, ""),
      uuid: stamp.uuid(),
      session_id: stamp.sessionId
    })
  }
  return out
}

/**
 * The `user` messages of tool results, one per result as Claude Code sends them, each with its
 * call's structured result as `tool_use_result` (when the call gave one). A message with several
 * results and other blocks besides (a memory note) goes whole, without `tool_use_result`. The
 * results are one transcript entry: the last of them carries its uuid (a cut there keeps them all),
 * the others new ones.
 *
 * @category Conversions
 */
export const toolResults = (message: UserMessage, stamp: Stamp): Array<SdkMessage.User> => {
  const results = message.toolResults
  const withResult = (projected: SdkMessage.User, block: ToolResultBlock): SdkMessage.User =>
    block.toolUseResult === undefined ? projected : { ...projected, tool_use_result: block.toolUseResult }
  if (results.length === 1) return [withResult(user(message, stamp), results[0]!)]
  if (results.length === 0 || results.length !== message.content.length) return [user(message, stamp)]
  // each block is already an instance (validated when made): its one-block message is not validated again
  const last = results.length - 1
  return results.map((block, i) =>
    withResult(
      user(new UserMessage({ content: [block] }, true), stamp, i === last ? { uuid: uuidOf(message, stamp) } : { uuid: stamp.uuid() }),
      block
    )
  )
}

/** A nested call's messages: a subagent's prompt, answers, tool results and progress (nothing else of its turn). */
const reported = (toolUseId: string, event: ToolEvent, stamp: Stamp, model: string, out: Array<SdkMessage.SdkMessage>) => {
  const nested: Stamp = { ...stamp, parentToolUseId: toolUseId }
  if (event._tag === "SubagentPrompt") {
    out.push(user(event.message, nested))
    return
  }
  const inner = event.event
  switch (inner._tag) {
    case "Assistant":
    case "ToolResults":
    case "ToolProgress":
    case "ToolReported":
      turnEvent(inner, nested, model, out)
      return
    default:
      return
  }
}

/**
 * Appends the SDK messages of one turn event (all but `TurnComplete`, whose result needs the
 * session's totals: see {@link result}). `model` names answers that do not say their model.
 *
 * @category Conversions
 */
export const turnEvent = (
  event: Exclude<TurnEvent, { _tag: "TurnComplete" }>,
  stamp: Stamp,
  model: string,
  out: Array<SdkMessage.SdkMessage>
): void => {
  switch (event._tag) {
    case "StreamEvents":
      for (const e of event.events) {
        out.push({
          type: "stream_event",
          event: e,
          uuid: stamp.uuid(),
          session_id: stamp.sessionId,
          parent_tool_use_id: stamp.parentToolUseId
        })
      }
      return
    case "Assistant": {
      const u = event.message.usage
      out.push({
        type: "assistant",
        message: apiMessage(event.message, model, u === undefined ? zeroTokens : fromResponse(u)),
        uuid: uuidOf(event.message, stamp),
        session_id: stamp.sessionId,
        parent_tool_use_id: stamp.parentToolUseId
      })
      return
    }
    case "ToolResults":
      out.push(...toolResults(event.message, stamp))
      return
    case "Continuation":
      out.push(user(event.message, stamp, { synthetic: true }))
      return
    case "Status":
      out.push(status(event.status, stamp))
      return
    case "StageApplied":
      if (event.report.compaction !== undefined) {
        out.push(compactResult(undefined, stamp), compactBoundary(event.report.compaction, stamp))
      } else if (event.report.compactionError !== undefined) out.push(compactResult(event.report.compactionError, stamp))
      return
    case "Notice":
      out.push(notice(event.notice, stamp))
      return
    case "ToolProgress":
      out.push({
        type: "tool_progress",
        tool_use_id: event.toolUseId,
        tool_name: event.toolName,
        elapsed_time_seconds: event.elapsedSeconds,
        uuid: stamp.uuid(),
        session_id: stamp.sessionId,
        parent_tool_use_id: stamp.parentToolUseId
      })
      return
    case "ToolReported":
      reported(event.toolUseId, event.event, stamp, model, out)
      return
  }
}
