/**
 * The permission decision of a recorded tool call, from the facts the transcript holds: the
 * pending action that asked about it and its answer (`action` entries), the result it got (a
 * denial is an error result saying "Permission to use X was denied: why"), and the tool policy of
 * its turn's envelope (the mode and the rules in force), against which an allowed call is matched
 * to say what allowed it. Nothing is asked of the live policy: a rule changed since does not change
 * what an export says about an old call.
 *
 * What the transcript does not record is said as such: a call an embedder's `canUseTool` callback
 * answered without a pending action, or one allowed because it was read-only inside the workspace,
 * is "allowed by default" with that explanation.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { TextBlock, type ToolResultBlock } from "../message/Message.js"
import * as PermissionRule from "../permission/PermissionRule.js"
import { EDIT_TOOLS } from "../permission/Permissions.js"
import type * as Action from "../action/Action.js"
import type * as TurnEnvelope from "../session/TurnEnvelope.js"

/**
 * What was decided: `allowed` (the call ran), `denied`, `cancelled` (its question was withdrawn),
 * `pending` (its question waits for an answer), `stopped` (interrupted or cancelled before it
 * finished; whether it had passed its check is not recorded), `not_checked` (an unknown tool or an
 * invalid input never reaches the check), `unknown` (no result recorded).
 *
 * @category Schemas
 */
export const Outcome = Schema.Literal("allowed", "denied", "cancelled", "pending", "stopped", "not_checked", "unknown")

/**
 * Who or what decided: a `rule` of the policy, the permission `mode`, the `default` of the policy
 * (no rule named the call), the `user` (or the host) answering a question, the `policy` denying
 * (a deny rule, the mode, the workspace), the `input` (never checked), or `unrecorded`.
 *
 * @category Schemas
 */
export const By = Schema.Literal("rule", "mode", "default", "user", "policy", "input", "unrecorded")

/** A call's permission decision. @category Schemas */
export const Decision = Schema.Struct({
  outcome: Outcome,
  by: By,
  /** One sentence for people. */
  detail: Schema.String,
  /** The rule that decided, formatted as in settings (`Bash(npm test:*)`). */
  rule: Schema.optional(Schema.String),
  /** The permission mode in force, when the mode decided. */
  mode: Schema.optional(Schema.String),
  /** The pending action that asked, and why it asked. */
  actionId: Schema.optional(Schema.String),
  askedBecause: Schema.optional(Schema.String),
  /** The denial's message, as the model read it. */
  message: Schema.optional(Schema.String),
  /** The input the answer replaced the call's with (an allow with `updatedInput`). */
  updatedInput: Schema.optional(Schema.Unknown)
})

/** @category Models */
export type Decision = typeof Decision.Type

/** A permission question about one call and what became of it. @category Models */
export interface Asked {
  readonly action: Action.Pending
  readonly reason: string
  readonly end:
    | { readonly _tag: "Answered"; readonly answer: Action.Answer }
    | { readonly _tag: "Cancelled"; readonly reason: string }
    | undefined
}

/** The permission questions of a session's actions, by the `tool_use` id they ask about. @category Constructors */
export const askedByCall = (events: ReadonlyArray<Action.Event>): ReadonlyMap<string, Asked> => {
  const byId = new Map<string, { toolUseId: string; asked: Asked }>()
  for (const e of events) {
    if (e.event === "opened") {
      if (e.action.request.kind !== "permission") continue
      byId.set(e.action.id, {
        toolUseId: e.action.request.toolUseId,
        asked: { action: e.action, reason: e.action.request.reason, end: undefined }
      })
      continue
    }
    const open = byId.get(e.id)
    if (open === undefined) continue
    open.asked = {
      ...open.asked,
      end: e.event === "resolved" ? { _tag: "Answered", answer: e.answer } : { _tag: "Cancelled", reason: e.reason }
    }
  }
  return new Map([...byId.values()].map(({ asked, toolUseId }) => [toolUseId, asked]))
}

/** The text a tool result carries (text blocks joined; other blocks named). @category Accessors */
export const resultText = (result: ToolResultBlock): string =>
  result.content === undefined
    ? ""
    : typeof result.content === "string"
    ? result.content
    : result.content.map((b) => (b instanceof TextBlock ? b.text : `[${b.type}]`)).join("\n")

/** An error result's message without Claude Code's `<tool_use_error>` wrapper. */
const unwrap = (text: string): string => text.replace(/^<tool_use_error>|<\/tool_use_error>$/g, "")

const DENIED = /^Permission to use \S+ was denied: ([\s\S]*?)\.?$/
const DENYING_RULE = /^the rule (.+) denies it$/
const STOPPED = [/^Interrupted by user$/, /^Cancelled: parallel tool call /, /the turn ended before this tool call ran to completion\.$/]
const NOT_CHECKED = [/^InputValidationError: /, /^Error: No such tool/]

