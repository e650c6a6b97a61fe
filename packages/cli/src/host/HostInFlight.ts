/**
 * The host's control requests that `keel` has read but not answered yet, so that the host's
 * `control_cancel_request` can withdraw one: a request still waiting its turn is not handled at all,
 * and one being handled is interrupted; either is answered with an error response saying the host
 * cancelled it (exactly one response per request). A cancel for an id that is neither (answered
 * already, or never sent) has nothing to cancel.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"

/** What a host's cancel did. @category Models */
export type Cancelled = "interrupted" | "withdrawn" | "unknown"

/** @category Models */
export interface Service {
  /** The request `requestId` was read and waits its turn. */
  readonly queued: (requestId: string) => Effect.Effect<void>
  /**
   * Handles the request `requestId` with `handle`, unless the host cancelled it first; `None` when
   * it was cancelled before or while it ran.
   */
  readonly run: <A>(requestId: string, handle: Effect.Effect<A>) => Effect.Effect<Option.Option<A>>
  /** The host's `control_cancel_request` for `requestId`. */
  readonly cancel: (requestId: string) => Effect.Effect<Cancelled>
}

type State = { readonly _tag: "Queued" } | { readonly _tag: "Withdrawn" } | {
  readonly _tag: "Running"
  readonly fiber: Fiber.RuntimeFiber<unknown>
}

/** @category Constructors */
export const make: Effect.Effect<Service> = Effect.sync(() => {
  const requests = new Map<string, State>()
  return {
    queued: (requestId) => Effect.sync(() => void requests.set(requestId, { _tag: "Queued" })),
    run: <A>(requestId: string, handle: Effect.Effect<A>) =>
      Effect.gen(function*() {
        if (requests.get(requestId)?._tag === "Withdrawn") {
          requests.delete(requestId)
          return Option.none()
        }
        const fiber = yield* Effect.fork(handle)
        requests.set(requestId, { _tag: "Running", fiber })
        const exit = yield* Fiber.await(fiber)
        requests.delete(requestId)
        if (Exit.isSuccess(exit)) return Option.some(exit.value)
        return Exit.isInterrupted(exit) ? Option.none() : yield* Effect.failCause(exit.cause)
      }),
    cancel: (requestId) =>
      Effect.suspend((): Effect.Effect<Cancelled> => {
        const state = requests.get(requestId)
        switch (state?._tag) {
          case "Queued":
            requests.set(requestId, { _tag: "Withdrawn" })
            return Effect.succeed("withdrawn")
          case "Running":
            return Effect.as(Fiber.interruptFork(state.fiber), "interrupted")
          default:
            return Effect.succeed("unknown")
        }
      })
  }
})
