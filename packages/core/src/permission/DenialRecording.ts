/**
 * The decorator that records denials: it wraps a `Permissions` service's `check` and appends every
 * decision that is not "allow" to the running session's `permissionDenials` (the `SessionState` the
 * check requires), leaving the decision itself untouched. This is the QueryEngine's wrapped
 * `canUseTool`: the check stays pure policy, and the session learns what was refused.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { SessionState } from "../session/SessionState.js"
import type { Decision, Request, Service } from "./Permissions.js"

/** A permission check that records its denials in the session it runs in. @category Models */
export type RecordingCheck = (request: Request) => Effect.Effect<Decision, never, SessionState>

/** Records a denial decided elsewhere (a PreToolUse hook's) in the session's permission denials. @category Combinators */
export const recordDenial = (request: Request): Effect.Effect<void, never, SessionState> =>
  Effect.flatMap(SessionState, (state) =>
    Ref.update(state.permissionDenials, (ds) => [
      ...ds,
      { tool_name: request.toolName, tool_use_id: request.toolUseId, tool_input: request.input }
    ]))

/**
 * `permissions`' check, with each denial recorded in the session's permission denials.
 *
 * @category Combinators
 */
export const recordingDenials = (permissions: Service): RecordingCheck => (request) =>
  Effect.tap(permissions.check(request), (decision) =>
    decision._tag === "Allow"
      ? Effect.void
      : recordDenial(request))
