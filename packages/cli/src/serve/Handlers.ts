/**
 * The runtime protocol's handlers (`RuntimeProtocol.RuntimeRpcs`) over the server's sessions: each
 * operation is the `SessionRuntime` (or session) operation of the same name, its misses turned into
 * the protocol's typed errors. Adding an operation to the group is adding its handler here.
 *
 * @since 0.1.0
 */
import { type Admission, BashGrammar, Export, type Message, ReadModel, RuntimeProtocol, SessionRuntime } from "@keel/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { type Published, type Served, Sessions } from "./Sessions.js"

type Event = RuntimeProtocol.RuntimeEvent

/**
 * Admits `prompt` and streams its turn: `Admitted`, then (when it runs) `Started`, its messages and
 * `Ended`. It fails with `TurnCancelled` if the turn is dropped before it runs, and with
 * `TurnFailed` if it dies. The hub is subscribed before the submission, so nothing is missed; the
 * turn runs whether or not this stream is read to its end.
 */
const turnStream = (
  served: Served,
  prompt: string | Message.UserMessage,
  priority: Admission.Priority | undefined
): Stream.Stream<Event, SessionRuntime.QueueFull | SessionRuntime.TurnCancelled | RuntimeProtocol.TurnFailed> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const subscription = yield* PubSub.subscribe(served.events)
    const { turnId } = yield* served.runtime.submit(prompt, { priority })
    const own = Stream.fromQueue(subscription).pipe(
      Stream.filter((event) => event._tag === "Closed" || event.turnId === turnId),
      Stream.mapEffect((event: Published): Effect.Effect<Event, SessionRuntime.TurnCancelled | RuntimeProtocol.TurnFailed> => {
        switch (event._tag) {
          case "Cancelled":
            return Effect.fail(new SessionRuntime.TurnCancelled({ turnId, reason: event.reason }))
          case "Closed":
            return Effect.fail(new SessionRuntime.TurnCancelled({ turnId, reason: "closed" }))
          case "Failed":
            return Effect.fail(new RuntimeProtocol.TurnFailed({ turnId, message: event.message }))
          default:
            return Effect.succeed(event)
        }
      }),
      Stream.takeUntil((event) => event._tag === "Ended")
    )
    return Stream.concat(Stream.succeed(RuntimeProtocol.Admitted.make({ turnId })), own)
  }))

/** The queue as the protocol lists it. */
const queueState = (served: Served) =>
  Effect.all({
    running: Effect.map(served.runtime.running, (id) => id ?? null),
    queued: served.runtime.queue
  })

/**
 * The handlers, over `Sessions`.
 *
 * @category Layers
 */
