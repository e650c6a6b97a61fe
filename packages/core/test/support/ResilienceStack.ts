/**
 * The resilience layers (IdleWatchdog → Retry → Fallback) over the scripted `TestModel`, for tests
 * in virtual time: jitter comes from `Random`, fixed here at 0.5, so a backoff of b ms waits exactly
 * round(b × 1.125) ms.
 */
import { Fallback, IdleWatchdog, Message, ModelClient, type ModelNotice, type ModelRequest, Retry, type RetryPolicy, TestModel } from "@keel/core"
import { Chunk, type Duration, Effect, Fiber, Layer, Random, Stream, TestClock } from "effect"

/** A one-message request. */
export const request: ModelRequest.ModelRequest = {
  model: "claude-primary",
  max_tokens: 1024,
  messages: [Message.user("hi")],
  source: "foreground"
}

/** The resilience stack over a scripted model: watchdog → retry → fallback, with jitter fixed at 0.5. */
export const stack = (
  script: ReadonlyArray<TestModel.ScriptItem>,
  options: { policy?: RetryPolicy.Policy; fallback?: ReadonlyArray<string>; idle?: Duration.DurationInput } = {}
) => {
  const model = Fallback.layer({ models: options.fallback ?? [] }).pipe(
    Layer.provide(Retry.layer({ policy: options.policy })),
    Layer.provide(IdleWatchdog.layer(options.idle ?? IdleWatchdog.DEFAULT_TIMEOUT)),
    Layer.provideMerge(TestModel.layer(script))
  )
  return Layer.merge(model, Layer.setRandom(Random.fixed([0.5])))
}

/** Runs one request in a fiber, lets virtual time run for `runFor`, and returns what it emitted. */
export const runFor = (runFor: Duration.DurationInput, req: ModelRequest.ModelRequest = request) =>
  Effect.gen(function*() {
    const client = yield* ModelClient.ModelClient
    const fiber = yield* Effect.fork(Effect.either(Stream.runCollect(client.stream(req))))
    yield* TestClock.adjust(runFor)
    const outcome = yield* Fiber.join(fiber)
    const model = yield* TestModel.TestModel
    return {
      outcome,
      items: outcome._tag === "Right" ? Chunk.toReadonlyArray(outcome.right) : [],
      times: yield* model.requestTimes,
      requests: yield* model.requests
    }
  })

/** The notices among a stream's items. */
export const notices = (items: ReadonlyArray<ModelClient.Item>) =>
  items.filter((i): i is ModelNotice.ModelNotice => i.type === "notice")
