/** The virtual-time driver: runs to the end without a duration guess, honours real waits, and is bounded. */
import { assert, describe, it } from "@effect/vitest"
import { VirtualTime } from "@keel/core/testing"
import { Clock, Effect, Either } from "effect"

describe("VirtualTime.run", () => {
  it.effect("jumps from sleep to sleep: 3 hours of backoffs end at once, at the exact virtual times", () =>
    Effect.gen(function*() {
      const times: Array<number> = []
      const result = yield* VirtualTime.run(Effect.gen(function*() {
        for (const ms of [500, 1_000, 3 * 60 * 60 * 1_000]) {
          yield* Effect.sleep(ms)
          times.push(yield* Clock.currentTimeMillis)
        }
        return "done"
      }))
      assert.strictEqual(result, "done")
      assert.deepStrictEqual(times, [500, 1_500, 1_500 + 3 * 60 * 60 * 1_000])
    }))

  it.effect("a wait outside the clock (a real timer) is waited for in real time, the clock untouched", () =>
    Effect.gen(function*() {
      const result = yield* VirtualTime.run(Effect.gen(function*() {
        yield* Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 30)))
        return yield* Clock.currentTimeMillis
      }))
      assert.strictEqual(result, 0)
    }))

  it.effect("real work in flight holds the clock: a virtual timeout cannot fire under it; without `busy` it does", () =>
    Effect.gen(function*() {
      const race = (busy: boolean) => {
        let inFlight = false
        const work = Effect.acquireUseRelease(
          Effect.sync(() => (inFlight = true)),
          () => Effect.promise(() => new Promise<string>((resolve) => setTimeout(() => resolve("real"), 50))),
          () => Effect.sync(() => (inFlight = false))
        ).pipe(Effect.timeoutTo({ duration: "1 minute", onTimeout: () => "timed out", onSuccess: (s) => s }))
        return VirtualTime.run(work, busy ? { busy: () => inFlight } : {})
      }
      assert.strictEqual(yield* race(true), "real")
      // Unannounced real work: the clock moves on the first idle turn and the timeout wins.
      assert.strictEqual(yield* race(false), "timed out")
    }))

  it.effect("bounded: a loop that never ends stops at the virtual budget, typed", () =>
    Effect.gen(function*() {
      const result = yield* Effect.either(VirtualTime.run(Effect.forever(Effect.sleep("1 hour")), { maxVirtual: "1 day" }))
      assert.isTrue(Either.isLeft(result) && result.left._tag === "VirtualTimeExhausted" && result.left.virtualMs === 24 * 60 * 60 * 1_000)
    }))

  it.effect("bounded: waiting on nothing that can ever come stops after the idle budget, typed", () =>
    Effect.gen(function*() {
      const result = yield* Effect.either(VirtualTime.run(Effect.never, { maxIdleTurns: 20 }))
      assert.isTrue(Either.isLeft(result) && result.left._tag === "VirtualTimeExhausted")
    }))
})