const fromQuestion = (asked: Asked): Decision => {
  const base = { by: "user" as const, actionId: asked.action.id, askedBecause: asked.reason }
  const end = asked.end
  if (end === undefined) return { ...base, outcome: "pending", detail: `asked (${asked.reason}); no answer yet` }
  if (end._tag === "Cancelled") {
    return { ...base, outcome: "cancelled", detail: `asked (${asked.reason}); the question was withdrawn: ${end.reason}` }
  }
  const answer = end.answer
  if ("behavior" in answer && answer.behavior === "allow") {
    return {
      ...base,
      outcome: "allowed",
      detail: `asked (${asked.reason}) and allowed`,
      ...(answer.updatedInput !== undefined ? { updatedInput: answer.updatedInput } : {})
    }
  }
  const message = "message" in answer && typeof answer.message === "string" ? answer.message : "denied"
  return { ...base, outcome: "denied", detail: `asked (${asked.reason}) and denied: ${message}`, message }
}

/** What allowed a call that ran, matched against its turn's recorded policy. */
const allowedBy = (
  call: { readonly name: string; readonly input: unknown },
  policy: typeof TurnEnvelope.ToolPolicy.Type,
  cwd: string
): Decision => {
  const mode = policy.permissionMode
  if (mode === "bypassPermissions") {
    return { outcome: "allowed", by: "mode", mode, detail: "allowed by the mode bypassPermissions (no checks)" }
  }
  const rules = (texts: ReadonlyArray<string>) => texts.flatMap((t) => PermissionRule.parse(t) ?? [])
  const asks = rules(policy.ask).find((r) => PermissionRule.matches(r, call.name, call.input, cwd))
  if (asks !== undefined) {
    const rule = PermissionRule.format(asks)
    return { outcome: "allowed", by: "user", rule, detail: `the rule ${rule} asks first; the host allowed it (its answer is not recorded)` }
  }
  const allows = PermissionRule.allows(rules(policy.allow), call.name, call.input, cwd)
  if (allows !== undefined) {
    const rule = PermissionRule.format(allows)
    return { outcome: "allowed", by: "rule", rule, detail: `allowed by the rule ${rule}` }
  }
  if (mode === "acceptEdits" && EDIT_TOOLS.has(call.name)) {
    return { outcome: "allowed", by: "mode", mode, detail: "allowed by the mode acceptEdits (file edits)" }
  }
  return {
    outcome: "allowed",
    by: "default",
    mode,
    detail: `no rule named it (mode ${mode}): allowed by default (a read-only or session tool inside the workspace), ` +
      "or by the host's canUseTool, whose answer the transcript does not record"
  }
}

/**
 * The decision about a call (`name`, `input`), given its result (if recorded), the question asked
 * about it (if any), and its turn's tool policy (if an envelope recorded one) and working directory.
 *
 * @category Constructors
 */
export const decide = (
  call: { readonly name: string; readonly input: unknown },
  facts: {
    readonly result: ToolResultBlock | undefined
    readonly asked: Asked | undefined
    readonly policy: typeof TurnEnvelope.ToolPolicy.Type | undefined
    readonly cwd: string
  }
): Decision => {
  if (facts.asked !== undefined) return fromQuestion(facts.asked)
  const result = facts.result
  if (result === undefined) {
    return { outcome: "unknown", by: "unrecorded", detail: "no result was recorded (the process stopped while the call ran)" }
  }
  if (result.is_error === true) {
    const text = unwrap(resultText(result))
    const denied = DENIED.exec(text)
    if (denied !== null) {
      const rule = DENYING_RULE.exec(denied[1]!)?.[1]
      return {
        outcome: "denied",
        by: "policy",
        detail: `denied: ${denied[1]}`,
        message: text,
        ...(rule !== undefined ? { rule } : {}),
        ...(facts.policy !== undefined ? { mode: facts.policy.permissionMode } : {})
      }
    }
    if (text.startsWith("The permission callback changed the input")) {
      return { outcome: "denied", by: "user", detail: text, message: text }
    }
    if (STOPPED.some((r) => r.test(text))) {
      return { outcome: "stopped", by: "unrecorded", detail: `stopped before it finished: ${text}` }
    }
    if (NOT_CHECKED.some((r) => r.test(text))) {
      return { outcome: "not_checked", by: "input", detail: "never checked: the tool is unknown or its input is invalid" }
    }
  }
  if (facts.policy === undefined) {
    return { outcome: "allowed", by: "unrecorded", detail: "it ran; its turn has no envelope, so the policy in force is not recorded" }
  }
  return allowedBy(call, facts.policy, facts.cwd)
}
