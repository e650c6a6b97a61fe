/**
 * The session's facts that outlive a turn, as the runtime keeps them in the session's state and
 * its transcript: the inputs that wait (saved when they change, so a restarted process queues them
 * again), the pending actions' events, and the goal. One change at a time, each written and
 * flushed before the next (`Session.save`).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Session from "../session/Session.js"
import type * as SessionState from "../session/SessionState.js"
import type * as Action from "../action/Action.js"
import * as Admission from "../admission/Admission.js"
import type * as Goal from "../goal/Goal.js"

/** @category Models */
export interface SessionFacts {
  /** Saves what waits in `admission` (and what the transcript left, until it is taken), if it changed. */
  readonly saveQueue: (admission: Admission.Admission) => Effect.Effect<void>
  /** The inputs the transcript left queued, taken once (by `resume`). */
  readonly takeLeftQueued: Effect.Effect<ReadonlyArray<Admission.Saved>>
  /** Changes the goal with `f` and saves it; `f`'s first result is the answer. */
  readonly changeGoal: <A>(f: (goal: Goal.Goal | undefined) => readonly [A, Goal.Goal | undefined]) => Effect.Effect<A>
  /** Records an action's event (an `opened` already recorded, e.g. a restored action's, is not written twice). */
  readonly recordAction: (event: Action.Event) => Effect.Effect<void>
}

const sameQueue = (a: ReadonlyArray<Admission.Saved>, b: ReadonlyArray<Admission.Saved>): boolean =>
  a.length === b.length && a.every((q, i) => q.id === b[i]!.id && q.priority === b[i]!.priority)

/** The facts of `session` (its current state: `/clear` starts another). @category Constructors */
export const make = (session: Session.Service): Effect.Effect<SessionFacts> =>
  Effect.gen(function*() {
    const saving = yield* Effect.makeSemaphore(1)
    const left = yield* Ref.make<ReadonlyArray<Admission.Saved>>(yield* Effect.flatMap(session.state, (s) => Ref.get(s.queued)))
    const change = <A>(f: (state: SessionState.Service) => Effect.Effect<A>) =>
      saving.withPermits(1)(Effect.flatMap(session.state, f))
    return {
      saveQueue: (admission) =>
        change((state) =>
          Effect.gen(function*() {
            const waiting = [...(yield* Ref.get(left)), ...Admission.saved(admission)]
            if (sameQueue(waiting, yield* Ref.get(state.queued))) return
            yield* Ref.set(state.queued, waiting)
            yield* session.save
          })
        ),
      takeLeftQueued: Ref.getAndSet(left, []),
      changeGoal: (f) =>
        change((state) =>
          Effect.gen(function*() {
            const [answer, next] = f(yield* Ref.get(state.goal))
            yield* Ref.set(state.goal, next)
            yield* session.save
            return answer
          })
        ),
      recordAction: (event) =>
        change((state) =>
          Effect.gen(function*() {
            const log = yield* Ref.get(state.actionLog)
            if (event.event === "opened" && log.some((e) => e.event === "opened" && e.action.id === event.action.id)) return
            yield* Ref.set(state.actionLog, [...log, event])
            yield* session.save
          })
        )
    }
  })
