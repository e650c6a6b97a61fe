/**
 * Runs an effect to its end under `TestClock` without guessing how long it takes: whenever nothing
 * can run, virtual time jumps to the next sleep that is due (a backoff, a watchdog, a tool's
 * recorded duration), so a session with minutes of waits finishes in milliseconds. Work outside
 * the clock (a real process, a file) gets real time: the driver lets the event loop turn before it
 * moves the clock, and holds the clock while `busy` says real work is in flight (a live tool call),
 * so a timeout cannot fire in virtual time under work that takes real time. Bounded: past
 * `maxVirtual` of virtual time, or `maxIdleTurns` turns in a row with nothing due and no end, it
 * stops with `VirtualTimeExhausted`.
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import type { TestServices } from "effect/TestServices"

/** The effect did not end within the driver's budget. @category Errors */
export class VirtualTimeExhausted extends Schema.TaggedError<VirtualTimeExhausted>("@keel/VirtualTimeExhausted")(
  "VirtualTimeExhausted",
  { message: Schema.String, virtualMs: Schema.Number }
) {}

/** Options of {@link run}. @category Models */
export interface Options {
  /** Most virtual time to let pass (default 24 hours). */
  readonly maxVirtual?: Duration.DurationInput | undefined
  /** Most event-loop turns in a row with nothing due and no end (default 10,000: a few seconds of real waiting). */
  readonly maxIdleTurns?: number | undefined
  /** Whether work outside the clock is in flight now; while it is, virtual time stands still. */
  readonly busy?: (() => boolean) | undefined
}

/**
 * One turn of the real event loop, outside `Clock`: a real zero timer, queued after any the fibers
 * queued (Effect's scheduler yields through timers too), so what they queued runs first.
 */
const eventLoopTurn = Effect.async<void>((resume) => {
  const t = setTimeout(() => resume(Effect.void), 0)
  return Effect.sync(() => clearTimeout(t))
})

/**
 * Runs `effect` in a fiber and drives `TestClock` until it ends: its result, or its failure.
 *
 * @category Time
 */
export const run = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  options: Options = {}
): Effect.Effect<A, E | VirtualTimeExhausted, R | TestServices> =>
  Effect.gen(function*() {
    const maxVirtual = Duration.toMillis(options.maxVirtual ?? Duration.hours(24))
    const maxIdle = options.maxIdleTurns ?? 10_000
    const start = yield* TestClock.currentTimeMillis
    const fiber = yield* Effect.fork(effect)
    let idle = 0
    while (true) {
      // Let every fiber that can run, run; then the event loop, for what waits outside the clock.
      yield* Effect.yieldNow()
      yield* eventLoopTurn
      const done = yield* Fiber.poll(fiber)
      if (Option.isSome(done)) return yield* done.value
      const due = yield* TestClock.sleeps()
      const now = yield* TestClock.currentTimeMillis
      if (Chunk.isEmpty(due) || options.busy?.() === true) {
        if (++idle > maxIdle) {
          yield* Fiber.interrupt(fiber)
          return yield* new VirtualTimeExhausted({
            message: `Nothing was due (or real work held the clock) for ${maxIdle} event-loop turns and the run had not ended`,
            virtualMs: now - start
          })
        }
        continue
      }
      idle = 0
      const next = Math.min(...Chunk.toReadonlyArray(due))
      if (next - start > maxVirtual) {
        yield* Fiber.interrupt(fiber)
        return yield* new VirtualTimeExhausted({
          message: `The run had not ended after ${Duration.format(Duration.millis(maxVirtual))} of virtual time`,
          virtualMs: now - start
        })
      }
      yield* TestClock.adjust(Duration.millis(Math.max(0, next - now)))
    }
  })
