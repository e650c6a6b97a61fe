import { assert, it } from "@effect/vitest"
import { ModelError, Session } from "@keel/core"
import { Testing, TestModel } from "@keel/core/testing"
import { Effect, Schedule, Stream } from "effect"

const overloaded = new ModelError.Overloaded({ message: "Overloaded", status: 529 })

it.scoped("two 529s are retried on the schedule, at exact virtual instants", () =>
  Effect.gen(function*() {
    const session = yield* Session.make({ model: "claude-sonnet-4-6", cwd: "/work" })
    const messages = yield* Testing.runFor("1 minute", Stream.runCollect(session.submit("hello")))
    // The request, then a retry 2 s after each failure.
    assert.deepStrictEqual(yield* Testing.requestTimes, [0, 2000, 4000])
    assert.deepStrictEqual([...messages].map((m) => m.type === "system" ? m.subtype : m.type), [
      "init",
      "api_retry",
      "api_retry",
      "assistant",
      "result"
    ])
  }).pipe(Effect.provide(Testing.layer(
    [TestModel.fail(overloaded), TestModel.fail(overloaded), TestModel.text("hi", { model: "claude-sonnet-4-6" })],
    { resilience: { retry: { schedule: Schedule.spaced("2 seconds") } } }
  ))))
