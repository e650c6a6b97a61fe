/**
 * Keel's requests to a stream-json host: the control_request line, the answer by request id, the
 * host's refusal, the timeout under TestClock (exactly, and withdrawn with control_cancel_request),
 * interruption, and the end of the host's input.
 */
import { assert, describe, it } from "@effect/vitest"
import { Ids } from "@keel/core"
import { Effect, Either, Exit, Fiber, Option, TestClock } from "effect"
import * as HostChannel from "../../src/host/HostChannel.js"

const channel = Effect.gen(function*() {
  const written: Array<any> = []
  const service = yield* HostChannel.make((line) => written.push(line)).pipe(Effect.provideService(Ids.Ids, Ids.seeded(1)))
  return { service, written }
})

const answer = (requestId: string, response: unknown) => ({ _tag: "Answer" as const, requestId, answer: response })

describe("HostChannel", () => {
  it.effect("a request goes out as a control_request; the success response with its id is its answer", () =>
    Effect.gen(function*() {
      const { service, written } = yield* channel
      const first = yield* Effect.fork(service.request({ subtype: "mcp_message", server_name: "calc", message: { id: 1 } }, "10 seconds"))
      const second = yield* Effect.fork(service.request({ subtype: "mcp_message", server_name: "calc", message: { id: 2 } }, "10 seconds"))
      yield* Effect.yieldNow()
      assert.strictEqual(written.length, 2)
      assert.deepStrictEqual(written[0].request, { subtype: "mcp_message", server_name: "calc", message: { id: 1 } })
      assert.strictEqual(written[0].type, "control_request")
      const [id1, id2] = written.map((w) => w.request_id as string)
      assert.notStrictEqual(id1, id2)
      // Answered out of order: each answer reaches its own request.
      assert.isTrue(yield* service.receive(answer(id2!, { mcp_response: "two" })))
      assert.isTrue(yield* service.receive(answer(id1!, { mcp_response: "one" })))
      assert.deepStrictEqual(yield* Fiber.join(first), { mcp_response: "one" })
      assert.deepStrictEqual(yield* Fiber.join(second), { mcp_response: "two" })
      // Someone else's response (a permission ask's), or one answered already: not ours.
      assert.isFalse(yield* service.receive(answer(id1!, {})))
      assert.isFalse(yield* service.receive(answer("other", {})))
      assert.strictEqual(written.length, 2, "nothing withdrawn")
    }))

  it.effect("an error response fails the request with the host's reason", () =>
    Effect.gen(function*() {
      const { service, written } = yield* channel
      const fiber = yield* Effect.fork(service.request({ subtype: "mcp_message" }, "10 seconds"))
      yield* Effect.yieldNow()
      yield* service.receive({ _tag: "Error", requestId: written[0].request_id, error: "SDK MCP server not found: calc" })
      const error = yield* Effect.flip(Fiber.join(fiber))
      assert.strictEqual(error.reason, "refused")
      assert.strictEqual(error.message, "the host refused the mcp_message request: SDK MCP server not found: calc")
    }))

  it.effect("no answer: fails exactly at the timeout, and the request is withdrawn with control_cancel_request", () =>
    Effect.gen(function*() {
      const { service, written } = yield* channel
      const fiber = yield* Effect.fork(service.request({ subtype: "mcp_message" }, "10 seconds"))
      yield* TestClock.adjust("9999 millis")
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
      yield* TestClock.adjust("1 millis")
      const error = yield* Effect.flip(Fiber.join(fiber))
      assert.strictEqual(error.reason, "no-answer")
      assert.strictEqual(error.message, "the host did not answer the mcp_message request within 10s")
      assert.deepStrictEqual(written[1], { type: "control_cancel_request", request_id: written[0].request_id })
      // A late answer is no one's.
      assert.isFalse(yield* service.receive(answer(written[0].request_id, {})))
    }))

  it.effect("an interrupted wait is withdrawn too", () =>
    Effect.gen(function*() {
      const { service, written } = yield* channel
      const fiber = yield* Effect.fork(service.request({ subtype: "mcp_message" }, "10 seconds"))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(written[1], { type: "control_cancel_request", request_id: written[0].request_id })
    }))

  it.effect("the end of the host's input fails what waits and what comes later, without withdrawing anything", () =>
    Effect.gen(function*() {
      const { service, written } = yield* channel
      const fiber = yield* Effect.fork(service.request({ subtype: "mcp_message" }, "10 seconds"))
      yield* Effect.yieldNow()
      yield* service.end
      const exit = yield* Fiber.await(fiber)
      assert.isTrue(Exit.isFailure(exit))
      const later = yield* Effect.either(service.request({ subtype: "mcp_message" }, "10 seconds"))
      assert.isTrue(Either.isLeft(later))
      if (Either.isLeft(later)) {
        assert.strictEqual(later.left.reason, "input-ended")
        assert.strictEqual(later.left.message, "the mcp_message request to the host got no answer: the host's input ended")
      }
      assert.strictEqual(written.length, 1, "only the first request went out")
    }))
})
