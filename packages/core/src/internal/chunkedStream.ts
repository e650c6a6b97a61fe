/**
 * A `Stream` over a producer that pushes items from outside Effect (an async iterator fed by the
 * network), pulled in chunks: each pull takes everything pushed since the previous one, so the
 * Effect cost is paid per chunk, not per item.
 *
 * The producer says where its natural batches end by calling `flush()` (for the model stream: after
 * the events decoded from one network read). A waiting consumer is woken only then, at the end, on
 * failure, or when the buffer reaches `highWaterMark` items; at that mark the producer is asked to
 * wait (`ready()`) until the consumer has taken them, so the buffer is bounded and its items die
 * young. No timers, no `setImmediate`: waking the consumer on a later event-loop turn changes how the
 * loop polls the socket and costs about a fifth of the SDK's own parsing time.
 *
 * @internal
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as CheapStream from "./cheapStream.js"

/** What the producer is given. @internal */
export interface Sink<A, E> {
  readonly push: (item: A) => void
  /** A batch ends here: hand what was pushed to a waiting consumer. */
  readonly flush: () => void
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
  CheapStream.unwrapScoped(Effect.gen(function*() {
    let buffer: Array<A> = []
    let outcome: { readonly error: E } | "end" | undefined
    let waiting: (() => void) | undefined
    let drained: { readonly promise: Promise<void>; readonly resolve: () => void } | undefined

    const wake = () => {
      const resume = waiting
      waiting = undefined
      resume?.()
    }
    const stop = start({
      push: (item) => {
        buffer.push(item)
      },
      flush: () => {
        if (buffer.length > 0) wake()
      },
      ready: () => {
        if (buffer.length < highWaterMark) return undefined
        if (drained === undefined) {
          let resolve!: () => void
          const promise = new Promise<void>((r) => (resolve = r))
          drained = { promise, resolve }
        }
        // (Waking a waiting consumer takes the buffer and resolves `drained` at once.)
        const promise = drained.promise
        wake()
        return promise
      },
      end: () => {
        if (outcome === undefined) outcome = "end"
        wake()
      },
      fail: (error) => {
        if (outcome === undefined) outcome = { error }
        wake()
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
