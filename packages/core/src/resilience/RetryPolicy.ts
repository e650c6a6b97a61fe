/**
 * When a failed model call is retried, and after how long: a `Schedule` over the typed `ModelError`
 * union, with Claude Code's constants.
 *
 * - Up to `maxRetries` retries (default 10). Delay `min(500 ms × 2^(n−1), 32 s)` plus up to 25 %
 *   jitter (from Effect's `Random`, so a test fixes it). That backoff is the floor of every delay: a
 *   server's `retry-after-ms` or `retry-after` (seconds or an HTTP date) may lengthen it, never
 *   shorten it (`retry-after: 0` from an overloaded API still waits ~0.5 s, then ~1 s, ...). A
 *   server delay longer than `maxServerDelay` (or, in persistent mode, past the budget) ends the
 *   retries at once; the decision says so (`refusedDelay`) and the error names that delay.
 * - An API that looks unreachable as configured (`ModelError.isUnreachable`: connection refused or
 *   no such host before it ever answered) gets `unreachableRetries` (default 2, about 1.5 s), so a
 *   mistyped `ANTHROPIC_BASE_URL` is reported within seconds, not after minutes of backoff.
 * - `x-should-retry: false` stops; `true` retries whatever the error (but a prompt that is too long
 *   belongs to compaction, and a 401 to the credentials refresh).
 * - Retried: connection errors, 408, 409, 429, 5xx, 529, `StreamIdle`, `StreamTruncated`. Never:
 *   `InvalidRequest`, `Forbidden`, `PromptTooLong`, `Unauthorized`.
 * - `background` requests do not retry `Overloaded`: they would add load to an overloaded service.
 * - `overloadBudget` on the request: give up after that many consecutive `Overloaded` failures, so
 *   that the fallback layer can switch models.
 * - Persistent (unattended) mode: 429 and 529 are retried without a count limit, backoff capped at
 *   5 minutes, a server's delay honoured up to 6 hours, within an optional wall-clock budget.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Match from "effect/Match"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Schedule from "effect/Schedule"
import * as ScheduleDecision from "effect/ScheduleDecision"
import * as ScheduleInterval from "effect/ScheduleInterval"
import { isUnreachable, type ModelError } from "../model/ModelError.js"
import type { ModelRequest } from "../model/ModelRequest.js"

/** Retry counts and delays. @category Models */
export interface Policy {
  /** Retries after the first request (default 10, `KEEL_MAX_RETRIES`). */
  readonly maxRetries: number
  readonly baseDelay: Duration.Duration
  readonly maxDelay: Duration.Duration
  /** Up to this fraction of the backoff is added at random (0.25). */
  readonly jitter: number
  /** The longest server-requested delay honoured; a longer one ends the retries (5 minutes). */
  readonly maxServerDelay: Duration.Duration
  /** Unattended runs: retry 429/529 without a count limit. */
  readonly persistent: Persistent | undefined
  /**
   * Retries of an API that looks unreachable (see `ModelError.isUnreachable`; default
   * {@link UNREACHABLE_RETRIES}, never more than `maxRetries`). Persistent mode keeps `maxRetries`.
   */
  readonly unreachableRetries?: number | undefined
}

/** Retries of an API that never answered and refuses connections or has no such host. @category Constants */
export const UNREACHABLE_RETRIES = 2

/** Persistent mode's limits. @category Models */
export interface Persistent {
  /** Backoff cap for 429/529 (5 minutes). */
  readonly maxDelay: Duration.Duration
  /** The longest server-requested delay honoured (6 hours). */
  readonly maxServerDelay: Duration.Duration
  /** Give up when the next retry would start after this much time since the first request. */
  readonly budget: Duration.Duration | undefined
}

/** Claude Code's defaults. @category Constants */
export const defaults: Policy = {
  maxRetries: 10,
  baseDelay: Duration.millis(500),
  maxDelay: Duration.seconds(32),
  jitter: 0.25,
  maxServerDelay: Duration.minutes(5),
  persistent: undefined
}

/** Persistent mode's defaults. @category Constants */
export const persistentDefaults: Persistent = {
  maxDelay: Duration.minutes(5),
  maxServerDelay: Duration.hours(6),
  budget: undefined
}

/**
 * The policy from the environment: `KEEL_MAX_RETRIES`, `KEEL_UNATTENDED_RETRY=1` (persistent mode)
 * and `KEEL_UNATTENDED_BUDGET_MS` (its wall-clock budget).
 *
 * @category Configuration
 */
export const config: Config.Config<Policy> = Config.all({
  maxRetries: Config.integer("KEEL_MAX_RETRIES").pipe(
    Config.validate({ message: "must be a whole number from 0 to 100", validation: (n) => n >= 0 && n <= 100 }),
    Config.withDefault(defaults.maxRetries)
  ),
  unattended: Config.boolean("KEEL_UNATTENDED_RETRY").pipe(Config.withDefault(false)),
  budgetMs: Config.option(
    Config.integer("KEEL_UNATTENDED_BUDGET_MS").pipe(
      Config.validate({ message: "must be a positive number of milliseconds", validation: (n) => n > 0 })
    )
  )
}).pipe(Config.map(({ budgetMs, maxRetries, unattended }) => ({
  ...defaults,
  maxRetries,
  persistent: unattended
    ? { ...persistentDefaults, budget: Option.getOrUndefined(Option.map(budgetMs, Duration.millis)) }
    : undefined
})))

