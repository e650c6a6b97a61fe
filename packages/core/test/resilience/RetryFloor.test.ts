/**
 * The floor on every retry delay: the schedule's own backoff (500 ms × 2^(n−1) plus its jitter) is
 * the least a retry waits; a server's `retry-after-ms` / `retry-after` (seconds or an HTTP date) may
 * lengthen it, never shorten it; a delay longer than the policy waits ends the retries at once, and
 * the error names it. An overloaded API answering `retry-after: 0` is not hammered, and the fallback
 * model is not asked before the floor's delays have passed. Every instant is exact under `TestClock`,
 * with the jitter fixed at 0.5 (a backoff of b ms waits round(b × 1.125) ms) unless a test fixes it
 * otherwise.
 */
import { assert, describe, it } from "@effect/vitest"
import { ModelClient, ModelError, RetryPolicy, TestModel } from "@keel/core"
import { Duration, Effect, Fiber, Random, Stream, TestClock } from "effect"
import { notices, request, runFor, stack } from "../support/ResilienceStack.js"

type Headers = { readonly "retry-after"?: string; readonly "retry-after-ms"?: string }

const overloaded = (headers?: Headers) =>
  new ModelError.Overloaded({ message: "Overloaded", status: 529, errorType: "overloaded_error", ...(headers ? { headers } : {}) })
const rateLimited = (headers: Headers) =>
  new ModelError.RateLimited({ message: "slow down", status: 429, requestId: "req_429", headers })

/** The delays the `Retrying` notices announced. */
const announced = (items: ReadonlyArray<unknown>) =>
  notices(items as never).flatMap((n) => (n._tag === "Retrying" ? [n.delayMs] : []))

describe("the backoff is the floor of every retry delay", () => {
  it.effect("529 with retry-after: 0, three times: the requests go out at 0, 563, 1688 and 3938 ms, not at once", () =>
    Effect.gen(function*() {
      const { items, outcome, times } = yield* runFor("1 minute")
      assert.strictEqual(outcome._tag, "Right")
      assert.deepStrictEqual(times, [0, 563, 1_688, 3_938])
      assert.deepStrictEqual(announced(items), [563, 1_125, 2_250])
    }).pipe(Effect.provide(stack([
      TestModel.fail(overloaded({ "retry-after": "0" })),
      TestModel.fail(overloaded({ "retry-after": "0" })),
      TestModel.fail(overloaded({ "retry-after": "0" })),
      TestModel.text("ok")
    ]))))

  it.effect("no retry-after: the same instants as retry-after: 0", () =>
    Effect.gen(function*() {
      const { outcome, times } = yield* runFor("1 minute")
      assert.strictEqual(outcome._tag, "Right")
      assert.deepStrictEqual(times, [0, 563, 1_688, 3_938])
    }).pipe(Effect.provide(stack([
      TestModel.fail(overloaded()),
      TestModel.fail(overloaded()),
      TestModel.fail(overloaded()),
      TestModel.text("ok")
    ]))))

  it.effect("the floor is the backoff itself when the jitter draws 0: 500 ms, then 1 s", () =>
    Effect.gen(function*() {
      const { times } = yield* Effect.withRandom(runFor("1 minute"), Random.fixed([0]))
      assert.deepStrictEqual(times, [0, 500, 1_500])
    }).pipe(Effect.provide(stack([
      TestModel.fail(overloaded({ "retry-after": "0" })),
      TestModel.fail(rateLimited({ "retry-after-ms": "0" })),
      TestModel.text("ok")
    ]))))

  it.effect("a server delay shorter than the floor does not shorten it (retry-after-ms: 100 waits 563 ms)", () =>
    Effect.gen(function*() {
      const { times } = yield* runFor("1 minute")
      assert.deepStrictEqual(times, [0, 563])
    }).pipe(Effect.provide(stack([TestModel.fail(rateLimited({ "retry-after-ms": "100" })), TestModel.text("ok")]))))

  it.effect("a longer server delay lengthens it: retry-after: 30 waits 30 s, then an HTTP date 45 s ahead", () =>
    Effect.gen(function*() {
      const { items, outcome, times } = yield* runFor("2 minutes")
      assert.strictEqual(outcome._tag, "Right")
      assert.deepStrictEqual(times, [0, 30_000, 75_000])
      assert.deepStrictEqual(announced(items), [30_000, 45_000])
    }).pipe(Effect.provide(stack([
      TestModel.fail(rateLimited({ "retry-after": "30" })),
      TestModel.fail(rateLimited({ "retry-after": new Date(75_000).toUTCString() })),
      TestModel.text("ok")
    ]))))

  it.effect("a server delay past the policy's 5-minute maximum: no wait, the error names the delay", () =>
    Effect.gen(function*() {
      const { outcome, times } = yield* runFor("2 hours")
      assert.deepStrictEqual(times, [0])
      assert.strictEqual(outcome._tag, "Left")
      if (outcome._tag === "Left") {
        assert.strictEqual(outcome.left._tag === "RateLimited" && outcome.left.refusedDelayMs, 3_600_000)
        assert.strictEqual(
          ModelError.describe(outcome.left),
          "RateLimited (HTTP 429): slow down [request req_429]; the server asked to retry after 60 min, longer than Keel waits, so it gave up"
        )
      }
    }).pipe(Effect.provide(stack([TestModel.fail(rateLimited({ "retry-after": "3600" })), TestModel.text("never")]))))

  it.effect("persistent mode: a server delay past the remaining budget ends the retries at once, naming it", () =>
    Effect.gen(function*() {
      const { outcome, times } = yield* runFor("1 hour")
      // 0, then 2 min later; the next 10-minute wait would end past the 8-minute budget.
      assert.deepStrictEqual(times, [0, 120_000])
      assert.strictEqual(outcome._tag, "Left")
      if (outcome._tag === "Left") assert.include(ModelError.describe(outcome.left), "the server asked to retry after 10 min")
    }).pipe(Effect.provide(stack([
      TestModel.fail(rateLimited({ "retry-after": "120" })),
      TestModel.fail(rateLimited({ "retry-after": "600" })),
      TestModel.text("never")
    ], {
      policy: {
        ...RetryPolicy.defaults,
        persistent: { ...RetryPolicy.persistentDefaults, budget: Duration.minutes(8) }
      }
    }))))
})

