/**
 * The resilience layers (IdleWatchdog, Retry, Fallback) over the scripted `TestModel`, in virtual
 * time: every wait is asserted at its exact `TestClock` instant. Jitter comes from `Random`, fixed
 * here at 0.5 so that a backoff of b ms waits exactly round(b × 1.125) ms.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  BuiltinCommands,
  Compactor,
  ContextAssembly,
  Fallback,
  IdleWatchdog,
  Hooks,
  Ids,
  Invariants,
  Message,
  ModelClient,
  ModelError,
  ModelNotice,
  Permissions,
  Pipeline,
  Retry,
  RetryPolicy,
  Session,
  SessionStore,
  TestModel,
  ToolRegistry,
  ToolRuntime
} from "@keel/core"
import type { SdkMessage } from "@keel/core"
import { Chunk, ConfigProvider, Duration, Effect, Fiber, Layer, Ref, Stream, TestClock } from "effect"
import { notices, request, runFor, stack } from "./support/ResilienceStack.js"
import { messagesOf } from "./support/Sessions.js"
import { sleeper } from "./support/Tools.js"

const rateLimited = (headers?: { readonly "retry-after"?: string; readonly "retry-after-ms"?: string; readonly "x-should-retry"?: string }) =>
  new ModelError.RateLimited({ message: "slow down", status: 429, requestId: "req_429", ...(headers ? { headers } : {}) })
const overloaded = (headers?: { readonly "retry-after"?: string }) =>
  new ModelError.Overloaded({ message: "Overloaded", status: 529, errorType: "overloaded_error", ...(headers ? { headers } : {}) })
const serverError = new ModelError.ServerError({ message: "Internal server error", status: 500 })

const textOf = (items: ReadonlyArray<ModelClient.Item>) =>
  items.flatMap((i) => (i.type === "content_block_delta" && i.delta.type === "text_delta" ? [i.delta.text] : [])).join("")

describe("Retry under TestClock", () => {
  it.effect("three 429s with retry-after: 7, then success: the 4th request goes out at t = 21 s", () =>
    Effect.gen(function*() {
      const { items, outcome, times } = yield* runFor("1 minute")
      assert.strictEqual(outcome._tag, "Right")
      assert.deepStrictEqual(times, [0, 7_000, 14_000, 21_000])
      assert.deepStrictEqual(
        notices(items).map((n) => n._tag === "Retrying" ? [n.attempt, n.maxRetries, n.delayMs, n.error._tag] : n._tag),
        [[1, 10, 7_000, "RateLimited"], [2, 10, 7_000, "RateLimited"], [3, 10, 7_000, "RateLimited"]]
      )
      assert.strictEqual(textOf(items), "done")
    }).pipe(Effect.provide(stack([
      TestModel.fail(rateLimited({ "retry-after": "7" })),
      TestModel.fail(rateLimited({ "retry-after": "7" })),
      TestModel.fail(rateLimited({ "retry-after": "7" })),
      TestModel.text("done")
    ]))))

  it.effect("500, 500, success: requests at 0, 0.5 s + jitter, then 1 s + jitter later", () =>
    Effect.gen(function*() {
      const { outcome, times } = yield* runFor("10 seconds")
      assert.strictEqual(outcome._tag, "Right")
      // Backoff 500 ms then 1000 ms, each plus 0.5 × 25 %.
      assert.deepStrictEqual(times, [0, 563, 563 + 1_125])
    }).pipe(Effect.provide(stack([TestModel.fail(serverError), TestModel.fail(serverError), TestModel.text("ok")]))))

  it.effect("nothing goes out early, even after retry-after: 0: at t = 562 ms the second request has not been made", () =>
    Effect.gen(function*() {
      const client = yield* ModelClient.ModelClient
      const model = yield* TestModel.TestModel
      const fiber = yield* Effect.fork(Stream.runDrain(client.stream(request)))
      yield* TestClock.adjust("562 millis")
      assert.deepStrictEqual(yield* model.requestTimes, [0])
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(yield* model.requestTimes, [0, 563])
      yield* Fiber.join(fiber)
    }).pipe(Effect.provide(stack([TestModel.fail(rateLimited({ "retry-after": "0" })), TestModel.text("ok")]))))

  it.effect("backoff doubles from 500 ms to the 32 s cap; after 10 retries the error carries 11 attempts", () =>
    Effect.gen(function*() {
      const { outcome, times } = yield* runFor("10 minutes")
      assert.strictEqual(outcome._tag, "Left")
      if (outcome._tag === "Left") {
        assert.strictEqual(outcome.left._tag, "ServerError")
        assert.strictEqual(outcome.left.attempts, 11)
        assert.include(ModelError.describe(outcome.left), "after 11 attempts")
      }
      const gaps = times.slice(1).map((t, i) => t - times[i]!)
      const backoff = [500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 32_000, 32_000, 32_000]
      assert.deepStrictEqual(gaps, backoff.map((b) => Math.round(b * 1.125)))
    }).pipe(Effect.provide(stack(Array.from({ length: 11 }, () => TestModel.fail(serverError))))))

  it.effect("retry-after-ms and an HTTP-date retry-after set the delay; x-should-retry: false stops at once", () =>
    Effect.gen(function*() {
      const { outcome, times } = yield* runFor("1 minute")
      assert.strictEqual(outcome._tag, "Left")
      // 1.5 s from retry-after-ms; then an HTTP date (whole seconds) naming t = 7 s.
      assert.deepStrictEqual(times, [0, 1_500, 7_000])
    }).pipe(Effect.provide(stack([
      TestModel.fail(rateLimited({ "retry-after-ms": "1500" })),
      TestModel.fail(rateLimited({ "retry-after": new Date(7_000).toUTCString() })),
      TestModel.fail(rateLimited({ "x-should-retry": "false" })),
      TestModel.text("never")
    ]))))

  it.effect("x-should-retry: true retries a 400 that would not be retried otherwise", () =>
    Effect.gen(function*() {
      const { outcome, times } = yield* runFor("1 minute")
      assert.strictEqual(outcome._tag, "Right")
      assert.deepStrictEqual(times, [0, 563])
    }).pipe(Effect.provide(stack([
      TestModel.fail(
        new ModelError.InvalidRequest({ message: "try again", status: 400, headers: { "x-should-retry": "true" } })
      ),
      TestModel.text("ok")
    ]))))

  for (
    const error of [
      new ModelError.InvalidRequest({ message: "max_tokens: Field required", status: 400 }),
      new ModelError.Forbidden({ message: "no", status: 403 }),
      new ModelError.PromptTooLong({ message: "prompt is too long: 210000 tokens > 200000 maximum", status: 400 })
    ]
  ) {
    it.effect(`${error._tag} is never retried`, () =>
      Effect.gen(function*() {
        const { outcome, times } = yield* runFor("1 minute")
        assert.deepStrictEqual(times, [0])
        assert.strictEqual(outcome._tag === "Left" ? outcome.left._tag : "none", error._tag)
      }).pipe(Effect.provide(stack([TestModel.fail(error), TestModel.text("never")]))))
  }

  it.effect("408 and 409, connection errors and truncated streams are retried", () =>
    Effect.gen(function*() {
      const { outcome, times } = yield* runFor("1 minute")
      assert.strictEqual(outcome._tag, "Right")
      assert.strictEqual(times.length, 5)
    }).pipe(Effect.provide(stack([
      TestModel.fail(new ModelError.InvalidRequest({ message: "timeout", status: 408 })),
      TestModel.fail(new ModelError.InvalidRequest({ message: "conflict", status: 409 })),
      TestModel.fail(new ModelError.ConnectionError({ message: "Could not reach the API: ECONNRESET" })),
      TestModel.fail(new ModelError.StreamTruncated({ message: "The stream ended before message_stop" })),
      TestModel.text("ok")
    ]))))

  it.effect("a background request does not retry Overloaded; a foreground one does", () =>
    Effect.gen(function*() {
      const background = yield* runFor("1 minute", { ...request, source: "background" })
      assert.deepStrictEqual(background.times, [0])
      assert.strictEqual(background.outcome._tag === "Left" ? background.outcome.left._tag : "none", "Overloaded")
      const foreground = yield* runFor("1 minute")
      assert.strictEqual(foreground.outcome._tag, "Right")
      assert.deepStrictEqual(foreground.times, [0, 60_000, 60_000 + 563])
    }).pipe(Effect.provide(stack([TestModel.fail(overloaded()), TestModel.fail(overloaded()), TestModel.text("ok")]))))

  it.effect("a 401 refreshes the credentials once and retries at once; a second 401 ends the call", () =>
    Effect.gen(function*() {
      const keys = yield* Ref.make(["key-2", "key-3"])
      const current = yield* Ref.make("key-1")
      const credentials = {
        current: Effect.map(Ref.get(current), (k) => ({ apiKey: k as never })),
        refresh: Effect.gen(function*() {
          const [next, ...rest] = yield* Ref.get(keys)
          yield* Ref.set(keys, rest)
          yield* Ref.set(current, next!)
          return { apiKey: next as never }
        })
      }
      const seen: Array<string> = []
      // A model that accepts only key-2, answering 401 to anything else.
      const inner = ModelClient.make({
        stream: () =>
          Stream.unwrap(Effect.map(Ref.get(current), (key) => {
            seen.push(key)
            return key === "key-2"
              ? Stream.fromIterable(TestModel.text("ok").events)
              : Stream.fail(new ModelError.Unauthorized({ message: "invalid x-api-key", status: 401 }))
          }))
      })
      const client = Retry.make(inner, {}, credentials)
      const ok = yield* Stream.runCollect(client.stream(request))
      assert.strictEqual(textOf(Chunk.toReadonlyArray(ok)), "ok")
      assert.deepStrictEqual(seen, ["key-1", "key-2"])
      const retrying = notices(Chunk.toReadonlyArray(ok))
      assert.deepStrictEqual(retrying.map((n) => n._tag === "Retrying" ? [n.delayMs, n.error._tag] : n._tag), [[0, "Unauthorized"]])

      // A fresh call whose refreshed key (key-3) is refused too: one refresh, then the 401 ends it.
      yield* Ref.set(current, "key-1")
      const failed = yield* Effect.flip(Stream.runDrain(client.stream(request)))
      assert.strictEqual(failed._tag, "Unauthorized")
      assert.deepStrictEqual(seen, ["key-1", "key-2", "key-1", "key-3"])
      assert.match(ModelError.describe(failed), /^Authentication failed after 2 attempts: .*ANTHROPIC_API_KEY/)
    }))

  it.effect("a stream that failed after part of an answer is retracted before the retry; the text arrives once", () =>
    Effect.gen(function*() {
      const { items, outcome } = yield* runFor("1 minute")
      assert.strictEqual(outcome._tag, "Right")
      const tags = items.filter((i) => i.type === "notice" || i.type === "message_start").map((i) =>
        i.type === "notice" ? i._tag : i.type
      )
      assert.deepStrictEqual(tags, ["message_start", "Retracted", "Retrying", "message_start"])
      const retracted = notices(items)[0] as ModelNotice.Retracted
      assert.deepStrictEqual([retracted.reason, retracted.messageId], ["retry", "msg_partial"])
      const afterRetraction = items.slice(items.indexOf(retracted))
      assert.strictEqual(textOf(afterRetraction), "the whole answer")
    }).pipe(Effect.provide(stack([
      TestModel.fail(
        new ModelError.Overloaded({ message: "Overloaded", errorType: "overloaded_error" }),
        TestModel.text("the whole answer", { id: "msg_partial", chunkSize: 4 }).events.slice(0, 4)
      ),
      TestModel.text("the whole answer", { chunkSize: 4 })
    ]))))
})

describe("Persistent (unattended) retry under TestClock", () => {
  const persistent = (budget?: Duration.DurationInput): RetryPolicy.Policy => ({
    ...RetryPolicy.defaults,
    persistent: { ...RetryPolicy.persistentDefaults, budget: budget === undefined ? undefined : Duration.decode(budget) }
  })

  it.effect("a 10-minute retry-after: a heartbeat every 30 s while waiting, then the request at t = 600 s", () =>
    Effect.gen(function*() {
      const { items, outcome, times } = yield* runFor("11 minutes")
      assert.strictEqual(outcome._tag, "Right")
      assert.deepStrictEqual(times, [0, 600_000])
      const [retrying, ...beats] = notices(items)
      assert.deepStrictEqual(retrying?._tag === "Retrying" && [retrying.maxRetries, retrying.delayMs], [null, 600_000])
      assert.deepStrictEqual(
        beats.map((b) => b._tag === "Waiting" ? [b.waitedMs, b.remainingMs] : b._tag),
        Array.from({ length: 19 }, (_, i) => [(i + 1) * 30_000, 600_000 - (i + 1) * 30_000])
      )
    }).pipe(Effect.provide(stack([TestModel.fail(rateLimited({ "retry-after": "600" })), TestModel.text("ok")], {
      policy: persistent()
    }))))

  it.effect("429/529 are retried past the count limit, the backoff capped at 5 minutes", () =>
    Effect.gen(function*() {
      const { outcome, times } = yield* runFor("2 hours")
      assert.strictEqual(outcome._tag, "Right")
      assert.strictEqual(times.length, 15)
      const gaps = times.slice(1).map((t, i) => t - times[i]!)
      // 500 ms × 2^(n−1) grows past 32 s (no ordinary cap in persistent mode) up to the 5-minute cap.
      assert.strictEqual(gaps[6], Math.round(32_000 * 1.125))
      assert.strictEqual(gaps[7], Math.round(64_000 * 1.125))
      assert.strictEqual(gaps[13], Math.round(300_000 * 1.125))
    }).pipe(Effect.provide(stack([...Array.from({ length: 14 }, () => TestModel.fail(overloaded())), TestModel.text("ok")], {
      policy: persistent()
    }))))

  it.effect("other errors keep their count limit in persistent mode", () =>
    Effect.gen(function*() {
      const { outcome, times } = yield* runFor("10 minutes")
      assert.strictEqual(outcome._tag, "Left")
      assert.strictEqual(times.length, 11)
    }).pipe(Effect.provide(stack(Array.from({ length: 12 }, () => TestModel.fail(serverError)), { policy: persistent() }))))

  it.effect("the wall-clock budget ends the retries when the next wait would pass it", () =>
    Effect.gen(function*() {
      const { outcome, times } = yield* runFor("1 hour")
      assert.strictEqual(outcome._tag, "Left")
      // 0, 5 min; the next 5-minute wait would end at 10 min, past the 8-minute budget.
      assert.deepStrictEqual(times, [0, 300_000])
    }).pipe(Effect.provide(stack([
      TestModel.fail(rateLimited({ "retry-after": "300" })),
      TestModel.fail(rateLimited({ "retry-after": "300" })),
      TestModel.text("never")
    ], { policy: persistent("8 minutes") }))))
})

describe("Fallback under TestClock", () => {
  it.effect("529 ×3 with a fallback configured: the 4th request names the fallback model, at once", () =>
    Effect.gen(function*() {
      const { items, outcome, requests, times } = yield* runFor("1 minute")
      assert.strictEqual(outcome._tag, "Right")
      assert.deepStrictEqual(requests.map((r) => r.model), ["claude-primary", "claude-primary", "claude-primary", "claude-backup"])
      // Two backoffs between the overloads; the switch itself does not wait.
      assert.deepStrictEqual(times, [0, 563, 1_688, 1_688])
      const switched = notices(items).find((n) => n._tag === "ModelSwitched")
      assert.deepStrictEqual(switched?._tag === "ModelSwitched" && [switched.from, switched.to], ["claude-primary", "claude-backup"])
    }).pipe(Effect.provide(stack([
      TestModel.fail(overloaded()),
      TestModel.fail(overloaded()),
      TestModel.fail(overloaded()),
      TestModel.text("from the backup")
    ], { fallback: ["claude-backup"] }))))

  it.effect("fallbacks are taken in order; the last one keeps the full retry budget", () =>
    Effect.gen(function*() {
      const { outcome, requests } = yield* runFor("1 hour")
      assert.strictEqual(outcome._tag, "Left")
      const models = requests.map((r) => r.model)
      assert.deepStrictEqual(models.slice(0, 7), ["claude-primary", "claude-primary", "claude-primary", "b1", "b1", "b1", "b2"])
      assert.strictEqual(models.filter((m) => m === "b2").length, 11)
      if (outcome._tag === "Left") assert.match(ModelError.describe(outcome.left), /^Repeated 529 Overloaded errors after 11 attempts/)
    }).pipe(Effect.provide(stack(Array.from({ length: 17 }, () => TestModel.fail(overloaded())), { fallback: ["b1", "b2"] }))))

  it.effect("errors other than overload do not switch models", () =>
    Effect.gen(function*() {
      const { outcome, requests } = yield* runFor("1 minute")
      assert.strictEqual(outcome._tag, "Left")
      assert.deepStrictEqual(requests.map((r) => r.model), ["claude-primary"])
    }).pipe(Effect.provide(stack([TestModel.fail(new ModelError.Forbidden({ message: "no", status: 403 }))], {
      fallback: ["claude-backup"]
    }))))

  it("chainFor starts from the model asked for", () => {
    assert.deepStrictEqual(Fallback.chainFor("a", ["b", "c"]), ["a", "b", "c"])
    assert.deepStrictEqual(Fallback.chainFor("b", ["b", "c"]), ["b", "c"])
    assert.deepStrictEqual(Fallback.chainFor("c", ["b", "c"]), ["c"])
  })
})

describe("IdleWatchdog under TestClock", () => {
  const stallAfterTwo: TestModel.Reply = {
    events: TestModel.text("abcdefgh", { chunkSize: 2, id: "msg_stalled" }).events.slice(0, 4),
    stall: true
  }

  it.effect("a stream that stalls after two deltas: warning at 45 s, StreamIdle at exactly 90 s, then the retry", () =>
    Effect.gen(function*() {
      const { items, outcome, times } = yield* runFor("3 minutes")
      assert.strictEqual(outcome._tag, "Right")
      assert.deepStrictEqual(times, [0, 90_000 + 563])
      const seen = notices(items).map((n) =>
        n._tag === "StreamStalled"
          ? ["StreamStalled", n.idleMs, n.timeoutMs]
          : n._tag === "Retrying"
          ? ["Retrying", n.error._tag, n.error._tag === "StreamIdle" ? n.error.idleMs : 0]
          : [n._tag]
      )
      assert.deepStrictEqual(seen, [["StreamStalled", 45_000, 90_000], ["Retracted"], ["Retrying", "StreamIdle", 90_000]])
    }).pipe(Effect.provide(stack([stallAfterTwo, TestModel.text("abcdefgh", { chunkSize: 2 })]))))

  it.effect("the timeout counts from the last event, not from the start", () =>
    Effect.gen(function*() {
      const { outcome, times } = yield* runFor("5 minutes")
      assert.strictEqual(outcome._tag, "Right")
      // The first request waits 80 s before its first event, then stalls: idle from t = 80 s.
      assert.deepStrictEqual(times, [0, 170_000 + 563])
    }).pipe(Effect.provide(stack([{ ...stallAfterTwo, delay: "80 seconds" }, TestModel.text("ok")]))))

  it.effect("the timeout is configurable", () =>
    Effect.gen(function*() {
      const { outcome, times } = yield* runFor("1 minute")
      assert.strictEqual(outcome._tag, "Right")
      assert.deepStrictEqual(times, [0, 5_000 + 563])
    }).pipe(Effect.provide(stack([stallAfterTwo, TestModel.text("ok")], { idle: "5 seconds" }))))
})


/**
 * A session over the full resilience stack, with the Sleep tool: no context stages and no
 * compaction, every call allowed, the short built-in prompt, nothing persisted.
 */
