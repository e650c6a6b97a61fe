/**
 * The runtime protocol: what fronts a session runtime (`SessionRuntime`) for an IDE, an app or,
 * later, a cluster, as one `@effect/rpc` group. Each operation is one `Rpc` with a Schema payload,
 * success and error, and nothing here knows a transport: `keel serve` serves the group over stdio
 * (JSON lines) and HTTP, and a test serves it in memory.
 *
 * Sessions are named by the `sessionId` that `session.start` returns (the session's id when it
 * started; it stays the name after `/clear` gives the conversation a new id). A turn is named by
 * the `turnId` its admission returns. Turn output is streamed: `turn.start` streams its own turn
 * (`Admitted`, then `Started`, its SDK messages and the actions it waits on, `Ended`),
 * `session.events` every turn of the session as it runs, goal continuations included. An ask (a
 * permission, an MCP elicitation) is a pending action, answered with `action.respond`. A bad
 * request is answered with a typed error, {@link InvalidRequest} among every operation's errors,
 * and never stops the server.
 *
 * To add an operation: one `Rpc.make` here (its payload, success and errors), one handler where the
 * group is served.
 *
 * @since 0.1.0
 */
import * as Rpc from "@effect/rpc/Rpc"
import * as RpcGroup from "@effect/rpc/RpcGroup"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import * as Message from "../message/Message.js"
import * as Export from "../read/Export.js"
import * as ReadModel from "../read/ReadModel.js"
import * as Action from "../action/Action.js"
import { ActionNotFound, InvalidAnswer } from "../action/Actions.js"
import * as Goal from "../goal/Goal.js"
import { QueueFull, TurnCancelled } from "../runtime/SessionRuntime.js"
import type * as SdkMessage from "../session/SdkMessage.js"

export { ActionNotFound, InvalidAnswer } from "../action/Actions.js"
export { QueueFull, TurnCancelled } from "../runtime/SessionRuntime.js"

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/**
 * A request the server could not take: a line that is not JSON (`MalformedJson`), JSON that is not
 * a protocol message (`NotAMessage`), a method the group does not have (`UnknownMethod`), or a
 * payload that does not match the method's schema (`InvalidPayload`). Every operation can fail with
 * it; the server answers it and goes on serving.
 *
 * @category Errors
 */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>("@keel/RuntimeProtocol/InvalidRequest")(
  "InvalidRequest",
  {
    reason: Schema.Literal("MalformedJson", "NotAMessage", "UnknownMethod", "InvalidPayload"),
    /** The method asked for, when the request named one. */
    method: Schema.optional(Schema.String),
    message: Schema.String
  }
) {}

/** No session of this server has this id (never started here, or closed). @category Errors */
export class SessionNotFound extends Schema.TaggedError<SessionNotFound>("@keel/RuntimeProtocol/SessionNotFound")(
  "SessionNotFound",
  { sessionId: Schema.String }
) {
  override get message() {
    return `No open session ${this.sessionId} on this server; session.start opens one (session.list lists them).`
  }
}

/** `session.start` would open a session that is already open here (two runtimes must never share one). @category Errors */
export class SessionAlreadyOpen
  extends Schema.TaggedError<SessionAlreadyOpen>("@keel/RuntimeProtocol/SessionAlreadyOpen")(
    "SessionAlreadyOpen",
    { sessionId: Schema.String }
  )
{
  override get message() {
    return `Session ${this.sessionId} is already open on this server; use it by its id, or close it first.`
  }
}

/**
 * A session that could not be opened: no API key, a saved session that is not there or is corrupt,
 * settings or MCP configuration that cannot be used. `message` is what `keel` would print.
 *
 * @category Errors
 */
export class SessionStartFailed
  extends Schema.TaggedError<SessionStartFailed>("@keel/RuntimeProtocol/SessionStartFailed")(
    "SessionStartFailed",
    { message: Schema.String }
  )
{}

/** A turn that is not where the operation needs it (not queued, or neither queued nor running). @category Errors */
export class TurnNotFound extends Schema.TaggedError<TurnNotFound>("@keel/RuntimeProtocol/TurnNotFound")(
  "TurnNotFound",
  { sessionId: Schema.String, turnId: Schema.String, expected: Schema.Literal("queued", "queued or running") }
) {
  override get message() {
    return `Turn ${this.turnId} of session ${this.sessionId} is not ${this.expected} (it ran, or never was).`
  }
}

