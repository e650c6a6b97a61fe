/**
 * `stopWhen`: a stream that ends early when an effect completes, for interrupting a turn.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Predicate from "effect/Predicate"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as Take from "effect/Take"

/**
 * `stream`, ended early when `interrupt` completes: like `Stream.interruptWhen`, but without a race
 * per pull. The stream runs in its own fiber, which pulls its next chunk only when the consumer asks
 * for one (so nothing runs ahead of the consumer: a chunk the session is still writing to the
 * transcript is never followed by the next model request); a second fiber waits for `interrupt`,
 * then interrupts the first (its finalizers run) and ends the output. A chunk costs two queue
 * handoffs.
 *
 * When `interrupt` is a `Deferred`, it is also looked at before each pull, so a stop that came
 * before the stream started (or while the waiting fiber has not been scheduled yet) ends it before
 * anything more is pulled: without that, a fast stream can run to its end before the waiting fiber
 * gets its turn.
 *
 * @internal
 */
export const stopWhen = (interrupt: Effect.Effect<void>) => <A>(stream: Stream.Stream<A>): Stream.Stream<A> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const asks = yield* Effect.acquireRelease(Queue.bounded<void>(1), Queue.shutdown)
    const out = yield* Effect.acquireRelease(Queue.bounded<Take.Take<A>>(1), Queue.shutdown)
    const pull = yield* Stream.toPull(stream)
    const producer = yield* Effect.forkScoped(
      Effect.forever(
        Effect.zipRight(
          Queue.take(asks),
          Effect.flatMap(Take.fromPull(pull), (take) => Queue.offer(out, take))
        )
      )
    )
    yield* Effect.forkScoped(
      interrupt.pipe(Effect.zipRight(Fiber.interrupt(producer)), Effect.zipRight(Queue.offer(out, Take.end)))
    )
    const next = Queue.offer(asks, undefined).pipe(Effect.zipRight(Queue.take(out)), Effect.flatMap(Take.done))
    const stopped = Predicate.hasProperty(interrupt, Deferred.DeferredTypeId) ? (interrupt as Deferred.Deferred<void>) : undefined
    return Stream.repeatEffectChunkOption(
      stopped === undefined
        ? next
        : Effect.flatMap(Deferred.isDone(stopped), (done) => done ? Take.done(Take.end) : next)
    )
  }))
