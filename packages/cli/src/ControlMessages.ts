/**
 * Pending actions over Claude Code's stream-json control protocol (`--permission-prompt-tool
 * stdio`): an opened action goes out as a `control_request` (`can_use_tool` for a permission ask,
 * `elicitation` for an MCP server's question) whose `request_id` is the action's id, a cancelled
 * one as a `control_cancel_request`; the host's `control_response` comes back as the action's
 * answer (`Actions.respond`). An error response refuses: `deny` for a permission, `cancel` for an
 * elicitation.
 *
 * @since 0.1.0
 */
import { type Action, PermissionUpdate } from "@keel/core"

/** The stdout line for an action's event (a `control_request` or `control_cancel_request`). @category Encoding */
export const lineFor = (event: Action.Event): Record<string, unknown> => {
  switch (event.event) {
    case "opened": {
      const { id, request } = event.action
      return {
        type: "control_request",
        request_id: id,
        request: request.kind === "permission"
          ? {
            subtype: "can_use_tool",
            tool_name: request.toolName,
            input: request.input,
            tool_use_id: request.toolUseId,
            decision_reason: request.reason,
            permission_suggestions: PermissionUpdate.suggestionsFor(request.toolName, request.input)
          }
          : {
            subtype: "elicitation",
            mcp_server_name: request.serverName,
            message: request.message,
            ...(request.requestedSchema !== undefined ? { requested_schema: request.requestedSchema } : {})
          }
      }
    }
    case "cancelled":
      return { type: "control_cancel_request", request_id: event.id }
    case "resolved":
      return {}
  }
}

/** A host's `control_response`, read: the request it answers, and its answer or its error. @category Models */
export type Response =
  | { readonly _tag: "Answer"; readonly requestId: string; readonly answer: unknown }
  | { readonly _tag: "Error"; readonly requestId: string; readonly error: string }

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Reads a `control_response` line's value; `undefined` when it is not shaped as one (no `response`
 * with a `subtype` and a `request_id`).
 *
 * @category Decoding
 */
export const readResponse = (value: Record<string, unknown>): Response | undefined => {
  const response = value.response
  if (!isRecord(response) || typeof response.request_id !== "string") return undefined
  if (response.subtype === "success") return { _tag: "Answer", requestId: response.request_id, answer: response.response }
  if (response.subtype === "error") {
    return {
      _tag: "Error",
      requestId: response.request_id,
      error: typeof response.error === "string" ? response.error : "the host answered with an error"
    }
  }
  return undefined
}

/** The refusal an error response stands for, for an action of `request`'s kind. @category Decoding */
export const refusal = (request: Action.Request, error: string): Action.Answer =>
  request.kind === "permission"
    ? { behavior: "deny", message: `Permission to use ${request.toolName} was denied: ${error}.` }
    : { action: "cancel" }