describe("the fallback model is not asked before the floor's delays pass", () => {
  const overloadedThenBackup = () =>
    stack([
      ...Array.from({ length: 3 }, () => TestModel.fail(overloaded({ "retry-after": "0" }))),
      TestModel.text("from the backup")
    ], { fallback: ["claude-backup"] })

  it.effect("529 with retry-after: 0 ×3 and a fallback: three attempts at 0, 563, 1688 ms; the fallback at 1688 ms", () =>
    Effect.gen(function*() {
      const { items, outcome, requests, times } = yield* runFor("1 minute")
      assert.strictEqual(outcome._tag, "Right")
      assert.deepStrictEqual(requests.map((r) => r.model), ["claude-primary", "claude-primary", "claude-primary", "claude-backup"])
      assert.deepStrictEqual(times, [0, 563, 1_688, 1_688])
      assert.deepStrictEqual(
        notices(items).map((n) => n._tag),
        ["Retrying", "Retrying", "ModelSwitched"]
      )
    }).pipe(Effect.provide(overloadedThenBackup())))

  it.effect("at 1687 ms only two attempts have been made, and no request has named the fallback", () =>
    Effect.gen(function*() {
      const client = yield* ModelClient.ModelClient
      const model = yield* TestModel.TestModel
      const fiber = yield* Effect.fork(Stream.runDrain(client.stream(request)))
      yield* TestClock.adjust("1687 millis")
      assert.deepStrictEqual((yield* model.requests).map((r) => r.model), ["claude-primary", "claude-primary"])
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual((yield* model.requests).map((r) => r.model), [
        "claude-primary",
        "claude-primary",
        "claude-primary",
        "claude-backup"
      ])
      yield* Fiber.join(fiber)
    }).pipe(Effect.provide(overloadedThenBackup())))
})