/** A turn that died below the session (a bug, not a failed turn: those end with an error `result`). @category Errors */
export class TurnFailed extends Schema.TaggedError<TurnFailed>("@keel/RuntimeProtocol/TurnFailed")(
  "TurnFailed",
  { turnId: Schema.String, message: Schema.String }
) {}

/**
 * The session's transcript could not be read (it is not saved: `persist: false`; or it is corrupt),
 * so there is nothing to export.
 *
 * @category Errors
 */
export class TranscriptUnavailable
  extends Schema.TaggedError<TranscriptUnavailable>("@keel/RuntimeProtocol/TranscriptUnavailable")(
    "TranscriptUnavailable",
    { sessionId: Schema.String, message: Schema.String }
  )
{}

/** The errors every operation can fail with, plus its own. */
const errors = <const Members extends ReadonlyArray<Schema.Schema.All>>(...members: Members) =>
  Schema.Union(InvalidRequest, ...members)

// ---------------------------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------------------------

const isTyped = (u: unknown): u is { readonly type: string } =>
  Predicate.isRecord(u) && typeof (u as { readonly type?: unknown }).type === "string"

/**
 * One of the session's SDK-shaped messages (`system`/`init`, `assistant`, `user`, `result`, ...),
 * exactly as `stream-json` prints it: passed through, checked only for its `type`.
 *
 * @category Schemas
 */
export const SdkMessageSchema: Schema.Schema<SdkMessage.SdkMessage> = Schema.declare(
  (u): u is SdkMessage.SdkMessage => isTyped(u),
  { identifier: "SdkMessage" }
)

/** A `result` message. @category Schemas */
export const ResultSchema: Schema.Schema<SdkMessage.Result> = Schema.declare(
  (u): u is SdkMessage.Result => isTyped(u) && u.type === "result",
  { identifier: "SdkResult" }
)

/** The `system`/`init` message. @category Schemas */
export const SystemInitSchema: Schema.Schema<SdkMessage.SystemInit> = Schema.declare(
  (u): u is SdkMessage.SystemInit => isTyped(u) && u.type === "system" && (u as { subtype?: unknown }).subtype === "init",
  { identifier: "SystemInit" }
)

/** How urgent a turn is: `now` stops the running turn and runs next, `next` (default), `later`. @category Schemas */
export const Priority = Schema.Literal("now", "next", "later")

/** A queued turn, as `queue.list` shows it. @category Schemas */
export const QueuedTurn = Schema.Struct({
  id: Schema.String,
  priority: Priority,
  /** The start of its text, on one line. */
  preview: Schema.String,
  /** When it was submitted (epoch ms). */
  queuedAt: Schema.Number,
  /** Its place in the queue, from 0 (the next to run). */
  position: Schema.Number
})

/** What runs and what waits. @category Schemas */
export const QueueState = Schema.Struct({
  running: Schema.NullOr(Schema.String),
  queued: Schema.Array(QueuedTurn)
})

/** What `session.start` opens: every field optional, the server's own flags are the defaults. @category Schemas */
export const StartOptions = Schema.Struct({
  /** The working directory (default the server's). */
  cwd: Schema.optional(Schema.String),
  model: Schema.optional(Schema.String),
  /** A saved session of `cwd` to go on with, by id. */
  resume: Schema.optional(Schema.String),
  /** Go on with the most recently saved session of `cwd`. */
  continue: Schema.optional(Schema.Boolean),
  /** With `resume`/`continue`: go on as a new session carrying the history. */
  forkSession: Schema.optional(Schema.Boolean),
  /** The id of a new session (a UUID not in use). */
  sessionId: Schema.optional(Schema.String),
  permissionMode: Schema.optional(Schema.Literal("default", "acceptEdits", "bypassPermissions", "plan", "dontAsk")),
  maxTurns: Schema.optional(Schema.Number),
  maxBudgetUsd: Schema.optional(Schema.Number),
  /** Save the transcript (default the server's `--no-session-persistence`, else true). */
  persist: Schema.optional(Schema.Boolean)
})
/** @category Schemas */
export type StartOptions = typeof StartOptions.Type

