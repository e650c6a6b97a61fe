/**
 * The retry layer: decorates a `ModelClient` so that a failed call is made again under a `Schedule`
 * over its failures: Claude Code's (`RetryPolicy.schedule`) by default, or any schedule an embedder
 * passes. Each wait is announced with a `Retrying` notice (Claude Code's `system`/`api_retry`) and,
 * when long, a `Waiting` heartbeat every 30 s, so a consumer can tell waiting from hung. An attempt
 * that failed after streaming part of an answer is retracted first. A 401 asks the `Credentials`
 * service to refresh once, then retries at once. When the schedule stops, the call fails with the
 * last error, recording how many requests were made. Each attempt is a `keel.model.attempt` span;
 * each retry is logged (`Effect.logDebug`).
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import type * as Schedule from "effect/Schedule"
import * as ScheduleDecision from "effect/ScheduleDecision"
import * as ScheduleIntervals from "effect/ScheduleIntervals"
import * as Stream from "effect/Stream"
import * as AttemptLoop from "../internal/attemptLoop.js"
import * as CheapStream from "../internal/cheapStream.js"
import { decorate } from "../internal/decorate.js"
import { spanned } from "../internal/spanned.js"
import * as Credentials from "../model/Credentials.js"
import { type Item, ModelClient } from "../model/ModelClient.js"
import { describe, type ModelError, withAttempts } from "../model/ModelError.js"
import * as ModelNotice from "../model/ModelNotice.js"
import type { ModelRequest } from "../model/ModelRequest.js"
import * as RetryPolicy from "./RetryPolicy.js"

/**
 * When a failed call is made again: a `Schedule` whose input is each failure (it decides whether to
 * go on and how long to wait first), or a function of the request that builds one per call.
 *
 * @category Models
 */
export type RetrySchedule =
  | Schedule.Schedule<unknown, ModelError>
  | ((request: ModelRequest) => Schedule.Schedule<unknown, ModelError>)

/** Options of the retry layer. @category Models */
export interface Options {
  /**
   * The schedule (default: Claude Code's, `RetryPolicy.schedule` with `policy`). Any Effect
   * schedule works, e.g. `Schedule.spaced("2 seconds").pipe(Schedule.intersect(Schedule.recurs(3)))`;
   * it sees only failures that `retryable` lets through. A schedule whose output is a
   * `RetryPolicy.Decision` also tells consumers its retry budget.
   */
  readonly schedule?: RetrySchedule | undefined
  /** The counts and delays of the default schedule (`RetryPolicy.defaults`); ignored with `schedule`. */
  readonly policy?: RetryPolicy.Policy | undefined
  /**
   * Which failures are retried at all (default `RetryPolicy.isRetryable`: not a prompt that is too
   * long, which is compaction's to handle, not a 4xx other than 408/409, ...).
   */
  readonly retryable?: ((error: ModelError, request: ModelRequest) => boolean) | undefined
  /** The retry budget `Retrying` notices report for a schedule that does not say (default: unknown, `null`). */
  readonly maxRetries?: number | undefined
  /** Interval of `Waiting` heartbeats during a wait (30 s). */
  readonly heartbeat?: Duration.DurationInput | undefined
}

/** Whether a schedule's output is Claude Code's policy's `Decision` (which carries the budget). */
const isDecision = (out: unknown): out is RetryPolicy.Decision =>
  Predicate.hasProperty(out, "attempt") && Predicate.hasProperty(out, "maxRetries")

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
 * Decorates `client` with retries. `credentials` is refreshed once per call on a 401
 * (`Credentials.none` when there is nothing to refresh).
 *
 * @category Constructors
 */
export const make = (
  client: ModelClient["Type"],
  options: Options = {},
  credentials: Credentials.Credentials["Type"] = Credentials.none
): ModelClient["Type"] => {
  const policy = options.policy ?? RetryPolicy.defaults
  const scheduleFor = options.schedule === undefined
    ? (request: ModelRequest) => RetryPolicy.schedule(policy, request)
    : typeof options.schedule === "function"
    ? options.schedule
    : (() => {
      const schedule = options.schedule
      return () => schedule
    })()
  const retryable = options.retryable ?? RetryPolicy.isRetryable
  const budget = options.schedule === undefined ? policy.maxRetries : options.maxRetries ?? null
  const heartbeatMs = Duration.toMillis(options.heartbeat ?? HEARTBEAT)
  return ModelClient.of({
    stream: (request) =>
      Stream.suspend(() => {
        const schedule = scheduleFor(request)
        let state: unknown = schedule.initial
        let refreshed = false
        let retries = 0
        const retry = (error: ModelError, delayMs: number, maxRetries: number | null) => {
          retries++
          const notice = ModelNotice.retrying({ attempt: retries, maxRetries, delayMs, error })
          return Effect.as(
            Effect.logDebug("retrying a failed model call").pipe(
              Effect.annotateLogs({ attempt: retries, delayMs, error: describe(error) })
            ),
            AttemptLoop.again(
              delayMs === 0 ? CheapStream.of(notice) : Stream.concat(CheapStream.of(notice), wait(delayMs, heartbeatMs, retries, error))
            )
          )
        }
        const onFailure = (error: ModelError, attempts: number): Effect.Effect<AttemptLoop.Next> =>
          Effect.gen(function*() {
            if (error._tag === "Unauthorized" && !refreshed) {
              refreshed = true
              const renewed = yield* Effect.either(credentials.refresh)
              if (renewed._tag === "Right") return yield* retry(error, 0, budget)
            }
            if (!retryable(error, request)) return AttemptLoop.giveUp(withAttempts(error, attempts))
            const now = yield* Clock.currentTimeMillis
            const [next, out, step] = yield* schedule.step(now, error, state)
            state = next
            if (ScheduleDecision.isDone(step)) {
              yield* Effect.logDebug("model call failed; not retried").pipe(
                Effect.annotateLogs({ attempts, error: describe(error) })
              )
              const refused = isDecision(out) ? out.refusedDelay : undefined
              return AttemptLoop.giveUp(
                withAttempts(error, attempts, refused === undefined ? undefined : Math.ceil(Duration.toMillis(refused)))
              )
            }
            const delayMs = Math.max(0, ScheduleIntervals.start(step.intervals) - now)
            return yield* retry(error, delayMs, isDecision(out) ? out.maxRetries : budget)
          })
        // Each attempt is a span of its own, under the model call's.
        const attempt = (n: number) =>
          spanned(
            "keel.model.attempt",
            { parent: request.span, attributes: { "keel.attempt": n, "keel.model": request.model } },
            () => client.stream(request)
          )
        return AttemptLoop.run(attempt, onFailure, "retry")
      })
  })
}

/**
 * The retry layer over the `ModelClient` below it and its `Credentials`.
 *
 * @category Layers
 */
export const layer = (options: Options = {}): Layer.Layer<ModelClient, never, ModelClient | Credentials.Credentials> =>
  decorate((client, credentials) => make(client, options, credentials))

/**
 * The retry layer with its policy from the environment (`KEEL_MAX_RETRIES`, `KEEL_UNATTENDED_RETRY`,
 * `KEEL_UNATTENDED_BUDGET_MS`).
 *
 * @category Layers
 */
export const layerConfig: Layer.Layer<
  ModelClient,
  import("effect/ConfigError").ConfigError,
  ModelClient | Credentials.Credentials
> = Layer
  .unwrapEffect(Effect.map(RetryPolicy.config, (policy) => layer({ policy })))
