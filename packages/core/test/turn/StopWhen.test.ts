/**
 * `stopWhen`, the turn's interrupt switch: the stream runs no further than its consumer asks, a
 * stop ends the output and closes the stream (its finalizers run) even while it waits, and a stop
 * that came before the first pull ends it before anything is pulled.
 */
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Fiber, Ref, Stream } from "effect"
import { stopWhen } from "../../src/turn/StopWhen.js"

describe("stopWhen", () => {
  it.effect("pulls a chunk only when the consumer asks for one", () =>
    Effect.gen(function*() {
      const pulled = yield* Ref.make(0)
      const stop = yield* Deferred.make<void>()
      const source = Stream.repeatEffect(Ref.updateAndGet(pulled, (n) => n + 1)).pipe(Stream.take(10))
      const seen = yield* Effect.scoped(Effect.gen(function*() {
        const pull = yield* Stream.toPull(stopWhen(Deferred.await(stop))(source))
        const first = yield* pull
        for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
        const after = yield* Ref.get(pulled)
        const second = yield* pull
        return [Chunk.toReadonlyArray(first), after, Chunk.toReadonlyArray(second)] as const
      }))
      assert.deepStrictEqual(seen, [[1], 1, [2]])
    }))

  it.effect("a stop while the stream waits ends the output and closes the stream", () =>
    Effect.gen(function*() {
      const closed = yield* Ref.make(false)
      const stop = yield* Deferred.make<void>()
      const source = Stream.concat(Stream.make(1, 2), Stream.never).pipe(Stream.ensuring(Ref.set(closed, true)))
      const fiber = yield* Effect.fork(Stream.runCollect(stopWhen(Deferred.await(stop))(source)))
      for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
      assert.isFalse(yield* Ref.get(closed))
      yield* Deferred.succeed(stop, undefined)
      const out = yield* Fiber.join(fiber)
      assert.deepStrictEqual(Chunk.toReadonlyArray(out), [1, 2])
      assert.isTrue(yield* Ref.get(closed))
    }))

  it.effect("a stop that came first: nothing is pulled", () =>
    Effect.gen(function*() {
      const pulled = yield* Ref.make(0)
      const stop = yield* Deferred.make<void>()
      yield* Deferred.succeed(stop, undefined)
      const source = Stream.repeatEffect(Ref.updateAndGet(pulled, (n) => n + 1)).pipe(Stream.take(3))
      const out = yield* Stream.runCollect(stopWhen(stop)(source))
      assert.deepStrictEqual([Chunk.size(out), yield* Ref.get(pulled)], [0, 0])
    }))

  it.effect("a defect in the stream reaches the consumer", () =>
    Effect.gen(function*() {
      const stop = yield* Deferred.make<void>()
      const exit = yield* Effect.exit(Stream.runCollect(stopWhen(stop)(Stream.concat(Stream.make(1), Stream.die("boom")))))
      assert.isTrue(exit._tag === "Failure" && exit.cause._tag === "Die")
    }))
})