/** An opened session. @category Schemas */
export const SessionStarted = Schema.Struct({
  sessionId: Schema.String,
  /** The session's `system`/`init` message (tools, model, permission mode, MCP servers, commands). */
  init: SystemInitSchema,
  /** One line per problem that did not stop it (an MCP server that did not connect). */
  warnings: Schema.Array(Schema.String)
})

/** An open session, as `session.list` shows it. @category Schemas */
export const SessionSummary = Schema.Struct({
  sessionId: Schema.String,
  cwd: Schema.String,
  model: Schema.String,
  running: Schema.NullOr(Schema.String),
  queued: Schema.Number
})

/** What `session.read` returns: the session now. @category Schemas */
export const SessionSnapshot = Schema.Struct({
  sessionId: Schema.String,
  /** The conversation's current id (a new one after `/clear`). */
  currentSessionId: Schema.String,
  cwd: Schema.String,
  model: Schema.String,
  running: Schema.NullOr(Schema.String),
  queued: Schema.Array(QueuedTurn),
  /** The last turn's `result` (the session's totals: cost, tokens per model). */
  lastResult: Schema.NullOr(ResultSchema),
  goal: Schema.NullOr(Goal.Goal),
  /** What waits for an answer (`action.respond`). */
  pendingActions: Schema.Array(Action.Pending),
  /** The conversation as the model sees it (after compactions). */
  messages: Schema.Array(Message.Message),
  /**
   * The session's read model (`ReadModel`: turns and their items, usage and cost per turn, files,
   * totals), projected from its transcript as saved so far; `null` when it is not saved.
   */
  readModel: Schema.NullOr(ReadModel.ReadModel)
})

/** A turn was admitted (`turn.start`'s first event): it runs now, or waits in the queue. @category Events */
export const Admitted = Schema.TaggedStruct("Admitted", { turnId: Schema.String })
/** A turn started running. @category Events */
export const Started = Schema.TaggedStruct("Started", { turnId: Schema.String })
/** One of a turn's SDK messages, as the session made it. @category Events */
export const TurnMessage = Schema.TaggedStruct("Message", { turnId: Schema.String, message: SdkMessageSchema })
/** A turn ended (after its `result`, or stopped by the session closing). @category Events */
export const Ended = Schema.TaggedStruct("Ended", { turnId: Schema.String })
/** A queued turn will not run (`session.events` only; `turn.start` fails with `TurnCancelled`). @category Events */
export const Cancelled = Schema.TaggedStruct("Cancelled", {
  turnId: Schema.String,
  reason: Schema.Literal("removed", "cleared", "closed")
})

/**
 * An action opened, answered or cancelled: `turnId` is the turn it pauses (`null` for one restored
 * from a transcript before its turn asks again).
 *
 * @category Events
 */
export const ActionEvent = Schema.TaggedStruct("Action", { turnId: Schema.NullOr(Schema.String), event: Action.Event })

/** What the streaming operations send. @category Events */
export const RuntimeEvent = Schema.Union(Admitted, Started, TurnMessage, ActionEvent, Ended, Cancelled)
/** @category Events */
export type RuntimeEvent = typeof RuntimeEvent.Type

const session = { sessionId: Schema.String }
const turn = { sessionId: Schema.String, turnId: Schema.String }
/** What a turn's input may be: a prompt (slash commands and `@path` mentions work) or a user message as given. */
const Prompt = Schema.Union(Schema.String, Message.UserMessage)

// ---------------------------------------------------------------------------------------------
// The group
// ---------------------------------------------------------------------------------------------

/**
 * The runtime's operations. Sessions: `session.start`, `session.list`, `session.read`,
 * `session.events` (stream), `session.compact` (stream), `session.export`, `session.close`.
 * Turns: `turn.start` (stream), `turn.cancel`. The queue: `queue.list`, `queue.remove`,
 * `queue.promote`, `queue.clear`. Actions: `action.list`, `action.respond`. The goal: `goal.set`,
 * `goal.pause`, `goal.clear`.
 *
 * @category Groups
 */
