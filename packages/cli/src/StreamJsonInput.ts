/**
 * The lines of `--input-format stream-json` input: each read as a prompt, a control request or
 * response, something ignored, or a malformed line with what is wrong; and the error `result` a
 * malformed line answers with.
 *
 * @since 0.1.0
 */
import { Admission, Message, SdkMessage } from "@keel/core"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as ControlMessages from "./ControlMessages.js"

/**
 * One line of `stream-json` input, read:
 * - `Prompt`: a user message; string content is a prompt as `-p` takes it (slash commands and
 *   `@path` mentions work), content blocks go to the model as given.
 * - `Malformed`: not JSON, not a message, or a user message that is not valid; `error` says which
 *   line and what is wrong, and what a line should look like.
 * - `Control`: a control request (`interrupt` is served; the others are answered with an error).
 * - `Response`: a control response: the host's answer to a `control_request` Keel sent (a
 *   permission ask, with `--permission-prompt-tool stdio`).
 * - `Ignored`: a message of another type (only user messages start turns).
 *
 * @category Models
 */
export type InputLine =
  | {
    readonly _tag: "Prompt"
    readonly line: number
    readonly prompt: string | Message.UserMessage
    /** The message's `priority` (`now`, `next`, `later`), as the Agent SDK's user messages carry it. */
    readonly priority?: Admission.Priority | undefined
    /** The message's `uuid`, when the host stamps one (an interrupt's receipt lists it while it waits). */
    readonly uuid?: string | undefined
  }
  | { readonly _tag: "Malformed"; readonly line: number; readonly error: string }
  | {
    readonly _tag: "Control"
    readonly line: number
    readonly requestId: string
    readonly subtype: string
    /** The whole request (its fields beside `subtype`). */
    readonly request: Record<string, unknown>
  }
  | { readonly _tag: "Response"; readonly line: number; readonly response: ControlMessages.Response }
  | { readonly _tag: "Ignored"; readonly line: number; readonly type: string }

const EXAMPLE = `{"type":"user","message":{"role":"user","content":"..."}}`

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const decodeBlocks = Schema.decodeUnknownEither(Schema.Array(Message.ContentBlock))

/**
 * Reads line number `line` of `stream-json` input. `undefined` for a line with nothing to do (blank,
 * `keep_alive`).
 *
 * @category Parsing
 */
export const parseLine = (text: string, line: number): InputLine | undefined => {
  if (text.trim() === "") return undefined
  const malformed = (what: string): InputLine => ({
    _tag: "Malformed",
    line,
    error: `stdin line ${line} ${what}; nothing was sent to the model. Send one user message a line: ${EXAMPLE}`
  })
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (e) {
    return malformed(`is not JSON (${e instanceof Error ? e.message : String(e)})`)
  }
  if (!isRecord(value) || typeof value.type !== "string") return malformed("is not a message (an object with a \"type\")")
  switch (value.type) {
    case "user": {
      const priority = value.priority
      if (priority !== undefined && !Admission.PRIORITIES.includes(priority as Admission.Priority)) {
        return malformed(`is a user message whose priority is ${JSON.stringify(priority)}, not "now", "next" or "later"`)
      }
      const admitted = {
        ...(priority === undefined ? {} : { priority: priority as Admission.Priority }),
        ...(typeof value.uuid === "string" ? { uuid: value.uuid } : {})
      }
      const message = value.message
      if (!isRecord(message)) return malformed("is a user message without a \"message\" object")
      if (message.role !== "user") return malformed(`is a user message whose role is ${JSON.stringify(message.role)}, not "user"`)
      const content = message.content
      if (typeof content === "string") {
        return content.trim() === ""
          ? malformed("is a user message with empty content")
          : { _tag: "Prompt", line, prompt: content, ...admitted }
      }
      if (!Array.isArray(content) || content.length === 0) {
        return malformed("is a user message whose content is neither a string nor a non-empty array of content blocks")
      }
      const decoded = decodeBlocks(content)
      if (Either.isLeft(decoded)) {
        const issue = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]
        const at = issue?.path.map((key) => (typeof key === "number" ? `[${key}]` : `.${String(key)}`)).join("")
        const where = issue === undefined ? "" : ` (content${at}: ${issue.message})`
        return malformed(`is a user message with invalid content blocks${where.replace(/\s+/g, " ")}`)
      }
      return { _tag: "Prompt", line, prompt: new Message.UserMessage({ content: decoded.right }), ...admitted }
    }
    case "control_request": {
      const request = value.request
      const subtype = isRecord(request) && typeof request.subtype === "string" ? request.subtype : undefined
      if (typeof value.request_id !== "string" || subtype === undefined) {
        return malformed("is a control request without a \"request_id\" and a \"request\" with a \"subtype\"")
      }
      return { _tag: "Control", line, requestId: value.request_id, subtype, request: request as Record<string, unknown> }
    }
    case "control_response": {
      const response = ControlMessages.readResponse(value)
      return response === undefined
        ? malformed("is a control response without a \"response\" with a \"subtype\" (success or error) and a \"request_id\"")
        : { _tag: "Response", line, response }
    }
    case "keep_alive":
      return undefined
    default:
      return { _tag: "Ignored", line, type: value.type }
  }
}

/**
 * The error `result` for a line that could not start a turn: no model call, the session's totals
 * so far (from its last result), `errors` saying what was wrong.
 *
 * @category Constructors
 */
export const lineErrorResult = (
  error: string,
  sessionId: string,
  previous: SdkMessage.Result | undefined,
  uuid: () => string
): SdkMessage.Result => ({
  type: "result",
  subtype: "error_during_execution",
  is_error: true,
  errors: [error],
  duration_ms: 0,
  duration_api_ms: 0,
  num_turns: 0,
  stop_reason: null,
  total_cost_usd: previous?.total_cost_usd ?? 0,
  usage: SdkMessage.emptyUsage,
  modelUsage: previous?.modelUsage ?? {},
  permission_denials: previous?.permission_denials ?? [],
  terminal_reason: "turn_setup_failed",
  uuid: uuid(),
  session_id: sessionId
})
