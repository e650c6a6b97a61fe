/** Sessions for protocol tests, opened on the testing layer the test provides. */
import { Actions, RuntimeProtocol, Session, SessionRuntime, SessionStore } from "@keel/core"
import type { Testing } from "@keel/core/testing"
import { Context, Effect, type Layer, Scope } from "effect"
import { SessionOpener } from "../../src/serve/Sessions.js"

/**
 * Opens sessions on the testing layer the test provides (its model, its ids); not in the test's
 * scope, but in the one each session is opened in.
 */
export const testOpener = Effect.map(Effect.context<Layer.Layer.Success<ReturnType<typeof Testing.layer>>>(), (all) => {
  const context = Context.omit(Scope.Scope)(all)
  return SessionOpener.of({
    open: (start) =>
      Session.make({
        model: start.model ?? "claude-test",
        cwd: start.cwd ?? "/work",
        ...(start.sessionId === undefined ? {} : { sessionId: start.sessionId })
      }).pipe(
        Effect.provide(context),
        Effect.map((session) => ({
          session,
          warnings: [],
          runtime: SessionRuntime.make(session).pipe(Effect.provide(context)),
          actions: Context.get(context, Actions.Actions),
          transcript: Effect.flatMap(
            session.sessionId,
            (id) => Context.get(context, SessionStore.SessionStore).loadEntries(start.cwd ?? "/work", id)
          )
        })),
        Effect.mapError((e) => new RuntimeProtocol.SessionStartFailed({ message: String(e) }))
      )
  })
})