/** One decision to retry. @category Models */
export interface Decision {
  /** Which retry this is (1 for the first). */
  readonly attempt: number
  readonly delay: Duration.Duration
  /** The retry budget that applies to this error; `null` when unbounded. */
  readonly maxRetries: number | null
  /**
   * On a stop: the server's delay that was longer than the policy waits (over `maxServerDelay`, or
   * past the persistent budget), so the error can say why it was not retried.
   */
  readonly refusedDelay?: Duration.Duration | undefined
}

interface State {
  readonly retries: number
  readonly consecutiveOverloads: number
  readonly startedAt: number | undefined
}

const isOverloadOrRateLimit = (error: ModelError) => error._tag === "Overloaded" || error._tag === "RateLimited"

/**
 * Whether the error's kind is retried at all (before budgets): a decision per `ModelError` tag,
 * exhaustive, so a new kind of failure must be classified here before Keel compiles. A server's
 * `x-should-retry` header decides where it may: `false` stops, `true` retries (but a prompt that is
 * too long belongs to compaction, and a 401 to the credentials refresh).
 *
 * @category Predicates
 */
export const isRetryable = (error: ModelError, request: Pick<ModelRequest, "source">): boolean => {
  const shouldRetry = "headers" in error ? error.headers?.["x-should-retry"] : undefined
  const unlessRefused = () => shouldRetry !== "false"
  return Match.valueTags(error, {
    PromptTooLong: () => false,
    // Bytes over the API's limit, an answer that is not the API's, a URL fetch refuses: the same again.
    RequestTooLarge: () => false,
    MalformedResponse: () => false,
    InvalidBaseUrl: () => false,
    Unauthorized: () => false,
    // Background work (a summary) does not add load to an overloaded service.
    Overloaded: () => request.source !== "background" && shouldRetry !== "false",
    Forbidden: () => shouldRetry === "true",
    InvalidRequest: (e) => shouldRetry === "true" || (shouldRetry !== "false" && (e.status === 408 || e.status === 409)),
    RateLimited: unlessRefused,
    ServerError: unlessRefused,
    ConnectionError: unlessRefused,
    StreamIdle: unlessRefused,
    StreamTruncated: unlessRefused
  })
}

/**
 * The delay a server asked for: `retry-after-ms`, or `retry-after` in seconds or as an HTTP date
 * (relative to `now`). `undefined` when it asked for none.
 *
 * @category Accessors
 */
export const serverDelay = (error: ModelError, now: number): Duration.Duration | undefined => {
  const headers = "headers" in error ? error.headers : undefined
  if (headers === undefined) return undefined
  const ms = headers["retry-after-ms"] !== undefined ? Number(headers["retry-after-ms"]) : Number.NaN
  if (Number.isFinite(ms) && ms >= 0) return Duration.millis(ms)
  const after = headers["retry-after"]
  if (after === undefined) return undefined
  const seconds = Number(after)
  if (after.trim() !== "" && Number.isFinite(seconds) && seconds >= 0) return Duration.seconds(seconds)
  const date = Date.parse(after)
  return Number.isNaN(date) ? undefined : Duration.millis(Math.max(0, date - now))
}

/**
 * The schedule for one model call. Its input is each failure; it stops when the failure is not
 * retried or the budget is spent, and otherwise waits the delay and outputs the `Decision`.
 *
 * @category Constructors
 */
export const schedule = (
  policy: Policy,
  request: Pick<ModelRequest, "source" | "overloadBudget">
): Schedule.Schedule<Decision, ModelError> =>
  Schedule.makeWithState<State, ModelError, Decision>(
    { retries: 0, consecutiveOverloads: 0, startedAt: undefined },
    (now, error, state) =>
      Effect.gen(function*() {
        const startedAt = state.startedAt ?? now
        const retries = state.retries + 1
        const consecutiveOverloads = error._tag === "Overloaded" ? state.consecutiveOverloads + 1 : 0
        const next: State = { retries, consecutiveOverloads, startedAt }
        const stop = [next, { attempt: retries, delay: Duration.zero, maxRetries: null }, ScheduleDecision.done] as const
        if (!isRetryable(error, request)) return stop
        if (request.overloadBudget !== undefined && consecutiveOverloads >= request.overloadBudget) return stop
        const persistent = policy.persistent !== undefined && isOverloadOrRateLimit(error) ? policy.persistent : undefined
        const maxRetries = policy.persistent === undefined && isUnreachable(error)
          ? Math.min(policy.maxRetries, policy.unreachableRetries ?? UNREACHABLE_RETRIES)
          : policy.maxRetries
        if (persistent === undefined && retries > maxRetries) return stop
        const cap = persistent?.maxDelay ?? policy.maxDelay
        const base = Math.min(Duration.toMillis(policy.baseDelay) * Math.pow(2, retries - 1), Duration.toMillis(cap))
        const floor = Math.round(base + (yield* Random.next) * policy.jitter * base)
        const server = serverDelay(error, now)
        const refused = [next, { ...stop[1], refusedDelay: server }, ScheduleDecision.done] as const
        if (server !== undefined && Duration.greaterThan(server, persistent?.maxServerDelay ?? policy.maxServerDelay)) {
          return refused
        }
        // The backoff is the floor; the server may only ask for longer.
        const delay = Duration.millis(Math.max(floor, server === undefined ? 0 : Math.ceil(Duration.toMillis(server))))
        if (
          persistent?.budget !== undefined && now + Duration.toMillis(delay) - startedAt > Duration.toMillis(persistent.budget)
        ) return server !== undefined && Duration.toMillis(server) >= floor ? refused : stop
        const decision: Decision = {
          attempt: retries,
          delay,
          maxRetries: persistent !== undefined ? null : maxRetries
        }
        return [
          next,
          decision,
          ScheduleDecision.continueWith(ScheduleInterval.after(now + Duration.toMillis(delay)))
        ] as const
      })
  )
