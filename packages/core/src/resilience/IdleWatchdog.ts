/**
 * The stream idle watchdog: decorates a `ModelClient` so that a call whose stream goes quiet fails
 * with `StreamIdle` (which the retry layer above retries) instead of hanging. Anything on the wire
 * counts as activity, `ping` keep-alives included. Halfway to the timeout a `StreamStalled` notice
 * warns the consumer. Closing the stream aborts the request below.
 *
 * Defaults follow Claude Code: 90 s (`KEEL_STREAM_IDLE_TIMEOUT_MS`), warning at 45 s.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as CheapStream from "../internal/cheapStream.js"
import { decorateClient } from "../internal/decorate.js"
import { type Item, ModelClient } from "../model/ModelClient.js"
import { type ModelError, StreamIdle } from "../model/ModelError.js"
import * as ModelNotice from "../model/ModelNotice.js"

/** Claude Code's idle timeout. @category Constants */
export const DEFAULT_TIMEOUT = Duration.seconds(90)

/** `KEEL_STREAM_IDLE_TIMEOUT_MS` (default 90,000; at least 1). @category Configuration */
export const timeoutConfig: Config.Config<Duration.Duration> = Config.integer("KEEL_STREAM_IDLE_TIMEOUT_MS").pipe(
  Config.validate({ message: "must be a positive number of milliseconds", validation: (n) => n > 0 }),
  Config.map(Duration.millis),
  Config.withDefault(DEFAULT_TIMEOUT)
)

/**
 * Decorates `client` with an idle timeout. A call costs two fibers, whatever its length: one runs
 * the call below (so the consumer can be told of a stall while the call is still waiting on the
 * network), handing its chunks (network reads) over in a small buffer that it waits on only when
 * four are unread; one is the timer. The idle clock runs while the consumer waits for the next
 * chunk, from the moment it starts waiting after the last item. The timer sleeps to the next
 * deadline of the current wait and puts the warning, then the failure, in the buffer: nothing is
 * timed per chunk, so a chunk costs a clock read and, when the consumer is waiting, one wake-up.
 * The failure (and its message) is built only when it fires.
 *
 * @category Constructors
 */
export const make = (client: ModelClient["Type"], timeout: Duration.DurationInput = DEFAULT_TIMEOUT): ModelClient["Type"] => {
  const timeoutMs = Duration.toMillis(timeout)
  const warnMs = Math.floor(timeoutMs / 2)
  return ModelClient.of({
    stream: (request) =>
      CheapStream.unwrapScoped(Effect.gen(function*() {
        const clock = yield* Effect.clock
        /** Chunks not yet taken; the warning, when it fires, among them. */
        const buffer: Array<Chunk.Chunk<Item>> = []
        /** How the call ended, once it has (taken after the buffer). */
        let outcome: Cause.Cause<Option.Option<ModelError>> | undefined
        /** The consumer, while it waits for the next item. */
        let waiting: (() => void) | undefined
        /** The producer, while it waits for room in the buffer. */
        let full: (() => void) | undefined
        /** When the consumer started waiting for the next item (`undefined` while it is not waiting). */
        let idleSince: number | undefined
        let warned = false
        const stalled = Chunk.of<Item>(ModelNotice.streamStalled({ idleMs: warnMs, timeoutMs }))
        const wake = () => {
          const resume = waiting
          waiting = undefined
          resume?.()
        }
        const put = (chunk: Chunk.Chunk<Item>) => {
          buffer.push(chunk)
          wake()
        }
        const end = (cause: Cause.Cause<Option.Option<ModelError>>) => {
          if (outcome === undefined) outcome = cause
          wake()
        }
        // The call below, pulled in its own fiber; closing this stream's scope interrupts the fiber, then
        // closes the call (which aborts the request).
        const below = yield* Stream.toPull(client.stream(request))
        const room = Effect.async<void>((resume) => {
          full = () => resume(Effect.void)
        })
        // Not `Effect.forever`, which yields to the scheduler after every chunk: the call below waits
        // on the network between reads already, and the buffer bounds how far it runs ahead.
        const produce: Effect.Effect<never, Option.Option<ModelError>> = Effect.flatMap(below, (chunk) => {
          put(chunk)
          return buffer.length < 4 ? produce : Effect.zipRight(room, produce)
        })
        yield* Effect.forkScoped(produce.pipe(Effect.catchAllCause((cause) => Effect.sync(() => end(cause)))))
        // Sleeps until the next deadline of the current wait; a wait that ended meanwhile just means
        // another nap. At most one wake-up per `warnMs` while the stream flows.
        const watch: Effect.Effect<void> = Effect.suspend(() => {
          const now = clock.unsafeCurrentTimeMillis()
          if (idleSince === undefined) return Effect.zipRight(Effect.sleep(Duration.millis(warnMs)), watch)
          const idleMs = now - idleSince
          if (!warned && idleMs >= warnMs) {
            warned = true
            put(stalled)
            return watch
          }
          if (idleMs >= timeoutMs) {
            end(Cause.fail(Option.some(new StreamIdle({ message: `Stream idle timeout: no data for ${timeoutMs} ms`, idleMs: timeoutMs }))))
            return Effect.void
          }
          return Effect.zipRight(Effect.sleep(Duration.millis((warned ? timeoutMs : warnMs) - idleMs)), watch)
        })
        yield* Effect.forkScoped(watch)
        /** The next item, or how the call ended; `undefined` when there is nothing yet. */
        const take = (): Effect.Effect<Chunk.Chunk<Item>, Option.Option<ModelError>> | undefined => {
          const chunk = buffer.shift()
          if (chunk !== undefined) {
            // The warning is ours, not the call's: the wait for the next item goes on.
            if (chunk !== stalled) {
              idleSince = undefined
              warned = false
            }
            const resume = full
            full = undefined
            resume?.()
            return Effect.succeed(chunk)
          }
          return outcome === undefined ? undefined : Effect.failCause(outcome)
        }
        const pull: Effect.Effect<Chunk.Chunk<Item>, Option.Option<ModelError>> = Effect.suspend(() => {
          const next = take()
          if (next !== undefined) return next
          if (idleSince === undefined) idleSince = clock.unsafeCurrentTimeMillis()
          return Effect.async<Chunk.Chunk<Item>, Option.Option<ModelError>>((resume) => {
            waiting = () => resume(pull)
            return Effect.sync(() => {
              waiting = undefined
            })
          })
        })
        return Stream.repeatEffectChunkOption(pull)
      }))
  })
}

/** The watchdog layer over the `ModelClient` below it. @category Layers */
export const layer = (timeout: Duration.DurationInput = DEFAULT_TIMEOUT): Layer.Layer<ModelClient, never, ModelClient> =>
  decorateClient((client) => make(client, timeout))

/** The watchdog layer with its timeout from `KEEL_STREAM_IDLE_TIMEOUT_MS`. @category Layers */
export const layerConfig: Layer.Layer<ModelClient, import("effect/ConfigError").ConfigError, ModelClient> = Layer
  .unwrapEffect(Effect.map(timeoutConfig, layer))
