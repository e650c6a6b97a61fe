/**
 * The outcome of every hook an event ran, merged as Claude Code merges them: deny beats ask beats
 * allow, any block blocks (the reasons joined), `continue: false` stops, additional context is
 * concatenated in hook order, and what is meant for the user (system messages, the reports of
 * hooks that failed) is collected.
 *
 * @since 0.1.0
 */
import type { HookEvent } from "./HookEvent.js"
import type { Result } from "./HookOutput.js"

/** A PreToolUse hook's permission decision. @category Models */
export type PermissionDecision = "allow" | "ask" | "deny"

/** The merged outcome of an event's hooks. @category Models */
export interface Outcome {
  /** PreToolUse: the strongest decision of its hooks (deny, then ask, then allow) and why. */
  readonly permission: { readonly decision: PermissionDecision; readonly reason: string | undefined } | undefined
  /** PreToolUse: the input the call runs with instead (the last hook's that gave one). */
  readonly updatedInput: Readonly<Record<string, unknown>> | undefined
  /** A block (exit code 2, `decision: "block"`): the reasons, joined. */
  readonly blocked: string | undefined
  /** `continue: false`: why (its `stopReason`). */
  readonly stopped: string | undefined
  /** For the model: `additionalContext`, and the plain stdout of UserPromptSubmit and SessionStart hooks. */
  readonly context: ReadonlyArray<string>
  /** For the user: `systemMessage`s, and what went wrong with hooks that failed (never blocking). */
  readonly notices: ReadonlyArray<string>
}

/** Nothing ran, or nothing was decided. @category Constructors */
export const empty: Outcome = {
  permission: undefined,
  updatedInput: undefined,
  blocked: undefined,
  stopped: undefined,
  context: [],
  notices: []
}

const RANK: Record<PermissionDecision, number> = { allow: 0, ask: 1, deny: 2 }

/** The events whose hooks' plain stdout is context for the model. */
const STDOUT_IS_CONTEXT: ReadonlySet<HookEvent> = new Set(["UserPromptSubmit", "SessionStart"])

/** The events whose blocks go to the model or the loop (for the others a block is only shown to the user). */
const CAN_BLOCK: ReadonlySet<HookEvent> = new Set(["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop"])

/**
 * Merges the results of `event`'s hooks (in the order they are configured).
 *
 * @category Merging
 */
export const merge = (event: HookEvent, results: ReadonlyArray<Result>): Outcome => {
  let permission: Outcome["permission"]
  let updatedInput: Outcome["updatedInput"]
  const blocks: Array<string> = []
  const stops: Array<string> = []
  const context: Array<string> = []
  const notices: Array<string> = []
  const decide = (decision: PermissionDecision, reason: string | undefined) => {
    if (permission === undefined || RANK[decision] > RANK[permission.decision]) permission = { decision, reason }
    else if (RANK[decision] === RANK[permission.decision] && reason !== undefined) {
      permission = { decision, reason: permission.reason === undefined ? reason : `${permission.reason}\n${reason}` }
    }
  }
  const block = (reason: string) => {
    if (event === "PreToolUse") decide("deny", reason)
    else if (CAN_BLOCK.has(event)) blocks.push(reason)
    else notices.push(reason)
  }
  for (const result of results) {
    switch (result._tag) {
      case "NonBlocking":
        notices.push(result.message)
        break
      case "Blocking":
        block(result.reason)
        break
      case "Success": {
        const { output, text } = result
        if (text !== "" && STDOUT_IS_CONTEXT.has(event)) context.push(text)
        if (output === undefined) break
        if (output.systemMessage !== undefined) notices.push(output.systemMessage)
        if (output.continue === false) stops.push(output.stopReason ?? `a ${event} hook stopped the session`)
        if (output.decision === "block") block(output.reason ?? `a ${event} hook blocked it`)
        if (output.decision === "approve" && event === "PreToolUse") decide("allow", output.reason)
        const specific = output.hookSpecificOutput
        if (specific === undefined || specific.hookEventName !== event) break
        if (specific.hookEventName === "PreToolUse") {
          if (specific.permissionDecision !== undefined) decide(specific.permissionDecision, specific.permissionDecisionReason)
          if (specific.updatedInput !== undefined) updatedInput = specific.updatedInput
        }
        if (specific.additionalContext !== undefined && specific.additionalContext !== "") context.push(specific.additionalContext)
        break
      }
    }
  }
  return {
    permission,
    updatedInput,
    blocked: blocks.length === 0 ? undefined : blocks.join("\n"),
    stopped: stops.length === 0 ? undefined : stops.join("\n"),
    context,
    notices
  }
}
