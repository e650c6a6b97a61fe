/**
 * `--include-hook-events`: each hook run as Claude Code's stream-json messages, `system/hook_started`
 * when it starts and `system/hook_response` when it ends (its stdout, stderr, exit code, and an
 * outcome of `success`, `error` or `cancelled` for one that timed out).
 *
 * @since 0.1.0
 */
import type { Hooks } from "@keel/core"

/** The stdout message for a hook run's event. @category Encoding */
export const messageOf = (event: Hooks.Lifecycle, uuid: () => string): Record<string, unknown> => {
  const common = { hook_id: event.id, hook_name: event.name, hook_event: event.event }
  return event._tag === "Started"
    ? { type: "system", subtype: "hook_started", ...common, uuid: uuid(), session_id: event.sessionId }
    : {
      type: "system",
      subtype: "hook_response",
      ...common,
      output: event.stdout + event.stderr,
      stdout: event.stdout,
      stderr: event.stderr,
      ...(event.exitCode === undefined ? {} : { exit_code: event.exitCode }),
      outcome: event.outcome,
      uuid: uuid(),
      session_id: event.sessionId
    }
}