export class RuntimeRpcs extends RpcGroup.make(
  Rpc.make("session.start", {
    payload: StartOptions,
    success: SessionStarted,
    error: errors(SessionStartFailed, SessionAlreadyOpen)
  }),
  Rpc.make("session.list", { payload: {}, success: Schema.Array(SessionSummary), error: errors() }),
  Rpc.make("session.read", { payload: session, success: SessionSnapshot, error: errors(SessionNotFound) }),
  /** Every turn of the session from now on, as it runs; ends when the session closes. */
  Rpc.make("session.events", { payload: session, success: RuntimeEvent, error: errors(SessionNotFound), stream: true }),
  /** `/compact [instructions]` as a turn of its own (it waits its turn like any other). */
  Rpc.make("session.compact", {
    payload: { ...session, instructions: Schema.optional(Schema.String), priority: Schema.optional(Priority) },
    success: RuntimeEvent,
    error: errors(SessionNotFound, QueueFull, TurnCancelled, TurnFailed),
    stream: true
  }),
  /** The session's export (`keel export`'s bytes): `handoff` (Markdown, or JSON with `json`), `replay`, `review`. */
  Rpc.make("session.export", {
    payload: { ...session, format: Export.Format, json: Schema.optional(Schema.Boolean) },
    success: Schema.Struct({ mediaType: Schema.Literal("application/json", "text/markdown"), text: Schema.String }),
    error: errors(SessionNotFound, TranscriptUnavailable)
  }),
  /** Stops the running turn, cancels what waits, closes the session's MCP servers. */
  Rpc.make("session.close", { payload: session, error: errors(SessionNotFound) }),
  Rpc.make("turn.start", {
    payload: { ...session, prompt: Prompt, priority: Schema.optional(Priority) },
    success: RuntimeEvent,
    error: errors(SessionNotFound, QueueFull, TurnCancelled, TurnFailed),
    stream: true
  }),
  /** Removes a queued turn, or interrupts the running one (it ends with its `result`). */
  Rpc.make("turn.cancel", {
    payload: turn,
    success: Schema.Struct({ outcome: Schema.Literal("removed", "interrupted") }),
    error: errors(SessionNotFound, TurnNotFound)
  }),
  Rpc.make("queue.list", { payload: session, success: QueueState, error: errors(SessionNotFound) }),
  Rpc.make("queue.remove", { payload: turn, error: errors(SessionNotFound, TurnNotFound) }),
  Rpc.make("queue.promote", { payload: turn, error: errors(SessionNotFound, TurnNotFound) }),
  Rpc.make("queue.clear", {
    payload: session,
    success: Schema.Struct({ removed: Schema.Array(QueuedTurn) }),
    error: errors(SessionNotFound)
  }),
  Rpc.make("action.list", { payload: session, success: Schema.Array(Action.Pending), error: errors(SessionNotFound) }),
  /** Answers a pending action: a permission (`allow`/`deny`) or an elicitation (`accept`/`decline`/`cancel`). */
  Rpc.make("action.respond", {
    payload: { ...session, actionId: Schema.String, answer: Action.Answer },
    error: errors(SessionNotFound, ActionNotFound, InvalidAnswer)
  }),
  /** Sets the session's goal (replacing any): while it is active, the idle runtime admits turns that work on it. */
  Rpc.make("goal.set", {
    payload: {
      ...session,
      objective: Schema.String,
      maxContinuations: Schema.optional(Schema.Int),
      maxBudgetUsd: Schema.optional(Schema.Number)
    },
    success: Goal.Goal,
    error: errors(SessionNotFound)
  }),
  /** Pauses (`paused: true`) or resumes the goal's continuations; `changed` is false when there is no goal. */
  Rpc.make("goal.pause", {
    payload: { ...session, paused: Schema.Boolean },
    success: Schema.Struct({ changed: Schema.Boolean }),
    error: errors(SessionNotFound)
  }),
  Rpc.make("goal.clear", {
    payload: session,
    success: Schema.Struct({ cleared: Schema.Boolean }),
    error: errors(SessionNotFound)
  })
) {}
