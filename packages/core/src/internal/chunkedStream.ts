/**
 * A `Stream` over a producer that pushes items from outside Effect (an async iterator fed by the
 * network), pulled in chunks: each pull takes everything pushed since the previous one. A waiting
 * consumer is woken once per event-loop turn (`setImmediate`, a yield to I/O, not a timer), so a
 * chunk holds many items rather than one and the Effect cost is paid per chunk, not per item.
 *
 * The buffer is bounded: at `highWaterMark` items the producer is asked to wait (`sink.ready()`)
 * until the consumer has taken them. Without this a fast producer runs far ahead in microtasks and
 * the buffered items live long enough for the garbage collector to promote them, which costs more
 * than all the rest of the bridge.
 *
 * @internal
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"

/** What the producer is given. @internal */
export interface Sink<A, E> {
  readonly push: (item: A) => void
  /** A promise to await before pushing more when the buffer is full; undefined when there is room. */
  readonly ready: () => Promise<void> | undefined
  readonly end: () => void
  readonly fail: (error: E) => void
}

/**
 * A stream fed by `start`, which begins producing into the sink and returns a function that stops
 * it. The stop function runs when the stream is closed for any reason (end, failure, interruption).
 *
 * @internal
 */
export const make = <A, E>(
  start: (sink: Sink<A, E>) => () => void,
  highWaterMark = 2048
): Stream.Stream<A, E> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    let buffer: Array<A> = []
    let drained: { promise: Promise<void>; resolve: () => void } | undefined
    let outcome: { readonly error: E } | "end" | undefined
    let waiting: (() => void) | undefined
    let scheduled = false

    const wake = () => {
      scheduled = false
      const resume = waiting
      waiting = undefined
      resume?.()
    }
    const notify = () => {
      if (waiting !== undefined && !scheduled) {
        scheduled = true
        setImmediate(wake)
      }
    }
    const stop = start({
      push: (item) => {
        buffer.push(item)
        notify()
      },
      ready: () => {
        if (buffer.length < highWaterMark) return undefined
        if (drained === undefined) {
          let resolve!: () => void
          const promise = new Promise<void>((r) => (resolve = r))
          drained = { promise, resolve }
        }
        return drained.promise
      },
      end: () => {
        if (outcome === undefined) outcome = "end"
        notify()
      },
      fail: (error) => {
        if (outcome === undefined) outcome = { error }
        notify()
      }
    })
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        stop()
        drained?.resolve()
      })
    )

    const take = (): Effect.Effect<Chunk.Chunk<A>, Option.Option<E>> | undefined => {
      if (buffer.length > 0) {
        const out = buffer
        buffer = []
        if (drained !== undefined) {
          drained.resolve()
          drained = undefined
        }
        return Effect.succeed(Chunk.unsafeFromArray(out))
      }
      if (outcome === "end") return Effect.fail(Option.none())
      if (outcome !== undefined) return Effect.fail(Option.some(outcome.error))
      return undefined
    }

    const pull: Effect.Effect<Chunk.Chunk<A>, Option.Option<E>> = Effect.suspend(() =>
      take() ?? Effect.async<Chunk.Chunk<A>, Option.Option<E>>((resume) => {
        waiting = () => resume(take() ?? pull)
        return Effect.sync(() => {
          waiting = undefined
        })
      })
    )
    return Stream.repeatEffectChunkOption(pull)
  }))
