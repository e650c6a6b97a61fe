/**
 * A `canUseTool` callback as the answerer of the session's pending actions (`Actions`): the REPL's
 * permission prompt and `query()`'s host callback answer through `respond`, like a stream-json
 * host or an RPC client, instead of being the permission policy's own callback. A permission ask
 * calls it (aborted when the action is cancelled first); an MCP elicitation is declined (neither
 * asks its user for elicitations yet).
 *
 * @since 0.1.0
 */
import { Actions, PermissionUpdate, type Permissions } from "@keel/core"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/**
 * Answers every action opened from now on (and those pending now) with `canUseTool`, for as long
 * as the scope lasts.
 *
 * @category Running
 */
export const answerWith = (canUseTool: Permissions.CanUseTool): Effect.Effect<void, never, Actions.Actions | Scope.Scope> =>
  Effect.gen(function*() {
    const actions = yield* Actions.Actions
    const asked = new Map<string, AbortController>()
    const reply = (id: string, answer: Promise<unknown>) =>
      answer.then(
        (given) => Effect.runPromise(Effect.ignore(actions.respond(id, given))),
        (e) => Effect.runPromise(Effect.ignore(actions.cancel(id, `the permission callback failed (${String(e)})`)))
      ).finally(() => asked.delete(id))
    yield* Effect.forkScoped(Stream.runForEach(yield* actions.subscribe, (event) =>
      Effect.sync(() => {
        if (event.event !== "opened") {
          asked.get(event.id)?.abort()
          return
        }
        const { id, request } = event.action
        if (request.kind !== "permission") return void reply(id, Promise.resolve({ action: "decline" }))
        const controller = new AbortController()
        asked.set(id, controller)
        void reply(id, canUseTool(request.toolName, request.input, {
          toolUseId: request.toolUseId,
          reason: request.reason,
          signal: controller.signal,
          suggestions: PermissionUpdate.suggestionsFor(request.toolName, request.input)
        }))
      })))
  })
