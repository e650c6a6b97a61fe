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
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as Take from "effect/Take"
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
 * Decorates `client` with an idle timeout. The call runs in its own fiber, feeding a queue that the
 * stream takes from, a chunk (one network read) at a time. The idle clock runs while the consumer
 * waits on that queue, from the moment it starts waiting after the last item. One timer fiber per
 * call watches it and puts the warning, then the failure, into the same queue; nothing is timed per
 * chunk, so a chunk costs a queue take and a clock read.
 *
 * @category Constructors
 */
export const make = (client: ModelClient["Type"], timeout: Duration.DurationInput = DEFAULT_TIMEOUT): ModelClient["Type"] => {
  const timeoutMs = Duration.toMillis(timeout)
  const warnMs = Math.floor(timeoutMs / 2)
  return ModelClient.of({
    stream: (request) =>
      Stream.unwrapScoped(Effect.gen(function*() {
        // Closing this stream's scope interrupts the call's fiber (which aborts the request) and the timer.
        const queue = yield* Effect.acquireRelease(Queue.bounded<Take.Take<Item, ModelError>>(4), Queue.shutdown)
        yield* Effect.forkScoped(Stream.runIntoQueue(client.stream(request), queue))
        /** When the consumer started waiting for the next item (`undefined` while it is not waiting). */
        let idleSince: number | undefined
        let warned = false
        const stalled = Take.of<Item>(ModelNotice.streamStalled({ idleMs: warnMs, timeoutMs }))
        const idle = Take.fail<ModelError>(
          new StreamIdle({ message: `Stream idle timeout: no data for ${timeoutMs} ms`, idleMs: timeoutMs })
        )
        // Sleeps until the next deadline of the current wait; a wait that ended meanwhile just means
        // another nap. At most one wake-up per `warnMs` while the stream flows.
        const watch: Effect.Effect<void> = Effect.flatMap(Clock.currentTimeMillis, (now) => {
          if (idleSince === undefined) return Effect.zipRight(Effect.sleep(Duration.millis(warnMs)), watch)
          const idleMs = now - idleSince
          if (!warned && idleMs >= warnMs) {
            warned = true
            return Effect.zipRight(Queue.offer(queue, stalled), watch)
          }
          if (idleMs >= timeoutMs) return Queue.offer(queue, idle)
          return Effect.zipRight(Effect.sleep(Duration.millis((warned ? timeoutMs : warnMs) - idleMs)), watch)
        })
        yield* Effect.forkScoped(watch)
        const received = (take: Take.Take<Item, ModelError>) => {
          // The warning is ours, not the call's: the wait for the next item goes on.
          if (take !== stalled) {
            idleSince = undefined
            warned = false
          }
          return Take.done(take)
        }
        const pull: Effect.Effect<Chunk.Chunk<Item>, Option.Option<ModelError>> = Effect.suspend(() =>
          idleSince !== undefined
            ? Effect.flatMap(Queue.take(queue), received)
            : Effect.flatMap(Clock.currentTimeMillis, (now) => {
              idleSince = now
              return Effect.flatMap(Queue.take(queue), received)
            })
        )
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
