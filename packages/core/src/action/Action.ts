/**
 * A pending action: something a turn cannot decide alone and waits for an answer to, from
 * whoever fronts the runtime (the REPL's prompt, a stream-json host's `control_response`, a
 * `query()` host's `canUseTool`, an RPC client). The kinds:
 *
 * - `permission`: a tool call the permission policy asks about (Claude Code's `can_use_tool`).
 *   `AskUserQuestion` is one of these, as in Claude Code: the answer allows the call with the
 *   user's `answers` in its `updatedInput`.
 * - `elicitation`: an MCP server's request for input from the user (MCP `elicitation/create`).
 *
 * Requests, answers and their events are schemas: they are written to the transcript (a pending
 * action survives a restart), sent over the wire and validated when they come back.
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/** A tool call that needs the user's permission. @category Requests */
export const PermissionRequest = Schema.Struct({
  kind: Schema.Literal("permission"),
  toolName: Schema.String,
  input: Schema.Unknown,
  toolUseId: Schema.String,
  /** Why it asks (the rule, or the mode). */
  reason: Schema.String
})
/** @category Requests */
export type PermissionRequest = typeof PermissionRequest.Type

/** An MCP server asking the user for input (MCP `elicitation/create`). @category Requests */
export const ElicitationRequest = Schema.Struct({
  kind: Schema.Literal("elicitation"),
  serverName: Schema.String,
  message: Schema.String,
  /** The JSON schema of what the server wants (form mode), if any. */
  requestedSchema: Schema.optional(Schema.Unknown)
})
/** @category Requests */
export type ElicitationRequest = typeof ElicitationRequest.Type

/** What a pending action asks. @category Requests */
export const Request = Schema.Union(PermissionRequest, ElicitationRequest)
/** @category Requests */
export type Request = typeof Request.Type

/** The answer to a permission request (the Agent SDK's `PermissionResult`). @category Answers */
export const PermissionAnswer = Schema.Union(
  Schema.Struct({
    behavior: Schema.Literal("allow"),
    /** The input the call runs with instead (e.g. `AskUserQuestion` with its `answers`). */
    updatedInput: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
    /** Changes to the permission policy ("always allow"), checked where they are applied (`PermissionUpdate`). */
    updatedPermissions: Schema.optional(Schema.Array(Schema.Unknown))
  }),
  Schema.Struct({
    behavior: Schema.Literal("deny"),
    message: Schema.String,
    /** Also stop the turn (the Agent SDK's `interrupt: true`). */
    interrupt: Schema.optional(Schema.Boolean)
  })
)
/** @category Answers */
export type PermissionAnswer = typeof PermissionAnswer.Type

/** The answer to an elicitation (MCP's `ElicitResult`). @category Answers */
export const ElicitationAnswer = Schema.Struct({
  action: Schema.Literal("accept", "decline", "cancel"),
  content: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})
/** @category Answers */
export type ElicitationAnswer = typeof ElicitationAnswer.Type

/** Any answer. @category Answers */
export const Answer = Schema.Union(PermissionAnswer, ElicitationAnswer)
/** @category Answers */
export type Answer = typeof Answer.Type

/** The answer type of each request kind. @category Answers */
export type AnswerOf<R extends Request> = R extends PermissionRequest ? PermissionAnswer : ElicitationAnswer

/** `answer`, checked against the answer schema of `request`'s kind. @category Answers */
export const decodeAnswer = (request: Request, answer: unknown): Effect.Effect<Answer, ParseResult.ParseError> =>
  request.kind === "permission"
    ? Schema.decodeUnknown(PermissionAnswer)(answer)
    : Schema.decodeUnknown(ElicitationAnswer)(answer)

/** An action waiting for its answer. @category Models */
export const Pending = Schema.Struct({
  /** The action's id: what `respond` names. */
  id: Schema.String,
  /** The turn it pauses, when it came from one. */
  turnId: Schema.NullOr(Schema.String),
  request: Request,
  /** When it was opened (epoch ms, from `Clock`). */
  openedAt: Schema.Number
})
/** @category Models */
export type Pending = typeof Pending.Type

/**
 * What happened to an action: opened, answered (`resolved`), or `cancelled` (its turn was
 * cancelled, or it timed out). The transcript keeps these; folding them gives what is pending.
 *
 * @category Models
 */
export const Event = Schema.Union(
  Schema.Struct({ event: Schema.Literal("opened"), action: Pending }),
  Schema.Struct({ event: Schema.Literal("resolved"), id: Schema.String, answer: Answer }),
  Schema.Struct({ event: Schema.Literal("cancelled"), id: Schema.String, reason: Schema.String })
)
/** @category Models */
export type Event = typeof Event.Type

/** The actions still open after `events`, in the order they opened. @category Folding */
export const pendingAfter = (events: ReadonlyArray<Event>): ReadonlyArray<Pending> => {
  const open = new Map<string, Pending>()
  for (const e of events) {
    if (e.event === "opened") open.set(e.action.id, e.action)
    else open.delete(e.id)
  }
  return [...open.values()]
}

/** A one-line description of a request, for lists and logs. @category Formatting */
export const describe = (request: Request): string =>
  request.kind === "permission"
    ? `${request.toolName} (${request.reason})`
    : `${request.serverName} asks: ${request.message}`