const sessionLayer = (script: ReadonlyArray<TestModel.ScriptItem>, fallback: ReadonlyArray<string> = []) =>
  Layer.mergeAll(
    stack(script, { fallback }),
    Pipeline.layerEmpty,
    Compactor.layerNone,
    ToolRuntime.layer().pipe(
      Layer.provideMerge(ToolRegistry.layer([sleeper])),
      Layer.provideMerge(Permissions.layerAllowAll)
    ),
    ContextAssembly.layerMinimal,
    SessionStore.layerNoop,
    BuiltinCommands.layer,
    Ids.layerSeeded(1),
    Hooks.layerNone
  )

const collect = (stream: Stream.Stream<SdkMessage.SdkMessage>) => Stream.runCollect(stream).pipe(Effect.map(Chunk.toReadonlyArray))

const lastRequestViolations = Effect.gen(function*() {
  const model = yield* TestModel.TestModel
  const requests = yield* model.requests
  return Invariants.requestViolations(requests[requests.length - 1]!.messages)
})

describe("Session with the resilience stack", () => {
  it.scoped("the stall retry leaves the text once in the transcript; the consumer sees the stall, the retraction and api_retry", () =>
    Effect.gen(function*() {
      const session = yield* Session.make({ model: "claude-primary", cwd: "/work", includePartialMessages: true })
      const fiber = yield* Effect.fork(collect(session.submit("go")))
      yield* TestClock.adjust("2 minutes")
      const messages = yield* Fiber.join(fiber)
      // (claude-primary has no price: its one-time "informational" warning is not part of this story)
      const system = messages.filter((m) => m.type === "system" && m.subtype !== "init" && m.subtype !== "informational").map((m) =>
        m.type === "system" ? (m.subtype === "notification" ? `notification:${m.key}` : m.subtype) : ""
      )
      assert.deepStrictEqual(system, ["notification:stream_stalled", "notification:message_retracted", "api_retry"])
      const transcript = yield* messagesOf(session)
      assert.deepStrictEqual(transcript.map((m) => m.role), ["user", "assistant"])
      assert.strictEqual((transcript[1] as Message.AssistantMessage).text, "abcdefgh")
      const result = messages.at(-1) as SdkMessage.Result
      assert.deepStrictEqual([result.is_error, result.result], [false, "abcdefgh"])
    }).pipe(Effect.provide(sessionLayer([
      { events: TestModel.text("abcdefgh", { chunkSize: 2 }).events.slice(0, 4), stall: true },
      TestModel.text("abcdefgh", { chunkSize: 2 })
    ]))))

  it.scoped("after a fallback the rest of the turn stays on the fallback model; the next turn tries the primary again", () =>
    Effect.gen(function*() {
      const session = yield* Session.make({ model: "claude-primary", cwd: "/work" })
      const first = yield* Effect.fork(collect(session.submit("one")))
      yield* TestClock.adjust("1 minute")
      const messages = yield* Fiber.join(first)
      const fallback = messages.find((m) => m.type === "system" && m.subtype === "informational" && "fallback_model" in m)
      assert.deepStrictEqual(
        fallback?.type === "system" && fallback.subtype === "informational" && [fallback.level, fallback.content],
        ["warning", "Switched to claude-backup due to high demand for claude-primary"]
      )
      yield* collect(session.submit("two"))
      const model = yield* TestModel.TestModel
      assert.deepStrictEqual((yield* model.requests).map((r) => r.model), [
        "claude-primary",
        "claude-primary",
        "claude-primary",
        "claude-backup", // answers with a tool call
        "claude-backup", // the same turn's next call stays on the fallback
        "claude-primary" // a new turn starts on the primary
      ])
    }).pipe(Effect.provide(sessionLayer([
      TestModel.fail(overloaded()),
      TestModel.fail(overloaded()),
      TestModel.fail(overloaded()),
      TestModel.reply([TestModel.toolUse("Sleep", { ms: 10 })], { model: "claude-backup" }),
      TestModel.text("done", { model: "claude-backup" }),
      TestModel.text("primary again")
    ], ["claude-backup"]))))

  it.scoped("retries exhausted: the result is an error that says what failed and how often", () =>
    Effect.gen(function*() {
      const session = yield* Session.make({ model: "claude-primary", cwd: "/work" })
      const fiber = yield* Effect.fork(collect(session.submit("go")))
      yield* TestClock.adjust("10 minutes")
      const result = (yield* Fiber.join(fiber)).at(-1) as SdkMessage.Result
      assert.deepStrictEqual([result.is_error, result.api_error_status], [true, 500])
      assert.strictEqual(result.result, "API Error: ServerError (HTTP 500): Internal server error after 11 attempts")
    }).pipe(Effect.provide(sessionLayer(Array.from({ length: 11 }, () => TestModel.fail(serverError))))))
})

