/**
 * The idle watchdog over a hand-timed stream, in virtual time: pings count as activity, the warning
 * comes at half the timeout and the failure exactly at it (one millisecond short of it is fine),
 * the failure is built when it fires, the call below is closed when the consumer is interrupted or
 * stops early, and the call below runs no more than four chunks ahead of its consumer.
 */
import { assert, describe, it } from "@effect/vitest"
import { IdleWatchdog, type ModelClient, ModelError } from "@keel/core"
import { Chunk, Clock, type Duration, Effect, Exit, Fiber, Ref, Stream, TestClock } from "effect"

const ping: ModelClient.Item = { type: "ping" }
const stop: ModelClient.Item = { type: "message_stop" }

/** A model whose one answer is `gaps.length` items, each after its gap (ms), a ping each but the last. */
const timed = (gaps: ReadonlyArray<number>, closed?: Ref.Ref<number>): ModelClient.ModelClient["Type"] => ({
  stream: () => {
    const items = Stream.fromIterable(gaps.map((gap, i) => [gap, i === gaps.length - 1 ? stop : ping] as const)).pipe(
      Stream.mapEffect(([gap, item]) => Effect.as(Effect.sleep(gap), item))
    )
    return closed === undefined ? items : Stream.ensuring(items, Ref.update(closed, (n) => n + 1))
  }
})

const request = { model: "m", max_tokens: 1, messages: [], source: "foreground" } as const

/** Runs the call under the watchdog (10 s), with virtual time run far ahead: what it emitted, and when it ended. */
const run = (client: ModelClient.ModelClient["Type"], timeout: Duration.DurationInput = "10 seconds") =>
  Effect.gen(function*() {
    const watched = IdleWatchdog.make(client, timeout)
    const fiber = yield* Effect.fork(
      Effect.zip(Effect.exit(Stream.runCollect(watched.stream(request))), Clock.currentTimeMillis)
    )
    yield* TestClock.adjust("10 minutes")
    const [exit, endedAt] = yield* Fiber.join(fiber)
    return { exit, endedAt }
  })

const shapes = (chunk: Chunk.Chunk<ModelClient.Item>) =>
  Chunk.toReadonlyArray(chunk).map((i) => (i.type === "notice" ? `${i._tag}` : i.type))

describe("IdleWatchdog", () => {
  it.effect("pings are activity: gaps of 9.999 s never time out, whatever the total", () =>
    Effect.gen(function*() {
      const { endedAt, exit } = yield* run(timed([9_999, 9_999, 9_999, 9_999]))
      assert.deepStrictEqual(Exit.map(exit, shapes), Exit.succeed(["StreamStalled", "ping", "StreamStalled", "ping", "StreamStalled", "ping", "StreamStalled", "message_stop"]))
      assert.strictEqual(endedAt, 4 * 9_999)
    }))

  it.effect("gaps under half the timeout: no warning", () =>
    Effect.gen(function*() {
      const { endedAt, exit } = yield* run(timed([4_999, 4_999, 4_999]))
      assert.deepStrictEqual(Exit.map(exit, shapes), Exit.succeed(["ping", "ping", "message_stop"]))
      assert.strictEqual(endedAt, 3 * 4_999)
    }))

  it.effect("a stall after a ping: the warning at 5 s after it, StreamIdle exactly 10 s after it, built when it fires", () =>
    Effect.gen(function*() {
      const { endedAt, exit } = yield* run(timed([3_000, 60_000]))
      assert.strictEqual(endedAt, 13_000)
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
        assert.instanceOf(error, ModelError.StreamIdle)
        assert.deepStrictEqual(
          [error?._tag, (error as ModelError.StreamIdle).idleMs, (error as ModelError.StreamIdle).message],
          ["StreamIdle", 10_000, "Stream idle timeout: no data for 10000 ms"]
        )
      }
    }))

  it.effect("the warning comes once per wait, at exactly half the timeout", () =>
    Effect.gen(function*() {
      const watched = IdleWatchdog.make(timed([60_000]), "10 seconds")
      const seen = yield* Ref.make<ReadonlyArray<readonly [string, number]>>([])
      const fiber = yield* Effect.fork(Effect.exit(Stream.runForEach(watched.stream(request), (item) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.update(seen, (s) => [...s, [item.type === "notice" ? item._tag : item.type, now] as const]))
      )))
      yield* TestClock.adjust("1 minute")
      yield* Fiber.join(fiber)
      assert.deepStrictEqual(yield* Ref.get(seen), [["StreamStalled", 5_000]])
    }))

  it.effect("interrupting the consumer closes the call below", () =>
    Effect.gen(function*() {
      const closed = yield* Ref.make(0)
      const watched = IdleWatchdog.make(timed([60_000], closed), "90 seconds")
      const fiber = yield* Effect.fork(Stream.runDrain(watched.stream(request)))
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* Ref.get(closed), 0)
      yield* Fiber.interrupt(fiber)
      assert.strictEqual(yield* Ref.get(closed), 1)
    }))

  it.effect("the call below runs at most four chunks ahead of a consumer that does not pull", () =>
    Effect.gen(function*() {
      const pulled = yield* Ref.make(0)
      const client: ModelClient.ModelClient["Type"] = {
        stream: () =>
          Stream.repeatEffectChunk(Effect.as(Ref.update(pulled, (n) => n + 1), Chunk.of<ModelClient.Item>(ping))).pipe(Stream.take(20))
      }
      const taken = yield* Effect.scoped(Effect.gen(function*() {
        const pull = yield* Stream.toPull(IdleWatchdog.make(client).stream(request))
        const first = yield* pull
        for (let i = 0; i < 50; i++) yield* Effect.yieldNow()
        return [Chunk.size(first), yield* Ref.get(pulled)]
      }))
      assert.strictEqual(taken[0], 1)
      assert.isAtMost(taken[1]!, 6)
      assert.isAtLeast(taken[1]!, 4)
    }))
})
