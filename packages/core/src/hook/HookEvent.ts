/**
 * Hook events and their inputs, in Claude Code's names and shapes (the Agent SDK's `HookInput`):
 * every input carries `session_id`, `transcript_path`, `cwd`, `hook_event_name` (and
 * `permission_mode` where Claude Code sends it), then the event's own fields. Keel fires the
 * events of {@link EVENTS}; Claude Code's other events are known by name ({@link CLAUDE_CODE_EVENTS})
 * so a configuration naming one is refused by name, never silently ignored.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** The events Keel fires. @category Constants */
export const EVENTS = [
  "PreToolUse",
  "PostToolUse",
  "Notification",
  "UserPromptSubmit",
  "SessionStart",
  "SessionEnd",
  "Stop",
  "SubagentStop",
  "PreCompact"
] as const

/** An event Keel fires. @category Models */
export type HookEvent = typeof EVENTS[number]

/** Claude Code's events that Keel does not fire (yet): a hook for one is refused. @category Constants */
export const CLAUDE_CODE_EVENTS: ReadonlyArray<string> = [
  "PostToolUseFailure",
  "PostToolBatch",
  "UserPromptExpansion",
  "StopFailure",
  "SubagentStart",
  "PostCompact",
  "PreModelSwitch",
  "PostModelSwitch",
  "PermissionRequest",
  "PermissionDenied",
  "Setup",
  "TeammateIdle",
  "TaskCreated",
  "TaskCompleted",
  "Elicitation",
  "ElicitationResult",
  "ConfigChange",
  "WorktreeCreate",
  "WorktreeRemove",
  "InstructionsLoaded",
  "CwdChanged",
  "FileChanged",
  "DirectoryAdded",
  "MessageDisplay",
  "PreSkillShellCommand"
]

/** Whether `name` is an event Keel fires. @category Guards */
export const isEvent = (name: string): name is HookEvent => (EVENTS as ReadonlyArray<string>).includes(name)

/** The fields every input carries. @category Schemas */
export const Base = Schema.Struct({
  session_id: Schema.String,
  transcript_path: Schema.String,
  cwd: Schema.String,
  permission_mode: Schema.optional(Schema.String),
  /** Set in a subagent's calls: its id and type. */
  agent_id: Schema.optional(Schema.String),
  agent_type: Schema.optional(Schema.String)
})

const event = <E extends HookEvent, F extends Schema.Struct.Fields>(name: E, fields: F) =>
  Schema.Struct({ ...Base.fields, hook_event_name: Schema.Literal(name), ...fields })

/** Before a tool call's permission check. @category Schemas */
export const PreToolUse = event("PreToolUse", {
  tool_name: Schema.String,
  tool_input: Schema.Unknown,
  tool_use_id: Schema.String
})

/** After a tool call that succeeded; `tool_response` is what the tool returned. @category Schemas */
export const PostToolUse = event("PostToolUse", {
  tool_name: Schema.String,
  tool_input: Schema.Unknown,
  tool_response: Schema.Unknown,
  tool_use_id: Schema.String,
  duration_ms: Schema.optional(Schema.Number)
})

/** A notice for the user (a permission ask waiting on them). @category Schemas */
export const Notification = event("Notification", {
  message: Schema.String,
  title: Schema.optional(Schema.String),
  notification_type: Schema.String
})

/** A prompt about to go to the model. @category Schemas */
export const UserPromptSubmit = event("UserPromptSubmit", { prompt: Schema.String })

/** A session starts (its first turn). @category Schemas */
export const SessionStart = event("SessionStart", {
  source: Schema.Literal("startup", "resume", "clear", "compact", "fork")
})

/** A session ends. @category Schemas */
export const SessionEnd = event("SessionEnd", {
  reason: Schema.Literal("clear", "resume", "logout", "prompt_input_exit", "other")
})

/** The model ended its turn; `stop_hook_active` is true when a Stop hook made it go on already. @category Schemas */
export const Stop = event("Stop", {
  stop_hook_active: Schema.Boolean,
  last_assistant_message: Schema.optional(Schema.String)
})

/** A subagent (the Task tool's) ended its turn. @category Schemas */
export const SubagentStop = event("SubagentStop", {
  stop_hook_active: Schema.Boolean,
  agent_id: Schema.String,
  agent_type: Schema.String,
  last_assistant_message: Schema.optional(Schema.String)
})

/** A compaction is about to run. @category Schemas */
export const PreCompact = event("PreCompact", {
  trigger: Schema.Literal("manual", "auto"),
  custom_instructions: Schema.NullOr(Schema.String)
})

/** Any input Keel sends. @category Schemas */
export const HookInput = Schema.Union(
  PreToolUse,
  PostToolUse,
  Notification,
  UserPromptSubmit,
  SessionStart,
  SessionEnd,
  Stop,
  SubagentStop,
  PreCompact
)

/** Any input Keel sends. @category Models */
export type HookInput = typeof HookInput.Type

/** An input before the hooks service fills `transcript_path` in. @category Models */
export type Fired = HookInput extends infer I ? I extends HookInput ? Omit<I, "transcript_path"> : never : never

/**
 * What a matcher is compared with for `input`: the tool's name for tool events, the source, reason,
 * trigger or notification type for the others that have one; `undefined` when the event has no
 * matcher (every hook of it runs).
 *
 * @category Matching
 */
export const matchQuery = (input: Fired): string | undefined => {
  switch (input.hook_event_name) {
    case "PreToolUse":
    case "PostToolUse":
      return input.tool_name
    case "SessionStart":
      return input.source
    case "SessionEnd":
      return input.reason
    case "PreCompact":
      return input.trigger
    case "Notification":
      return input.notification_type
    default:
      return undefined
  }
}

/** The name hook lifecycle messages give a hook run for `input` (`PreToolUse:Bash`, `SessionStart:startup`, `Stop`). @category Matching */
export const hookName = (input: Fired): string => {
  const query = matchQuery(input)
  return query === undefined || input.hook_event_name === "Notification" || input.hook_event_name === "SessionEnd"
    ? input.hook_event_name
    : `${input.hook_event_name}:${query}`
}
