/**
 * The retry layer: decorates a `ModelClient` so that a failed call is made again under the
 * `RetryPolicy` schedule. Each wait is announced with a `Retrying` notice (Claude Code's
 * `system`/`api_retry`) and, when long, a `Waiting` heartbeat every 30 s, so a consumer can tell
 * waiting from hung. An attempt that failed after streaming part of an answer is retracted first.
 * A 401 asks the `Credentials` service (when there is one) to refresh once, then retries at once.
 * When the schedule stops, the call fails with the last error, recording how many requests were made.
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ScheduleDecision from "effect/ScheduleDecision"
import * as ScheduleIntervals from "effect/ScheduleIntervals"
import * as Stream from "effect/Stream"
import * as AttemptLoop from "../internal/attemptLoop.js"
import { decorate } from "../internal/decorate.js"
import { Credentials } from "../model/Credentials.js"
import { type Item, ModelClient } from "../model/ModelClient.js"
import { type ModelError, withAttempts } from "../model/ModelError.js"
import * as ModelNotice from "../model/ModelNotice.js"
import * as RetryPolicy from "./RetryPolicy.js"

/** Options of the retry layer. @category Models */
export interface Options {
  readonly policy?: RetryPolicy.Policy | undefined
  /** Interval of `Waiting` heartbeats during a wait (30 s). */
  readonly heartbeat?: Duration.DurationInput | undefined
}

/** Claude Code's heartbeat interval while waiting to retry. @category Constants */
export const HEARTBEAT = Duration.seconds(30)

/** Sleeps `delayMs`, emitting a `Waiting` notice at every heartbeat before the end. */
const wait = (delayMs: number, heartbeatMs: number, attempt: number, error: ModelError): Stream.Stream<Item> =>
  Stream.suspend(() => {
    let waited = 0
    return Stream.repeatEffectChunkOption(Effect.suspend(() => {
      if (waited >= delayMs) return Effect.fail(Option.none())
      const step = Math.min(heartbeatMs, delayMs - waited)
      return Effect.as(Effect.sleep(Duration.millis(step)), undefined).pipe(Effect.map(() => {
        waited += step
        return waited < delayMs
          ? Chunk.of<Item>(ModelNotice.waiting({ attempt, waitedMs: waited, remainingMs: delayMs - waited, error }))
          : Chunk.empty<Item>()
      }))
    }))
  })

/**
 * Decorates `client` with retries. `credentials`, when given, is refreshed once per call on a 401.
 *
 * @category Constructors
 */
export const make = (
  client: ModelClient["Type"],
  options: Options = {},
  credentials?: Credentials["Type"]
): ModelClient["Type"] => {
  const policy = options.policy ?? RetryPolicy.defaults
  const heartbeatMs = Duration.toMillis(options.heartbeat ?? HEARTBEAT)
  return ModelClient.of({
    stream: (request) =>
      Stream.suspend(() => {
        const schedule = RetryPolicy.schedule(policy, request)
        let state: unknown = schedule.initial
        let refreshed = false
        let retries = 0
        const onFailure = (error: ModelError, attempts: number): Effect.Effect<AttemptLoop.Next> =>
          Effect.gen(function*() {
            if (error._tag === "Unauthorized" && credentials !== undefined && !refreshed) {
              refreshed = true
              const renewed = yield* Effect.either(credentials.refresh)
              if (renewed._tag === "Right") {
                retries++
                const notice = ModelNotice.retrying({
                  attempt: retries,
                  maxRetries: policy.maxRetries,
                  delayMs: 0,
                  error
                })
                return AttemptLoop.again(Stream.make(notice))
              }
            }
            const now = yield* Clock.currentTimeMillis
            const [next, decision, step] = yield* schedule.step(now, error, state)
            state = next
            if (ScheduleDecision.isDone(step)) return AttemptLoop.giveUp(withAttempts(error, attempts))
            const delayMs = Math.max(0, ScheduleIntervals.start(step.intervals) - now)
            retries++
            const notice = ModelNotice.retrying({
              attempt: retries,
              maxRetries: decision.maxRetries,
              delayMs,
              error
            })
            return AttemptLoop.again(Stream.concat(Stream.make(notice), wait(delayMs, heartbeatMs, retries, error)))
          })
        return AttemptLoop.run(() => client.stream(request), onFailure, "retry")
      })
  })
}

/**
 * The retry layer over the `ModelClient` below it (and its `Credentials`, when provided).
 *
 * @category Layers
 */
export const layer = (options: Options = {}): Layer.Layer<ModelClient, never, ModelClient> =>
  decorate((client, credentials) => make(client, options, credentials))

/**
 * The retry layer with its policy from the environment (`KEEL_MAX_RETRIES`, `KEEL_UNATTENDED_RETRY`,
 * `KEEL_UNATTENDED_BUDGET_MS`).
 *
 * @category Layers
 */
export const layerConfig: Layer.Layer<ModelClient, import("effect/ConfigError").ConfigError, ModelClient> = Layer
  .unwrapEffect(Effect.map(RetryPolicy.config, (policy) => layer({ policy })))
