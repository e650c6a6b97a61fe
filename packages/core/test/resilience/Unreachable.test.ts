/**
 * An API that looks unreachable as configured (a mistyped `ANTHROPIC_BASE_URL`, no network): a
 * connection refused, or a host not found, before the API ever answered gets two quick retries
 * instead of ten (about three minutes of backoff), then fails with a message that names the URL and
 * says what to check. Classified from the socket error's code and the client's history, never from
 * message text. Waits are asserted at their exact `TestClock` instants, with the jitter fixed at 0.5
 * (a backoff of b ms waits round(b × 1.125) ms).
 */
import { assert, describe, it } from "@effect/vitest"
import { AnthropicModel, ModelClient, ModelError, ModelErrorClassifier, RetryPolicy, TestModel } from "@keel/core"
import { APIConnectionError } from "@anthropic-ai/sdk"
import { Chunk, Effect, Fiber, Redacted, Stream, TestClock } from "effect"
import * as FakeAnthropic from "../../../../test/support/FakeAnthropic.js"
import { unusedPort } from "../../../../test/support/Ports.js"
import { request, runFor, stack } from "../support/ResilienceStack.js"

const URL = "http://127.0.0.1:9"

const refused = (firstContact: boolean) =>
  new ModelError.ConnectionError({
    message: "Could not reach the API: ECONNREFUSED",
    cause: "connect ECONNREFUSED 127.0.0.1:9",
    code: "ECONNREFUSED",
    url: URL,
    firstContact
  })

const reset = new ModelError.ConnectionError({
  message: "Could not reach the API: ECONNRESET",
  cause: "read ECONNRESET",
  code: "ECONNRESET",
  url: URL,
  firstContact: true
})

const noticesUntilFailure = Effect.gen(function*() {
  const client = yield* ModelClient.ModelClient
  const fiber = yield* Effect.fork(
    Stream.runCollect(Stream.either(client.stream(request))).pipe(
      Effect.map((c) =>
        Chunk.toReadonlyArray(c).flatMap((e) => e._tag === "Right" && e.right.type === "notice" ? [e.right] : [])
      )
    )
  )
  yield* TestClock.adjust("10 minutes")
  return yield* Fiber.join(fiber)
})

const tenRetries = [500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 32_000, 32_000, 32_000].map((b) => Math.round(b * 1.125))
const gaps = (times: ReadonlyArray<number>) => times.slice(1).map((t, i) => t - times[i]!)

describe("An unreachable API under TestClock", () => {
  it.effect("refused on first contact: two quick retries, the 3rd request at t = 1.688 s, then the error names the URL", () =>
    Effect.gen(function*() {
      const { outcome, times } = yield* runFor("10 minutes")
      assert.deepStrictEqual(times, [0, 563, 1_688])
      assert.strictEqual(outcome._tag, "Left")
      if (outcome._tag === "Left") {
        assert.strictEqual(outcome.left._tag, "ConnectionError")
        assert.strictEqual(outcome.left.attempts, 3)
        assert.strictEqual(
          ModelError.describe(outcome.left),
          `Could not reach the API at ${URL} (ECONNREFUSED: connection refused) after 3 attempts. ` +
            "Check ANTHROPIC_BASE_URL and your network connection."
        )
      }
    }).pipe(Effect.provide(stack(Array.from({ length: 4 }, () => TestModel.fail(refused(true)))))))

  it.effect("the api_retry notices announce the short budget: retries 1/2 and 2/2", () =>
    Effect.gen(function*() {
      const notices = yield* noticesUntilFailure
      assert.deepStrictEqual(
        notices.map((n) => n._tag === "Retrying" ? [n.attempt, n.maxRetries, n.delayMs] : n._tag),
        [[1, 2, 563], [2, 2, 1_125]]
      )
      // A retry's notice says what failed, without the advice that goes with the final failure.
      const first = notices[0]!
      assert.strictEqual(
        first._tag === "Retrying" ? ModelError.describe(first.error) : "",
        `Could not reach the API at ${URL} (ECONNREFUSED: connection refused)`
      )
    }).pipe(Effect.provide(stack(Array.from({ length: 4 }, () => TestModel.fail(refused(true)))))))

  it.effect("a host that does not exist (ENOTFOUND) gets the same short budget; success on the 3rd request at t = 1.688 s", () =>
    Effect.gen(function*() {
      const { outcome, times } = yield* runFor("1 minute")
      assert.strictEqual(outcome._tag, "Right")
      assert.deepStrictEqual(times, [0, 563, 1_688])
    }).pipe(Effect.provide(stack([
      TestModel.fail(new ModelError.ConnectionError({ message: "x", code: "ENOTFOUND", url: URL, firstContact: true })),
      TestModel.fail(new ModelError.ConnectionError({ message: "x", code: "ENOTFOUND", url: URL, firstContact: true })),
      TestModel.text("ok")
    ]))))

  it.effect("refused after the API has answered before (a restart, a blip): the full budget of 10 retries", () =>
    Effect.gen(function*() {
      const { outcome, times } = yield* runFor("10 minutes")
      assert.strictEqual(outcome._tag, "Left")
      assert.deepStrictEqual(gaps(times), tenRetries)
    }).pipe(Effect.provide(stack(Array.from({ length: 11 }, () => TestModel.fail(refused(false)))))))

  it.effect("a reset connection (ECONNRESET) is not 'unreachable': the full budget of 10 retries", () =>
    Effect.gen(function*() {
      const { times } = yield* runFor("10 minutes")
      assert.deepStrictEqual(gaps(times), tenRetries)
    }).pipe(Effect.provide(stack(Array.from({ length: 11 }, () => TestModel.fail(reset))))))

  it.effect("persistent (unattended) mode keeps the full budget: the 11th request at t = 179.438 s", () =>
    Effect.gen(function*() {
      const { times } = yield* runFor("10 minutes")
      assert.strictEqual(times.length, 11)
      assert.strictEqual(times.at(-1), tenRetries.reduce((a, b) => a + b, 0))
      assert.strictEqual(times.at(-1), 179_438)
    }).pipe(Effect.provide(stack(Array.from({ length: 11 }, () => TestModel.fail(refused(true))), {
      policy: { ...RetryPolicy.defaults, persistent: RetryPolicy.persistentDefaults }
    }))))

  it.effect("unreachableRetries sets the budget, never above maxRetries", () =>
    Effect.gen(function*() {
      const { times } = yield* runFor("1 minute")
      // maxRetries 1 caps unreachableRetries 5: one retry at 0.563 s.
      assert.deepStrictEqual(times, [0, 563])
    }).pipe(Effect.provide(stack(Array.from({ length: 4 }, () => TestModel.fail(refused(true))), {
      policy: { ...RetryPolicy.defaults, maxRetries: 1, unreachableRetries: 5 }
    }))))
})

