/**
 * The decorator that records denials: it wraps a `Permissions` service's `check` and appends every
 * decision that is not "allow" to the running session's `permissionDenials` (the `SessionState` in
 * the caller's context), leaving the decision itself untouched. This is the QueryEngine's wrapped
 * `canUseTool`: the check stays pure policy, and the session learns what was refused.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { SessionState } from "../session/SessionState.js"
import type { Service } from "./Permissions.js"

/**
 * `permissions`, with each denial recorded in the session's permission denials (when the check
 * runs inside a session; elsewhere it only decides).
 *
 * @category Combinators
 */
export const recordingDenials = (permissions: Service): Service => ({
  ...permissions,
  check: (request) =>
    Effect.tap(permissions.check(request), (decision) =>
      decision._tag === "Allow"
        ? Effect.void
        : Effect.flatMap(Effect.serviceOption(SessionState), (state) =>
          state._tag === "None"
            ? Effect.void
            : Ref.update(state.value.permissionDenials, (ds) => [
              ...ds,
              { tool_name: request.toolName, tool_use_id: request.toolUseId, tool_input: request.input }
            ])))
})
