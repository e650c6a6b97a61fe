/**
 * A turn's end as the `result` message of Claude Code's headless protocol (`SdkMessage.Result`):
 * its subtype, error texts and totals; and a slash command's `result`. Pure, as `SdkProjection`.
 *
 * @since 0.1.0
 */
import { describe, statusOf } from "../model/ModelError.js"
import type { TurnEvent } from "../turn/TurnEvent.js"
import type { Stamp } from "./SdkProjection.js"
import { usage } from "./SdkProjection.js"
import * as SdkMessage from "./SdkMessage.js"
import type { PermissionDenial } from "./SessionState.js"
import { type TokenUsage, zero as zeroTokens } from "./TokenUsage.js"

/** What a turn's `result` reports besides its end. @category Models */
export interface Totals {
  readonly durationMs: number
  readonly apiDurationMs: number
  /** The turn's own tokens. */
  readonly usage: TokenUsage
  /** The session's cost so far. */
  readonly modelUsage: SdkMessage.Result["modelUsage"]
  readonly totalCostUsd: number
  readonly permissionDenials: ReadonlyArray<PermissionDenial>
  /** The limits the turn ran under, for their error messages. */
  readonly maxTurns: number
  readonly maxBudgetUsd: number | undefined
}

/** The `result` of a turn that ended with `event`. @category Conversions */
export const result = (
  event: Extract<TurnEvent, { _tag: "TurnComplete" }>,
  totals: Totals,
  stamp: Stamp
): SdkMessage.Result => {
  const common = {
    type: "result" as const,
    duration_ms: totals.durationMs,
    duration_api_ms: totals.apiDurationMs,
    num_turns: event.iterations,
    stop_reason: event.lastMessage?.stop_reason ?? null,
    total_cost_usd: totals.totalCostUsd,
    usage: usage(totals.usage),
    modelUsage: totals.modelUsage,
    permission_denials: totals.permissionDenials,
    // The SDK has no reason for an answer still cut after its continuations: an error of the model call.
    terminal_reason: event.reason === "max_output_tokens" ? "model_error" as const : event.reason,
    uuid: stamp.uuid(),
    session_id: stamp.sessionId
  }
  switch (event.reason) {
    case "completed":
      // With an output schema the answer is the structured output, and `result` its JSON (as Claude Code).
      return event.structuredOutput !== undefined
        ? {
          ...common,
          subtype: "success",
          is_error: false,
          result: JSON.stringify(event.structuredOutput),
          structured_output: event.structuredOutput
        }
        : { ...common, subtype: "success", is_error: false, result: event.lastMessage?.text ?? "" }
    case "model_error": {
      const error = event.error!
      return { ...common, subtype: "success", is_error: true, result: `API Error: ${describe(error)}`, api_error_status: statusOf(error) }
    }
    case "max_turns":
      return { ...common, subtype: "error_max_turns", is_error: true, errors: [`Reached max turns (${totals.maxTurns})`] }
    case "aborted_streaming":
    case "aborted_tools":
      return { ...common, subtype: "error_during_execution", is_error: true, errors: ["Interrupted by user"] }
    case "prompt_too_long": {
      const what = event.message ?? (event.error !== undefined ? describe(event.error) : "The prompt is too long")
      const text = `${what}. The conversation no longer fits the context window: run /clear or start a new session.`
      return { ...common, subtype: "error_during_execution", is_error: true, result: text, errors: [text] }
    }
    case "max_output_tokens": {
      const text = event.message ?? "The answer was cut at the output limit"
      return { ...common, subtype: "error_during_execution", is_error: true, result: text, errors: [text] }
    }
    case "budget_exhausted":
      return {
        ...common,
        subtype: "error_max_budget_usd",
        is_error: true,
        errors: [event.message ?? `Reached maximum budget ($${totals.maxBudgetUsd})`]
      }
    case "structured_output_retry_exhausted":
      return {
        ...common,
        subtype: "error_max_structured_output_retries",
        is_error: true,
        errors: [event.message ?? "No valid structured output"]
      }
  }
}

/**
 * The `result` of a command the session answers itself (a slash command, `/compact`, `/clear`): no
 * model turn and no usage of its own; an error is `error_during_execution`, with `text` in `errors`.
 *
 * @category Conversions
 */
export const commandResult = (
  r: {
    readonly text: string
    readonly isError: boolean
    readonly terminalReason: SdkMessage.TerminalReason
  },
  totals: Omit<Totals, "usage" | "maxTurns" | "maxBudgetUsd">,
  stamp: Stamp
): SdkMessage.Result => ({
  type: "result",
  subtype: r.isError ? "error_during_execution" : "success",
  is_error: r.isError,
  result: r.text,
  ...(r.isError ? { errors: [r.text] } : {}),
  duration_ms: totals.durationMs,
  duration_api_ms: totals.apiDurationMs,
  num_turns: 0,
  stop_reason: null,
  total_cost_usd: totals.totalCostUsd,
  usage: usage(zeroTokens),
  modelUsage: totals.modelUsage,
  permission_denials: totals.permissionDenials,
  terminal_reason: r.terminalReason,
  uuid: stamp.uuid(),
  session_id: stamp.sessionId
})