export const layer = RuntimeProtocol.RuntimeRpcs.toLayer(Effect.gen(function*() {
  const sessions = yield* Sessions
  const withSession = <A, E>(sessionId: string, f: (served: Served) => Effect.Effect<A, E>) =>
    Effect.flatMap(sessions.get(sessionId), f)
  const streamSession = <A, E>(sessionId: string, f: (served: Served) => Stream.Stream<A, E>) =>
    Stream.unwrap(Effect.map(sessions.get(sessionId), f))
  const turnNotFound = (sessionId: string, turnId: string, expected: "queued" | "queued or running") =>
    new RuntimeProtocol.TurnNotFound({ sessionId, turnId, expected })

  return {
    "session.start": (options) =>
      Effect.flatMap(sessions.start(options), ({ served, warnings }) =>
        Effect.map(served.session.init, (init) => ({ sessionId: served.sessionId, init, warnings }))),
    "session.list": () =>
      Effect.flatMap(sessions.list, (all) =>
        Effect.forEach(all, (served) =>
          Effect.map(
            Effect.all({ model: served.session.model, queue: queueState(served) }),
            ({ model, queue }) => ({
              sessionId: served.sessionId,
              cwd: served.cwd,
              model,
              running: queue.running,
              queued: queue.queued.length
            })
          ))),
    "session.read": ({ sessionId }) =>
      withSession(sessionId, (served) =>
        Effect.all({
          sessionId: Effect.succeed(served.sessionId),
          currentSessionId: served.session.sessionId,
          cwd: Effect.succeed(served.cwd),
          model: served.session.model,
          queue: queueState(served),
          lastResult: Effect.map(served.runtime.lastResult, (result) => result ?? null),
          goal: Effect.map(served.runtime.goal, (goal) => goal ?? null),
          pendingActions: served.actions.pending,
          messages: Effect.flatMap(served.session.state, (state) => Ref.get(state.messages)),
          // Bash calls' decisions are explained with the bash grammar (loaded once).
          readModel: Effect.zipRight(BashGrammar.ready, served.transcript).pipe(
            Effect.map((decoded) => ReadModel.make(decoded, { pricing: served.pricing })),
            Effect.orElseSucceed(() => null)
          )
        }).pipe(Effect.map(({ queue, ...rest }) => ({ ...rest, running: queue.running, queued: queue.queued })))),
    "session.events": ({ sessionId }) =>
      streamSession(sessionId, (served) =>
        Stream.unwrapScoped(Effect.map(PubSub.subscribe(served.events), (subscription) =>
          Stream.fromQueue(subscription).pipe(
            Stream.takeWhile((event) => event._tag !== "Closed"),
            Stream.filterMap((event): Option.Option<Event> => {
              switch (event._tag) {
                case "Failed":
                  return Option.some(RuntimeProtocol.Ended.make({ turnId: event.turnId }))
                default:
                  return Option.some(event)
              }
            })
          )))),
    "session.compact": ({ instructions, priority, sessionId }) =>
      streamSession(sessionId, (served) =>
        turnStream(served, instructions === undefined ? "/compact" : `/compact ${instructions}`, priority)),
    "session.export": ({ format, json, sessionId }) =>
      withSession(sessionId, (served) =>
        Effect.zipRight(BashGrammar.ready, served.transcript).pipe(
          Effect.mapError((error) => new RuntimeProtocol.TranscriptUnavailable({ sessionId, message: error.message })),
          Effect.map((decoded) => Export.render(decoded, format, { json, pricing: served.pricing }))
        )),
    "session.close": ({ sessionId }) => sessions.close(sessionId),
    "turn.start": ({ priority, prompt, sessionId }) =>
      streamSession(sessionId, (served) => turnStream(served, prompt, priority)),
    "turn.cancel": ({ sessionId, turnId }) =>
      withSession(sessionId, (served) =>
        Effect.gen(function*() {
          if (yield* served.runtime.remove(turnId)) {
            yield* sessions.cancelled(served, [turnId], "removed")
            return { outcome: "removed" as const }
          }
          if (yield* served.runtime.interruptTurn(turnId)) return { outcome: "interrupted" as const }
          return yield* turnNotFound(sessionId, turnId, "queued or running")
        })),
    "queue.list": ({ sessionId }) => withSession(sessionId, queueState),
    "queue.remove": ({ sessionId, turnId }) =>
      withSession(sessionId, (served) =>
        Effect.flatMap(served.runtime.remove(turnId), (removed) =>
          removed
            ? sessions.cancelled(served, [turnId], "removed")
            : Effect.fail(turnNotFound(sessionId, turnId, "queued")))),
    "queue.promote": ({ sessionId, turnId }) =>
      withSession(sessionId, (served) =>
        Effect.flatMap(served.runtime.promote(turnId), (promoted) =>
          promoted ? Effect.void : Effect.fail(turnNotFound(sessionId, turnId, "queued")))),
    "queue.clear": ({ sessionId }) =>
      withSession(sessionId, (served) =>
        Effect.flatMap(served.runtime.clear, (removed) =>
          Effect.as(sessions.cancelled(served, removed.map((q) => q.id), "cleared"), { removed }))),
    "action.list": ({ sessionId }) => withSession(sessionId, (served) => served.actions.pending),
    "action.respond": ({ actionId, answer, sessionId }) =>
      withSession(sessionId, (served) => served.actions.respond(actionId, answer)),
    "goal.set": ({ maxBudgetUsd, maxContinuations, objective, sessionId }) =>
      withSession(sessionId, (served) => served.runtime.setGoal(objective, { maxBudgetUsd, maxContinuations })),
    "goal.pause": ({ paused, sessionId }) =>
      withSession(sessionId, (served) => Effect.map(served.runtime.pauseGoal(paused), (changed) => ({ changed }))),
    "goal.clear": ({ sessionId }) =>
      withSession(sessionId, (served) => Effect.map(served.runtime.clearGoal, (cleared) => ({ cleared })))
  }
}))