describe("Interruption with the resilience stack", () => {
  it.scoped("interrupted during a long tool: aborted_tools, and the next turn's request is valid", () =>
    Effect.gen(function*() {
      const session = yield* Session.make({ model: "claude-primary", cwd: "/work" })
      const fiber = yield* Effect.fork(collect(session.submit("sleep")))
      yield* TestClock.adjust("1 second")
      yield* session.interrupt
      const result = (yield* Fiber.join(fiber)).at(-1) as SdkMessage.Result
      assert.strictEqual(result.terminal_reason, "aborted_tools")
      yield* collect(session.submit("next"))
      assert.deepStrictEqual(yield* lastRequestViolations, [])
      const transcript = yield* messagesOf(session)
      const answer = transcript[2] as Message.UserMessage
      assert.deepStrictEqual(answer.toolResults.map((r) => r.is_error), [true])
      assert.include(JSON.stringify(Message.toParam(answer)), "Interrupted by user")
    }).pipe(Effect.provide(sessionLayer([
      TestModel.reply([TestModel.toolUse("Sleep", { ms: 3_600_000 })]),
      TestModel.text("fine")
    ]))))

  it.scoped("interrupted while streaming, and while waiting to retry: aborted_streaming, the next turn's request is valid", () =>
    Effect.gen(function*() {
      const session = yield* Session.make({ model: "claude-primary", cwd: "/work" })
      const streaming = yield* Effect.fork(collect(session.submit("one")))
      yield* TestClock.adjust("10 seconds")
      yield* session.interrupt
      assert.strictEqual(((yield* Fiber.join(streaming)).at(-1) as SdkMessage.Result).terminal_reason, "aborted_streaming")

      const waiting = yield* Effect.fork(collect(session.submit("two")))
      yield* TestClock.adjust("10 seconds") // inside the 60 s retry-after wait
      yield* session.interrupt
      assert.strictEqual(((yield* Fiber.join(waiting)).at(-1) as SdkMessage.Result).terminal_reason, "aborted_streaming")
      const model = yield* TestModel.TestModel
      assert.strictEqual((yield* model.requests).length, 2)

      yield* collect(session.submit("three"))
      assert.deepStrictEqual(yield* lastRequestViolations, [])
      assert.deepStrictEqual(Invariants.violations(yield* messagesOf(session)), [])
      // The cut answers are dropped; each interruption left Claude Code's note for the model (the
      // API request joins consecutive user messages into one).
      const last = (yield* model.requests).at(-1)!
      const note = [{ type: "text" as const, text: Session.INTERRUPTED_NOTE }]
      assert.deepStrictEqual(last.messages.map((m) => Message.toParam(m)), [
        { role: "user", content: "one" },
        { role: "user", content: note },
        { role: "user", content: "two" },
        { role: "user", content: note },
        { role: "user", content: "three" }
      ])
    }).pipe(Effect.provide(sessionLayer([
      { events: TestModel.text("never ends", { chunkSize: 2 }).events.slice(0, 3), stall: true },
      TestModel.fail(rateLimited({ "retry-after": "60" })),
      TestModel.text("three")
    ]))))

  it.scoped("interrupting the consuming fiber mid-tool leaves every tool_use answered and the session ready", () =>
    Effect.gen(function*() {
      const session = yield* Session.make({ model: "claude-primary", cwd: "/work" })
      const fiber = yield* Effect.fork(collect(session.submit("sleep")))
      yield* TestClock.adjust("1 second")
      yield* Fiber.interrupt(fiber)
      const next = yield* collect(session.submit("next"))
      assert.deepStrictEqual((next.at(-1) as SdkMessage.Result).result, "fine")
      assert.deepStrictEqual(yield* lastRequestViolations, [])
    }).pipe(Effect.provide(sessionLayer([
      TestModel.reply([TestModel.toolUse("Sleep", { ms: 3_600_000 })]),
      TestModel.text("fine")
    ]))))

  it.scoped("an embedder's AbortSignal stops the turn like interrupt", () =>
    Effect.gen(function*() {
      const session = yield* Session.make({ model: "claude-primary", cwd: "/work" })
      const controller = new AbortController()
      const fiber = yield* Effect.fork(collect(session.submit("sleep", { signal: controller.signal })))
      yield* TestClock.adjust("1 second")
      controller.abort()
      const result = (yield* Fiber.join(fiber)).at(-1) as SdkMessage.Result
      assert.deepStrictEqual([result.subtype, result.terminal_reason], ["error_during_execution", "aborted_tools"])
    }).pipe(Effect.provide(sessionLayer([TestModel.reply([TestModel.toolUse("Sleep", { ms: 3_600_000 })])]))))
})

