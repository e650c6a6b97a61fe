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
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as Take from "effect/Take"
import { decorate } from "../internal/decorate.js"
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

/** Decorates `client` with an idle timeout. @category Constructors */
export const make = (client: ModelClient["Type"], timeout: Duration.DurationInput = DEFAULT_TIMEOUT): ModelClient["Type"] => {
  const timeoutMs = Duration.toMillis(timeout)
  const warnMs = Math.floor(timeoutMs / 2)
  return ModelClient.of({
    stream: (request) =>
      Stream.unwrapScoped(Effect.gen(function*() {
        // The call runs in its own fiber, feeding a queue; each pull waits on the queue under a timer.
        // Closing this stream's scope interrupts that fiber, which aborts the request.
        const queue = yield* Stream.toQueue(client.stream(request), { capacity: 4 })
        let warned = false
        const pull: Effect.Effect<Chunk.Chunk<Item>, Option.Option<ModelError>> = Effect.suspend(() =>
          Queue.take(queue).pipe(
            Effect.timeoutOption(Duration.millis(warned ? timeoutMs - warnMs : warnMs)),
            Effect.flatMap((taken) => {
              if (Option.isSome(taken)) {
                warned = false
                return Take.done(taken.value)
              }
              if (!warned) {
                warned = true
                return Effect.succeed(Chunk.of<Item>(ModelNotice.streamStalled({ idleMs: warnMs, timeoutMs })))
              }
              return Effect.fail(Option.some<ModelError>(
                new StreamIdle({ message: `Stream idle timeout: no data for ${timeoutMs} ms`, idleMs: timeoutMs })
              ))
            })
          )
        )
        return Stream.repeatEffectChunkOption(pull)
      }))
  })
}

/** The watchdog layer over the `ModelClient` below it. @category Layers */
export const layer = (timeout: Duration.DurationInput = DEFAULT_TIMEOUT): Layer.Layer<ModelClient, never, ModelClient> =>
  decorate((client) => make(client, timeout))

/** The watchdog layer with its timeout from `KEEL_STREAM_IDLE_TIMEOUT_MS`. @category Layers */
export const layerConfig: Layer.Layer<ModelClient, import("effect/ConfigError").ConfigError, ModelClient> = Layer
  .unwrapEffect(Effect.map(timeoutConfig, layer))
