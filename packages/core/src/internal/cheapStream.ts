/**
 * Cheaper equivalents of a few `Stream` constructors the turn loop uses once or more per model call.
 *
 * `Stream.unwrap` and `Stream.unwrapScoped` flatten a stream of one stream (a `concatMap` with its
 * own sub-executor: ~140 and ~230 Effect operations each, counted by a `Supervisor`), where the
 * channel's own `unwrap` is a `flatMap` on the effect's result (~5). `Stream.make` and
 * `Stream.fromIterable` pull an iterator through effects (~150), where a chunk is written at once
 * (~5). `Stream.fromIterableEffect` does both (~290). The behaviour is the same: the stream made
 * when first pulled, the scope closed with the stream's exit when it ends, fails or is
 * interrupted, the items emitted in order.
 *
 * @internal
 */
import * as Channel from "effect/Channel"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/** `Stream.unwrap`: the stream the effect makes, run when first pulled. @internal */
export const unwrap = <A, E2, R2, E, R>(
  effect: Effect.Effect<Stream.Stream<A, E2, R2>, E, R>
): Stream.Stream<A, E | E2, R | R2> => Stream.fromChannel(Channel.unwrap(Effect.map(effect, Stream.toChannel)))

/**
 * `Stream.unwrapScoped`: the stream the effect makes in a scope of its own, closed with the stream's
 * exit once it ends (finished, failed or interrupted), or with the effect's failure.
 *
 * @internal
 */
export const unwrapScoped = <A, E2, R2, E, R>(
  effect: Effect.Effect<Stream.Stream<A, E2, R2>, E, R>
): Stream.Stream<A, E | E2, Exclude<R, Scope.Scope> | R2> =>
  Stream.fromChannel(Channel.unwrap(Effect.map(Scope.make(), (scope) =>
    Channel.ensuringWith(
      Channel.unwrap(Effect.map(Scope.extend(effect, scope), Stream.toChannel)),
      (exit) => Scope.close(scope, exit)
    ))))

/** `Stream.make(a)`: one item. @internal */
export const of = <A>(a: A): Stream.Stream<A> => Stream.fromChunk(Chunk.of(a))

/** `Stream.fromIterable` on an array the caller no longer changes: its items, in one chunk. @internal */
export const fromArray = <A>(as: ReadonlyArray<A>): Stream.Stream<A> => Stream.fromChunk(Chunk.unsafeFromArray(as))

/** `Stream.fromIterableEffect` on arrays: the items of the array the effect makes, in one chunk. @internal */
export const fromArrayEffect = <A, E, R>(effect: Effect.Effect<ReadonlyArray<A>, E, R>): Stream.Stream<A, E, R> =>
  Stream.fromChannel(Channel.flatMap(
    Channel.fromEffect(effect),
    (as) => as.length === 0 ? Channel.void : Channel.write(Chunk.unsafeFromArray(as))
  ))

/** `Stream.execute`: runs the effect when pulled, emits nothing. @internal */
export const execute = <X, E, R>(effect: Effect.Effect<X, E, R>): Stream.Stream<never, E, R> =>
  Stream.fromChannel(Channel.asVoid(Channel.fromEffect(effect)))

/**
 * `Stream.repeatEffectOption(next).pipe(Stream.flatten())` without the flatten's sub-executor: the
 * streams `next` makes, one after the other, until it makes none. The channel's continuation is
 * popped before the next stream starts, so the pipeline does not deepen with their number (400,000
 * streams run in constant memory).
 *
 * @internal
 */
export const repeat = <A, E, R, E2, R2>(
  next: Effect.Effect<Stream.Stream<A, E, R> | undefined, E2, R2>
): Stream.Stream<A, E | E2, R | R2> => {
  const go: Channel.Channel<Chunk.Chunk<A>, unknown, E | E2, unknown, unknown, unknown, R | R2> = Channel.unwrap(
    Effect.map(next, (stream) => stream === undefined ? Channel.void : Channel.flatMap(Stream.toChannel(stream), () => go))
  )
  return Stream.fromChannel(go)
}