describe("Resilience configuration", () => {
  const read = <A>(config: import("effect").Config.Config<A>, env: Record<string, string>) =>
    Effect.withConfigProvider(Effect.either(config), ConfigProvider.fromMap(new Map(Object.entries(env))))

  it.effect("the retry policy from the environment", () =>
    Effect.gen(function*() {
      const defaults = yield* read(RetryPolicy.config, {})
      assert.deepStrictEqual(defaults._tag === "Right" && [defaults.right.maxRetries, defaults.right.persistent], [10, undefined])
      const set = yield* read(RetryPolicy.config, {
        KEEL_MAX_RETRIES: "3",
        KEEL_UNATTENDED_RETRY: "1",
        KEEL_UNATTENDED_BUDGET_MS: "3600000"
      })
      assert.strictEqual(set._tag, "Right")
      if (set._tag === "Right") {
        assert.strictEqual(set.right.maxRetries, 3)
        assert.deepStrictEqual(set.right.persistent?.budget, Duration.hours(1))
        assert.deepStrictEqual(set.right.persistent?.maxDelay, Duration.minutes(5))
      }
      const bad = yield* read(RetryPolicy.config, { KEEL_MAX_RETRIES: "-1" })
      assert.strictEqual(bad._tag, "Left")
      if (bad._tag === "Left") assert.include(String(bad.left), "KEEL_MAX_RETRIES")
    }))

  it.effect("the idle timeout and fallback models from the environment", () =>
    Effect.gen(function*() {
      const timeout = yield* read(IdleWatchdog.timeoutConfig, { KEEL_STREAM_IDLE_TIMEOUT_MS: "1500" })
      assert.deepStrictEqual(timeout._tag === "Right" && timeout.right, Duration.millis(1500))
      const bad = yield* read(IdleWatchdog.timeoutConfig, { KEEL_STREAM_IDLE_TIMEOUT_MS: "0" })
      assert.strictEqual(bad._tag, "Left")
      const models = yield* read(Fallback.modelsConfig, { KEEL_FALLBACK_MODEL: "a, b,,c" })
      assert.deepStrictEqual(models._tag === "Right" && models.right, ["a", "b", "c"])
    }))
})
