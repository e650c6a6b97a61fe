/**
 * What a failed run prints and exits with: a tagged error's own message and its exit code (2 for
 * usage and configuration, 3 for a session another process holds, 1 otherwise), a configuration
 * error per variable, anything else as an internal error.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import type { ConfigError } from "effect/ConfigError"
import * as Schema from "effect/Schema"

/**
 * A `-p` run on a resumed session with no prompt, whose session has nothing to run on (no turn a
 * crash left open, nothing queued): there is nothing to do. Exit 2.
 *
 * @category Errors
 */
export class NothingToResume extends Schema.TaggedError<NothingToResume>("@keel/NothingToResume")("NothingToResume", {
  sessionId: Schema.String
}) {
  override get message(): string {
    return `no prompt, and session ${this.sessionId} has no turn left open to run on. ` +
      `Give a prompt (keel --resume ${this.sessionId} -p "your prompt").`
  }
}

/**
 * One line per problem in a configuration error: the variable, and what is wrong with its value.
 *
 * @category Rendering
 */
export const describeConfigError = (error: ConfigError): Array<string> => {
  switch (error._op) {
    case "And":
    case "Or":
      return [...describeConfigError(error.left), ...describeConfigError(error.right)]
    case "InvalidData":
    case "MissingData":
    case "SourceUnavailable":
    case "Unsupported":
      return [`${error.path.join(".")}: ${error.message}`]
  }
}

/** What a failed run prints and exits with. @category Models */
export interface Failure {
  /** 2 for usage and configuration problems, 3 for a session in use by another process, 1 for everything else. */
  readonly code: 1 | 2 | 3
  /** The lines to print (each meant to be prefixed with `keel: `). */
  readonly lines: ReadonlyArray<string>
}

const USAGE_ERRORS = new Set([
  "InvalidSettings",
  "InvalidPricing",
  "InvalidModels",
  "InvalidMcpConfig",
  "InvalidTelemetryConfig",
  "InvalidAgents",
  "UnknownAgent",
  "InvalidOutputSchema",
  "NothingToResume"
])
const RUNTIME_ERRORS = new Set([
  "MissingCredentials",
  "ApiKeyHelperFailed",
  "SessionNotFound",
  "MessageNotFound",
  "CorruptTranscript",
  "ForeignTranscript",
  "SessionExists",
  "TranscriptIoError"
])
/** Errors that say "not now": the session is busy (exit 3, so a script can tell it from a failure and retry). */
const BUSY_ERRORS = new Set(["SessionLocked"])

/**
 * What to tell the user about a run that failed outside a turn: a tagged error's own message with
 * its exit code, a configuration error per variable, and anything else as an internal error (its
 * stack only when `debug`).
 *
 * @category Rendering
 */
export const describeFailure = (
  cause: Cause.Cause<unknown>,
  debug: boolean,
  /** How to get the stack trace, said after an internal error's message when not `debug`. */
  debugHint = "run with --debug for the stack trace"
): Failure => {
  const failure = Cause.failureOption(cause)
  if (failure._tag === "Some") {
    const error = failure.value as { readonly _tag?: unknown; readonly message?: unknown; readonly _op?: unknown }
    if (typeof error._tag === "string" && typeof error.message === "string") {
      if (USAGE_ERRORS.has(error._tag)) return { code: 2, lines: [error.message] }
      if (RUNTIME_ERRORS.has(error._tag)) return { code: 1, lines: [error.message] }
      if (BUSY_ERRORS.has(error._tag)) return { code: 3, lines: [error.message] }
    }
    if (typeof error._op === "string") {
      return { code: 2, lines: describeConfigError(error as ConfigError).map((line) => `invalid environment: ${line}`) }
    }
  }
  const squashed = Cause.squash(cause)
  const what = squashed instanceof Error ? squashed.message : String(squashed)
  return {
    code: 1,
    lines: debug
      ? [`internal error: ${Cause.pretty(cause)}`]
      : [`internal error: ${what} (${debugHint})`]
  }
}
