/**
 * The cheap stream constructors behave as the `Stream` ones they stand for: made when first pulled,
 * a scope closed with the stream's exit however it ends, items in order, and a sequence of streams
 * that does not deepen with their number.
 */
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Exit, Fiber, Ref, Stream } from "effect"
import * as CheapStream from "../../src/internal/cheapStream.js"

/** A stream made in a scope whose closing exit is recorded. */
const recorded = (closed: Ref.Ref<ReadonlyArray<string>>, stream: Stream.Stream<number, string>) =>
  CheapStream.unwrapScoped(Effect.as(
    Effect.addFinalizer((exit) =>
      Ref.update(closed, (xs) => [...xs, Exit.isSuccess(exit) ? "success" : Exit.isInterrupted(exit) ? "interrupted" : "failure"])
    ),
    stream
  ))

describe("CheapStream", () => {
  it.effect("unwrap makes the stream only when it is pulled", () =>
    Effect.gen(function*() {
      const made = yield* Ref.make(0)
      const stream = CheapStream.unwrap(Effect.as(Ref.update(made, (n) => n + 1), Stream.make(1, 2)))
      assert.strictEqual(yield* Ref.get(made), 0)
      assert.deepStrictEqual(Chunk.toReadonlyArray(yield* Stream.runCollect(stream)), [1, 2])
      assert.strictEqual(yield* Ref.get(made), 1)
    }))

  it.effect("unwrapScoped closes its scope with the stream's exit: end, failure, interruption, a consumer that stops", () =>
    Effect.gen(function*() {
      const closed = yield* Ref.make<ReadonlyArray<string>>([])
      yield* Stream.runDrain(recorded(closed, Stream.make(1)))
      assert.deepStrictEqual(yield* Ref.get(closed), ["success"])
      const failed = yield* Effect.exit(Stream.runDrain(recorded(closed, Stream.concat(Stream.make(1), Stream.fail("no")))))
      assert.deepStrictEqual(failed, Exit.fail("no"))
      assert.deepStrictEqual(yield* Ref.get(closed), ["success", "failure"])
      const fiber = yield* Effect.fork(Stream.runDrain(recorded(closed, Stream.never)))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(yield* Ref.get(closed), ["success", "failure", "interrupted"])
      const first = yield* Stream.runCollect(Stream.take(recorded(closed, Stream.make(1, 2, 3)), 1))
      assert.deepStrictEqual(Chunk.toReadonlyArray(first), [1])
      assert.strictEqual((yield* Ref.get(closed)).length, 4)
    }))

  it.effect("unwrapScoped closes the scope when the effect itself fails", () =>
    Effect.gen(function*() {
      const closed = yield* Ref.make(0)
      const stream = CheapStream.unwrapScoped(
        Effect.zipRight(
          Effect.addFinalizer(() => Ref.update(closed, (n) => n + 1)),
          Effect.fail("setup") as Effect.Effect<Stream.Stream<number>, string>
        )
      )
      assert.deepStrictEqual(yield* Effect.exit(Stream.runDrain(stream)), Exit.fail("setup"))
      assert.strictEqual(yield* Ref.get(closed), 1)
    }))

  it.effect("of, fromArray and fromArrayEffect emit their items in order; an empty array emits nothing", () =>
    Effect.gen(function*() {
      const all = Stream.concat(
        Stream.concat(CheapStream.of(0), CheapStream.fromArray([1, 2])),
        Stream.concat(CheapStream.fromArrayEffect(Effect.succeed([])), CheapStream.fromArrayEffect(Effect.succeed([3, 4])))
      )
      assert.deepStrictEqual(Chunk.toReadonlyArray(yield* Stream.runCollect(all)), [0, 1, 2, 3, 4])
      assert.deepStrictEqual(yield* Effect.exit(Stream.runDrain(CheapStream.fromArrayEffect(Effect.fail("x")))), Exit.fail("x"))
    }))

  it.effect("repeat runs the streams one after the other until none is made, 20,000 of them without deepening", () =>
    Effect.gen(function*() {
      let n = 0
      const small = CheapStream.repeat(Effect.sync(() => n < 3 ? CheapStream.fromArray([n++, -1]) : undefined))
      assert.deepStrictEqual(Chunk.toReadonlyArray(yield* Stream.runCollect(small)), [0, -1, 1, -1, 2, -1])
      let m = 0
      const many = CheapStream.repeat(Effect.sync(() => m++ < 20_000 ? Stream.ensuring(CheapStream.of(1), Effect.void) : undefined))
      assert.strictEqual(yield* Stream.runCount(many), 20_000)
    }))

  it.effect("repeat stops at the first failure, of a stream or of the effect that makes them", () =>
    Effect.gen(function*() {
      let n = 0
      const failing = CheapStream.repeat(Effect.suspend(() => n++ < 2 ? Effect.succeed(CheapStream.of(n)) : Effect.fail("made")))
      assert.deepStrictEqual(yield* Effect.exit(Stream.runCollect(failing)), Exit.fail("made"))
      assert.strictEqual(n, 3)
      let k = 0
      const inner = CheapStream.repeat(Effect.sync(() => k++ < 5 ? (k === 2 ? Stream.fail("inner") : CheapStream.of(k)) : undefined))
      assert.deepStrictEqual(yield* Effect.exit(Stream.runCollect(inner)), Exit.fail("inner"))
      assert.strictEqual(k, 2)
    }))
})
