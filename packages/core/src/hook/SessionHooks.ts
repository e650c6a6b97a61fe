/**
 * The hooks of a session's turns, where Claude Code fires them: `SessionStart` before a session's
 * first turn (its context joins that turn's prompt), `UserPromptSubmit` before a prompt goes to the
 * model (a block drops the prompt, its reason shown to the user only; context joins the prompt),
 * `Stop` / `SubagentStop` when the model ends its turn (a block makes the loop go on with the
 * reason as a user message, `stop_hook_active` true on the re-entry, at most
 * {@link MAX_STOP_CONTINUATIONS} times a turn), `SessionEnd` when the session closes, and
 * `PreCompact` before a compaction.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type { AssistantMessage } from "../message/Message.js"
import type { HookEvent } from "./HookEvent.js"
import { contextText, type Service } from "./Hooks.js"
import { report } from "./ToolHooks.js"

/** The most times Stop hooks can make one turn go on (then the turn ends, and a warning says so). @category Constants */
export const MAX_STOP_CONTINUATIONS = 5

/** Where a session's hooks fire. @category Models */
export interface Where {
  readonly sessionId: string
  readonly cwd: string
  readonly permissionMode?: string | undefined
}

const base = (where: Where) => ({
  session_id: where.sessionId,
  cwd: where.cwd,
  ...(where.permissionMode === undefined ? {} : { permission_mode: where.permissionMode })
})

/**
 * `SessionStart` (`source`: startup, resume...): the context its hooks give the model (as prompt
 * text, empty when none).
 *
 * @category Running
 */
export const sessionStart = (
  hooks: Service,
  where: Where,
  source: "startup" | "resume" | "clear" | "compact" | "fork"
): Effect.Effect<string> =>
  !hooks.events.has("SessionStart")
    ? Effect.succeed("")
    : Effect.flatMap(
      hooks.run({ hook_event_name: "SessionStart", session_id: where.sessionId, cwd: where.cwd, source }),
      (outcome) => Effect.as(report(outcome), contextText("SessionStart", outcome.context))
    )

/** What UserPromptSubmit decided. @category Models */
export type PromptDecision =
  | { readonly _tag: "Blocked"; readonly reason: string }
  | { readonly _tag: "Go"; readonly context: string }

/**
 * `UserPromptSubmit` for `prompt`: blocked (with the reason for the user), or go with the context
 * its hooks give the model (as prompt text, empty when none).
 *
 * @category Running
 */
export const userPromptSubmit = (hooks: Service, where: Where, prompt: string): Effect.Effect<PromptDecision> =>
  !hooks.events.has("UserPromptSubmit")
    ? Effect.succeed({ _tag: "Go", context: "" })
    : Effect.gen(function*() {
      const outcome = yield* hooks.run({ hook_event_name: "UserPromptSubmit", ...base(where), prompt })
      yield* report(outcome)
      const reason = outcome.blocked ?? outcome.stopped
      return reason !== undefined
        ? { _tag: "Blocked", reason }
        : { _tag: "Go", context: contextText("UserPromptSubmit", outcome.context) }
    })

/** The subagent a SubagentStop check is for. @category Models */
export interface Agent {
  readonly id: string
  readonly type: string
}

/**
 * A turn's stop check (the turn loop's `onStop`): runs the `Stop` hooks (`SubagentStop` with
 * `agent`) when the model ends its turn, and answers the user message the turn goes on with when
 * they block, `undefined` when it ends. One check per turn: it counts its continuations, and says
 * `stop_hook_active` after the first.
 *
 * @category Constructors
 */
export const stopCheck = (
  hooks: Service,
  where: Where,
  agent?: Agent | undefined
): ((last: AssistantMessage) => Effect.Effect<string | undefined>) | undefined => {
  const event: HookEvent = agent === undefined ? "Stop" : "SubagentStop"
  if (!hooks.events.has(event)) return undefined
  let continued = 0
  return (last) =>
    Effect.gen(function*() {
      const common = { ...base(where), stop_hook_active: continued > 0, last_assistant_message: last.text }
      const outcome = yield* hooks.run(
        agent === undefined
          ? { hook_event_name: "Stop", ...common }
          : { hook_event_name: "SubagentStop", ...common, agent_id: agent.id, agent_type: agent.type }
      )
      yield* report(outcome)
      if (outcome.blocked === undefined || outcome.stopped !== undefined) return undefined
      if (continued >= MAX_STOP_CONTINUATIONS) {
        yield* Effect.logWarning(
          `${event} hooks blocked the end of the turn ${continued + 1} times; it ends (at most ${MAX_STOP_CONTINUATIONS} continuations)`
        )
        return undefined
      }
      continued++
      return `The ${event} hook did not let the turn end:\n${outcome.blocked}`
    })
}

/** `SessionEnd` (`reason`); what its hooks say is only reported. @category Running */
export const sessionEnd = (
  hooks: Service,
  where: Where,
  reason: "clear" | "resume" | "logout" | "prompt_input_exit" | "other"
): Effect.Effect<void> =>
  !hooks.events.has("SessionEnd")
    ? Effect.void
    : Effect.flatMap(hooks.run({ hook_event_name: "SessionEnd", session_id: where.sessionId, cwd: where.cwd, reason }), report)

/** `PreCompact` (`trigger`, the user's instructions for a manual one); what its hooks say is only reported. @category Running */
export const preCompact = (
  hooks: Service,
  where: Where,
  trigger: "manual" | "auto",
  instructions: string | undefined
): Effect.Effect<void> =>
  !hooks.events.has("PreCompact")
    ? Effect.void
    : Effect.flatMap(
      hooks.run({
        hook_event_name: "PreCompact",
        session_id: where.sessionId,
        cwd: where.cwd,
        trigger,
        custom_instructions: instructions ?? null
      }),
      report
    )
