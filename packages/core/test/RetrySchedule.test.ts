/**
 * `Retry` over any `Schedule`: an embedder's schedule decides when the requests go out (virtual
 * time, exact instants), Claude Code's is the default, and failures that are never retried stay so.
 */
import { assert, describe, it } from "@effect/vitest"
import { Message, ModelClient, type ModelNotice, type ModelRequest, Retry, TestModel } from "@keel/core"
import { ModelError } from "@keel/core"
import { Testing } from "@keel/core/testing"
import { Chunk, Duration, Effect, Layer, Schedule, Stream } from "effect"

const request: ModelRequest.ModelRequest = {
  model: "claude-test",
  max_tokens: 100,
  messages: [Message.user("hi")],
  source: "foreground"
}

const overloaded = new ModelError.Overloaded({ message: "Overloaded", status: 529 })
const serverError = new ModelError.ServerError({ message: "Internal error", status: 500 })
const tooLong = new ModelError.PromptTooLong({ message: "prompt is too long", status: 400 })

const retrying = (script: ReadonlyArray<TestModel.ScriptItem>, options: Retry.Options) =>
  Layer.mergeAll(Retry.layer(options).pipe(Layer.provideMerge(TestModel.layer(script))), Testing.fixedRandom())

/** Runs the request for `time` of virtual time: what it emitted (or its error) and when each request went out. */
const run = (time: Duration.DurationInput) =>
  Effect.gen(function*() {
    const client = yield* ModelClient.ModelClient
    const outcome = yield* Testing.runFor(time, Effect.either(Stream.runCollect(client.stream(request))))
    const items = outcome._tag === "Right" ? Chunk.toReadonlyArray(outcome.right) : []
    const notices = items.filter((i): i is ModelNotice.ModelNotice => i.type === "notice")
    return { outcome, notices, times: yield* Testing.requestTimes }
  })

describe("Retry with a Schedule of one's own", () => {
  it.effect("a fixed spacing: the requests go out at 0, 2, 4 and 6 s, and the 4th answers", () =>
    Effect.gen(function*() {
      const { notices, outcome, times } = yield* run("1 minute")
      assert.deepStrictEqual(times, [0, 2000, 4000, 6000])
      assert.strictEqual(outcome._tag, "Right")
      const retries = notices.filter((n) => n._tag === "Retrying")
      assert.deepStrictEqual(retries.map((n) => n._tag === "Retrying" ? [n.attempt, n.delayMs, n.maxRetries] : []), [
        [1, 2000, 3],
        [2, 2000, 3],
        [3, 2000, 3]
      ])
    }).pipe(Effect.provide(retrying(
      [TestModel.fail(overloaded), TestModel.fail(serverError), TestModel.fail(overloaded), TestModel.text("ok")],
      { schedule: Schedule.spaced("2 seconds").pipe(Schedule.intersect(Schedule.recurs(3))), maxRetries: 3 }
    ))))

  it.effect("an exponential schedule: requests at 0, 1, 4 and 13 s; when it is spent the call fails with the attempts", () =>
    Effect.gen(function*() {
      const { outcome, times } = yield* run("1 minute")
      assert.deepStrictEqual(times, [0, 1000, 4000, 13000])
      assert.strictEqual(outcome._tag, "Left")
      if (outcome._tag === "Left") {
        assert.strictEqual(outcome.left._tag, "ServerError")
        assert.strictEqual(outcome.left.attempts, 4)
      }
    }).pipe(Effect.provide(retrying(
      Array.from({ length: 4 }, () => TestModel.fail(serverError)),
      { schedule: Schedule.exponential("1 second", 3).pipe(Schedule.intersect(Schedule.recurs(3))) }
    ))))

  it.effect("a schedule per request: background work is not retried, the user's turn is", () =>
    Effect.gen(function*() {
      const client = yield* ModelClient.ModelClient
      const background = yield* Effect.either(Stream.runCollect(client.stream({ ...request, source: "background" })))
      assert.strictEqual(background._tag, "Left")
      const { outcome, times } = yield* run("10 seconds")
      assert.strictEqual(outcome._tag, "Right")
      assert.deepStrictEqual(times, [0, 0, 500])
    }).pipe(Effect.provide(retrying(
      [TestModel.fail(serverError), TestModel.fail(serverError), TestModel.text("ok")],
      {
        schedule: (r) => r.source === "background" ? Schedule.stop : Schedule.spaced("500 millis").pipe(Schedule.intersect(Schedule.recurs(2)))
      }
    ))))

  it.effect("failures that are never retried (a prompt that is too long) are not, whatever the schedule", () =>
    Effect.gen(function*() {
      const { outcome, times } = yield* run("1 minute")
      assert.deepStrictEqual(times, [0])
      assert.strictEqual(outcome._tag === "Left" ? outcome.left._tag : "none", "PromptTooLong")
    }).pipe(Effect.provide(retrying([TestModel.fail(tooLong)], { schedule: Schedule.forever }))))

  it.effect("without a schedule, Claude Code's: 500 ms × 2^(n-1) plus 25 % jitter (12.5 % at the fixed 0.5)", () =>
    Effect.gen(function*() {
      const { times } = yield* run("1 minute")
      // 0, then +563 (500 × 1.125), then +1125 (1000 × 1.125), then +2250.
      assert.deepStrictEqual(times, [0, 563, 1688, 3938])
    }).pipe(Effect.provide(retrying(
      [TestModel.fail(overloaded), TestModel.fail(overloaded), TestModel.fail(overloaded), TestModel.text("ok")],
      {}
    ))))

  it.effect("the retry budget an embedder's schedule reports is unknown (null) unless it says", () =>
    Effect.gen(function*() {
      const { notices } = yield* run(Duration.seconds(5))
      const first = notices.find((n) => n._tag === "Retrying")
      assert.strictEqual(first?._tag === "Retrying" ? first.maxRetries : "none", null)
    }).pipe(Effect.provide(retrying(
      [TestModel.fail(overloaded), TestModel.text("ok")],
      { schedule: Schedule.spaced("1 second") }
    ))))
})
