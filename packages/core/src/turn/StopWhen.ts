/**
 * `stopWhen`: a stream that ends early when an effect completes, for interrupting a turn.
 *
 * @internal
 */
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Stream from "effect/Stream"
import * as CheapStream from "../internal/cheapStream.js"

/**
 * `stream`, ended early when `interrupt` completes: like `Stream.interruptWhen`, but without a race
 * per pull. The stream runs in its own fiber, which pulls its next chunk only when the consumer asks
 * for one (so nothing runs ahead of the consumer: a chunk the session is still writing to the
 * transcript is never followed by the next model request); a second fiber waits for `interrupt`,
 * then interrupts the first (its finalizers run) and ends the output. The two fibers hand each
 * other the ask and the chunk through two callbacks, not queues: a chunk costs two wake-ups.
 *
 * When `interrupt` is a `Deferred`, it is also looked at before each pull, so a stop that came
 * before the stream started (or while the waiting fiber has not been scheduled yet) ends it before
 * anything more is pulled: without that, a fast stream can run to its end before the waiting fiber
 * gets its turn.
 *
 * @internal
 */
export const stopWhen = (interrupt: Effect.Effect<void>) => <A>(stream: Stream.Stream<A>): Stream.Stream<A> =>
  CheapStream.unwrapScoped(Effect.gen(function*() {
    const pull = yield* Stream.toPull(stream)
    /** The consumer has asked for a chunk the producer has not started to pull. */
    let asked = false
    /** The producer, while it waits for an ask. */
    let idle: (() => void) | undefined
    /** The consumer, while it waits for its chunk. */
    let waiting: ((exit: Exit.Exit<Chunk.Chunk<A>, Option.Option<never>>) => void) | undefined
    /** The end of the output, once `interrupt` has completed. */
    let ended = false
    const deliver = (exit: Exit.Exit<Chunk.Chunk<A>, Option.Option<never>>) => {
      const resume = waiting
      waiting = undefined
      resume?.(exit)
    }
    const ask: Effect.Effect<void> = Effect.suspend(() => {
      if (asked) {
        asked = false
        return Effect.void
      }
      return Effect.async<void>((resume) => {
        idle = () => resume(Effect.void)
      })
    })
    const producer = yield* Effect.forkScoped(
      Effect.forever(Effect.zipRight(ask, Effect.flatMap(Effect.exit(pull), (exit) => Effect.sync(() => deliver(exit)))))
    )
    const end = Exit.fail(Option.none())
    yield* Effect.forkScoped(
      interrupt.pipe(
        Effect.zipRight(Fiber.interrupt(producer)),
        Effect.zipRight(Effect.sync(() => {
          ended = true
          deliver(end)
        }))
      )
    )
    const next: Effect.Effect<Chunk.Chunk<A>, Option.Option<never>> = Effect.async((resume) => {
      if (ended) return resume(end)
      waiting = resume
      const go = idle
      idle = undefined
      if (go !== undefined) go()
      else asked = true
      return Effect.sync(() => {
        waiting = undefined
      })
    })
    const stopped = Predicate.hasProperty(interrupt, Deferred.DeferredTypeId) ? (interrupt as Deferred.Deferred<void>) : undefined
    return Stream.repeatEffectChunkOption(
      stopped === undefined
        ? next
        : Effect.flatMap(Deferred.isDone(stopped), (done) => done ? end : next)
    )
  }))
