/**
 * What a hook answers, in Claude Code's shapes: the sync JSON output (`continue`, `stopReason`,
 * `suppressOutput`, `decision`, `reason`, `systemMessage`, `hookSpecificOutput` per event), and how
 * one run's raw result (a command's exit code and output, a callback's answer) reads as a
 * {@link Result}: exit 0 succeeds (stdout read as JSON output when it is JSON, plain text
 * otherwise), exit 2 is a blocking error whose stderr is the reason, any other code a non-blocking
 * error that is reported.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

const Decision = Schema.Literal("allow", "deny", "ask")

/** `hookSpecificOutput`: the fields each event reads. @category Schemas */
export const HookSpecificOutput = Schema.Union(
  Schema.Struct({
    hookEventName: Schema.Literal("PreToolUse"),
    permissionDecision: Schema.optional(Decision),
    permissionDecisionReason: Schema.optional(Schema.String),
    updatedInput: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
    additionalContext: Schema.optional(Schema.String)
  }),
  Schema.Struct({
    hookEventName: Schema.Literal("PostToolUse", "UserPromptSubmit", "SessionStart", "Stop", "SubagentStop", "Notification"),
    additionalContext: Schema.optional(Schema.String)
  })
)

/** The sync JSON output of a hook (the Agent SDK's `SyncHookJSONOutput`, the fields Keel acts on). @category Schemas */
export const SyncOutput = Schema.Struct({
  continue: Schema.optional(Schema.Boolean),
  suppressOutput: Schema.optional(Schema.Boolean),
  stopReason: Schema.optional(Schema.String),
  decision: Schema.optional(Schema.Literal("approve", "block")),
  systemMessage: Schema.optional(Schema.String),
  reason: Schema.optional(Schema.String),
  hookSpecificOutput: Schema.optional(HookSpecificOutput)
})

/** @category Models */
export type SyncOutput = typeof SyncOutput.Type

/** What one hook run gave, before it is read. @category Models */
export type Raw =
  /** A command hook's process ended. */
  | { readonly _tag: "Exited"; readonly exitCode: number; readonly stdout: string; readonly stderr: string }
  /** A callback hook answered (its JSON output). */
  | { readonly _tag: "Answered"; readonly output: unknown }
  /** The hook could not run or crashed (a process that did not start, a host that answered with an error). */
  | { readonly _tag: "Failed"; readonly message: string }

/** One hook run, read. @category Models */
export type Result =
  | {
    readonly _tag: "Success"
    /** Its JSON output, when it gave one. */
    readonly output: SyncOutput | undefined
    /** Its stdout when that was not JSON (empty when none). */
    readonly text: string
  }
  | { readonly _tag: "Blocking"; readonly reason: string }
  | { readonly _tag: "NonBlocking"; readonly message: string }

const decodeOutput = Schema.decodeUnknownEither(SyncOutput, { onExcessProperty: "ignore" })

/** `value` as a sync JSON output, or why it is not one. */
const outputOf = (value: unknown): Either.Either<SyncOutput, string> => {
  if (typeof value === "object" && value !== null && (value as Record<string, unknown>).async === true) {
    return Either.left("it answered {\"async\": true}; Keel does not run hooks in the background")
  }
  return Either.mapLeft(decodeOutput(value), (e) => `its JSON output is not valid: ${ParseResult.TreeFormatter.formatErrorSync(e)}`)
}

/** `text` parsed as JSON, when it is a JSON object. */
const jsonObject = (text: string): unknown => {
  const trimmed = text.trim()
  if (!trimmed.startsWith("{")) return undefined
  try {
    return JSON.parse(trimmed)
  } catch {
    return undefined
  }
}

/**
 * Reads one run of the hook `name`: what it decided, or why it failed.
 *
 * @category Reading
 */
export const read = (name: string, raw: Raw): Result => {
  switch (raw._tag) {
    case "Failed":
      return { _tag: "NonBlocking", message: `The hook ${name} failed: ${raw.message}` }
    case "Answered": {
      const output = outputOf(raw.output ?? {})
      return Either.isRight(output)
        ? { _tag: "Success", output: output.right, text: "" }
        : { _tag: "NonBlocking", message: `The hook ${name} failed: ${output.left}` }
    }
    case "Exited": {
      if (raw.exitCode === 2) {
        const reason = raw.stderr.trim()
        return { _tag: "Blocking", reason: reason === "" ? `the hook ${name} exited with code 2` : reason }
      }
      if (raw.exitCode !== 0) {
        const said = raw.stderr.trim() || raw.stdout.trim()
        return {
          _tag: "NonBlocking",
          message: `The hook ${name} exited with code ${raw.exitCode}${said === "" ? "" : `: ${said}`}`
        }
      }
      const json = jsonObject(raw.stdout)
      if (json === undefined) return { _tag: "Success", output: undefined, text: raw.stdout.trim() }
      const output = outputOf(json)
      return Either.isRight(output)
        ? { _tag: "Success", output: output.right, text: "" }
        : { _tag: "NonBlocking", message: `The hook ${name} failed: ${output.left}` }
    }
  }
}