describe("ModelError.isUnreachable", () => {
  it("classifies by the socket error's code and first contact, not by the message", () => {
    assert.isTrue(ModelError.isUnreachable(refused(true)))
    assert.isFalse(ModelError.isUnreachable(refused(false)))
    assert.isFalse(ModelError.isUnreachable(reset))
    // A message that reads like a refusal, without the code, is not classified as one.
    assert.isFalse(ModelError.isUnreachable(new ModelError.ConnectionError({ message: "ECONNREFUSED", firstContact: true })))
    assert.isFalse(ModelError.isUnreachable(new ModelError.ServerError({ message: "ECONNREFUSED", status: 503 })))
  })

  it("fromUnknown takes the code from the fetch error's cause chain", () => {
    const socket = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" })
    const error = ModelErrorClassifier.fromUnknown(new APIConnectionError({ cause: new TypeError("fetch failed", { cause: socket }) }))
    assert.strictEqual(error._tag, "ConnectionError")
    assert.strictEqual(error._tag === "ConnectionError" ? error.code : undefined, "ECONNREFUSED")
  })
})

describe("AnthropicModel marks first contact", () => {
  it.live("a refused connection before any answer is a first contact naming the base URL; after an answer it is not", () =>
    Effect.gen(function*() {
      const fake = yield* Effect.promise(() => FakeAnthropic.start([FakeAnthropic.textReply("hi")]))
      const url = fake.url
      const client = yield* ModelClient.ModelClient.pipe(
        Effect.provide(AnthropicModel.layer({ apiKey: Redacted.make("k"), baseURL: url }))
      )
      const port = yield* Effect.promise(unusedPort)
      // A second client, pointed at nothing.
      const nowhere = yield* ModelClient.ModelClient.pipe(
        Effect.provide(AnthropicModel.layer({ apiKey: Redacted.make("k"), baseURL: `http://127.0.0.1:${port}` }))
      )
      const first = yield* Effect.flip(Stream.runDrain(nowhere.stream(request)))
      assert.deepStrictEqual(
        first._tag === "ConnectionError" ? [first.code, first.url, first.firstContact] : first._tag,
        ["ECONNREFUSED", `http://127.0.0.1:${port}`, true]
      )
      assert.isTrue(ModelError.isUnreachable(first))
      // The first client gets an answer, then its server goes away.
      yield* Stream.runDrain(client.stream(request))
      yield* Effect.promise(() => fake.close())
      const later = yield* Effect.flip(Stream.runDrain(client.stream(request)))
      assert.deepStrictEqual(
        later._tag === "ConnectionError" ? [later.code, later.firstContact] : later._tag,
        ["ECONNREFUSED", false]
      )
      assert.isFalse(ModelError.isUnreachable(later))
    }).pipe(Effect.scoped))
})

