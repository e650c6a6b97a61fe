/**
 * Signals: the first signal interrupts and arms the grace timer; the exit comes at GRACE_MS on the
 * Clock if the work has not ended; a second signal exits at once, with the first one's code.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Ref, TestClock } from "effect"
import * as Signals from "../src/Signals.js"

const harness = Effect.gen(function*() {
  const interrupts = yield* Ref.make<Array<string>>([])
  const exits = yield* Ref.make<Array<number>>([])
  const handler = yield* Signals.make({
    interrupt: (signal) => Ref.update(interrupts, (xs) => [...xs, signal]),
    exit: (code) => Ref.update(exits, (xs) => [...xs, code])
  })
  return { handler, interrupts: Ref.get(interrupts), exits: Ref.get(exits) }
})

describe("Signals", () => {
  it("exit codes are 128 + the signal's number", () => {
    assert.deepStrictEqual(Signals.EXIT_CODES, { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 })
  })

  it.scoped("SIGTERM interrupts at once, and exits 143 at GRACE_MS if finishing takes longer", () =>
    Effect.gen(function*() {
      const h = yield* harness
      yield* h.handler.signal("SIGTERM")
      assert.deepStrictEqual(yield* h.interrupts, ["SIGTERM"])
      assert.strictEqual(yield* h.handler.code, 143)
      yield* TestClock.adjust(Signals.GRACE_MS - 1)
      assert.deepStrictEqual(yield* h.exits, [])
      yield* TestClock.adjust(1)
      assert.deepStrictEqual(yield* h.exits, [143])
    }))

  it.scoped("a second signal while finishing exits at once, with the first signal's code; no second interrupt", () =>
    Effect.gen(function*() {
      const h = yield* harness
      yield* h.handler.signal("SIGHUP")
      yield* TestClock.adjust(1_000)
      yield* h.handler.signal("SIGTERM")
      assert.deepStrictEqual(yield* h.exits, [129])
      assert.deepStrictEqual(yield* h.interrupts, ["SIGHUP"])
    }))

  it.effect("the grace timer ends with the scope: work that finished in time is not cut by it", () =>
    Effect.gen(function*() {
      const exits = yield* Ref.make<Array<number>>([])
      yield* Effect.scoped(Effect.gen(function*() {
        const handler = yield* Signals.make({ interrupt: () => Effect.void, exit: (code) => Ref.update(exits, (xs) => [...xs, code]) })
        yield* handler.signal("SIGINT")
      }))
      yield* TestClock.adjust(Signals.GRACE_MS * 2)
      assert.deepStrictEqual(yield* Ref.get(exits), [])
    }))
})
