/**
 * The hooks around a tool call, where Claude Code fires them. `PreToolUse` runs before the
 * permission check: `deny` (or exit code 2) answers the call with the reason as an error result,
 * `ask` makes the policy ask even where it would allow, `allow` skips the ask (deny rules still
 * apply), and `updatedInput` replaces the input, validated against the tool's schema again.
 * `Notification` fires when the call is about to ask the user. `PostToolUse` runs after a call that
 * succeeded: its additional context and its block reason go to the model with the result. What
 * the hooks say for the user (system messages, failures) is logged as a warning.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { TextBlock, ToolResultBlock } from "../message/Message.js"
import * as Permissions from "../permission/Permissions.js"
import { SessionState } from "../session/SessionState.js"
import type { ToolOutput } from "../tool/Tool.js"
import { Hooks, contextText } from "./Hooks.js"
import type * as HookOutcome from "./HookOutcome.js"

/** The call being checked. @category Models */
export interface Call {
  readonly toolName: string
  /** The input as the model sent it. */
  readonly input: unknown
  readonly toolUseId: string
  readonly cwd: string
}

/** What PreToolUse decided. @category Models */
export type Pre =
  | { readonly _tag: "Denied"; readonly message: string }
  | {
    readonly _tag: "Go"
    /** The input to run with, when a hook replaced it (not yet validated). */
    readonly updatedInput: Readonly<Record<string, unknown>> | undefined
    /** The hooks' permission decision, if any. */
    readonly decision: "allow" | "ask" | undefined
    readonly reason: string | undefined
    /** For the model, with the call's result. */
    readonly context: ReadonlyArray<string>
  }

const GO: Pre = { _tag: "Go", updatedInput: undefined, decision: undefined, reason: undefined, context: [] }

/** Logs what the hooks said for the user. @category Reporting */
export const report = (outcome: HookOutcome.Outcome): Effect.Effect<void> =>
  Effect.forEach(outcome.notices, (notice) => Effect.logWarning(notice), { discard: true })

/**
 * Runs the PreToolUse hooks of a call.
 *
 * @category Running
 */
export const preToolUse = (call: Call): Effect.Effect<Pre, never, Hooks | SessionState | Permissions.Permissions> =>
  Effect.gen(function*() {
    const hooks = yield* Hooks
    if (!hooks.events.has("PreToolUse")) return GO
    const state = yield* SessionState
    const permissions = yield* Permissions.Permissions
    const outcome = yield* hooks.run({
      hook_event_name: "PreToolUse",
      session_id: state.sessionId,
      cwd: call.cwd,
      permission_mode: permissions.config.mode,
      tool_name: call.toolName,
      tool_input: call.input,
      tool_use_id: call.toolUseId
    }, { toolUseId: call.toolUseId })
    yield* report(outcome)
    const permission = outcome.permission
    if (permission?.decision === "deny") {
      return {
        _tag: "Denied",
        message: `A PreToolUse hook denied this ${call.toolName} call: ${permission.reason ?? "no reason given"}`
      }
    }
    if (outcome.stopped !== undefined) {
      return { _tag: "Denied", message: `A PreToolUse hook stopped this ${call.toolName} call: ${outcome.stopped}` }
    }
    return {
      _tag: "Go",
      updatedInput: outcome.updatedInput,
      decision: permission?.decision,
      reason: permission?.reason,
      context: outcome.context
    }
  })

/**
 * The permission check under the hooks' decision: `ask` asks even where the policy allows,
 * `allow` skips the ask (a call the policy denies is still denied, and a tool that exists to ask
 * the user still asks), none leaves the policy alone. Fires `Notification` when the call asks.
 *
 * @category Running
 */
export const check = <R>(
  policy: Permissions.Service,
  checked: (request: Permissions.Request) => Effect.Effect<Permissions.Decision, never, R>,
  request: Permissions.Request,
  pre: Extract<Pre, { _tag: "Go" }>
): Effect.Effect<Permissions.Decision, never, R | Hooks | SessionState> =>
  Effect.gen(function*() {
    // Without a hook decision or a Notification hook, the policy alone (no second look at the rules).
    if (pre.decision === undefined && !(yield* Hooks).events.has("Notification")) return yield* checked(request)
    const decided = Permissions.decide(policy.config, request)
    if (pre.decision === "allow" && decided._tag === "Ask" && !Permissions.USER_INTERACTION_TOOLS.has(request.toolName)) {
      return { _tag: "Allow" } as const
    }
    const asked = pre.decision === "ask"
      ? { ...request, forceAsk: pre.reason ?? "a PreToolUse hook asks for confirmation" }
      : request
    if (decided._tag === "Ask" || (pre.decision === "ask" && decided._tag === "Allow")) yield* notifyAsk(request)
    return yield* checked(asked)
  })

/** `Notification` for a call that asks (forked: the ask does not wait for the hook). */
const notifyAsk = (request: Permissions.Request): Effect.Effect<void, never, Hooks | SessionState> =>
  Effect.gen(function*() {
    const hooks = yield* Hooks
    if (!hooks.events.has("Notification")) return
    const state = yield* SessionState
    yield* Effect.forkDaemon(Effect.flatMap(
      hooks.run({
        hook_event_name: "Notification",
        session_id: state.sessionId,
        cwd: request.cwd,
        message: `Keel needs your permission to use ${request.toolName}`,
        notification_type: "permission_prompt"
      }),
      report
    ))
  })

/** `result` with the hooks' context for the model after its content. @category Rendering */
export const withContext = (result: ToolResultBlock, event: "PreToolUse" | "PostToolUse", context: ReadonlyArray<string>) => {
  if (context.length === 0) return result
  const text = contextText(event, context)
  const content = result.content
  return new ToolResultBlock({
    ...result,
    content: typeof content === "string" ? `${content}\n\n${text}` : [...(content ?? []), new TextBlock({ text })]
  })
}

/**
 * Runs the PostToolUse hooks of a call that succeeded (`startedAt` in `Clock` ms): what they say
 * for the model (additional context, a block's reason).
 *
 * @category Running
 */
export const postToolUse = (
  call: Call & { readonly output: ToolOutput; readonly startedAt: number }
): Effect.Effect<ReadonlyArray<string>, never, Hooks | SessionState | Permissions.Permissions> =>
  Effect.gen(function*() {
    const hooks = yield* Hooks
    if (!hooks.events.has("PostToolUse")) return []
    const state = yield* SessionState
    const permissions = yield* Permissions.Permissions
    const outcome = yield* hooks.run({
      hook_event_name: "PostToolUse",
      session_id: state.sessionId,
      cwd: call.cwd,
      permission_mode: permissions.config.mode,
      tool_name: call.toolName,
      tool_input: call.input,
      tool_response: call.output,
      tool_use_id: call.toolUseId,
      duration_ms: (yield* Clock.currentTimeMillis) - call.startedAt
    }, { toolUseId: call.toolUseId })
    yield* report(outcome)
    return [
      ...(outcome.blocked === undefined ? [] : [`A PostToolUse hook blocked after this call: ${outcome.blocked}`]),
      ...(outcome.stopped === undefined ? [] : [`A PostToolUse hook asked to stop: ${outcome.stopped}`]),
      ...outcome.context
    ]
  })
