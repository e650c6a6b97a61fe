/**
 * `ToolScheduler` without a fiber or queue of its own: a batch costs a fiber per call and its
 * progress ticker, nothing else; the consumer reads the results, or the progress without them.
 */
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Exit, Scope, Stream, Supervisor } from "effect"
import * as ToolRuntime from "../../src/tool/ToolRuntime.js"
import * as ToolScheduler from "../../src/tool/ToolScheduler.js"

/** Counts the fibers started under it. */
class Fibers extends Supervisor.AbstractSupervisor<void> {
  started = 0
  value = Effect.void
  override onStart() {
    this.started++
  }
}

const job = (id: string, safe = true): ToolScheduler.Job => ({
  id,
  toolName: "T",
  safe,
  label: `T(${id})`,
  run: () => Effect.succeed({ result: ToolRuntime.errorResult(id, `done ${id}`), cancelsSiblings: false })
})

/** Drains `stream` with a pull (no fiber of its own, as `Stream.run*` would fork). */
const drain = <A>(stream: Stream.Stream<A>) =>
  Effect.scoped(Effect.gen(function*() {
    const pull = yield* Stream.toPull(stream)
    const out: Array<A> = []
    while (true) {
      const chunk = yield* Effect.exit(pull)
      if (Exit.isFailure(chunk)) return out
      out.push(...Chunk.toReadonlyArray(chunk.value))
    }
  }))

describe("ToolScheduler", () => {
  it.effect("a batch forks one fiber per call and one ticker per call, and no fiber of the scheduler's own", () =>
    Effect.gen(function*() {
      const fibers = new Fibers()
      const scope = yield* Scope.make()
      const results = yield* Effect.gen(function*() {
        const scheduler = yield* ToolScheduler.make({ maxConcurrency: 10, cancelled: ToolRuntime.cancelledResult }, scope)
        scheduler.add(job("a"))
        scheduler.add(job("b"))
        scheduler.close()
        return yield* drain(scheduler.events)
      }).pipe(Effect.supervised(fibers))
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(results.map((e) => e._tag === "Result" ? e.result.tool_use_id : e._tag), ["a", "b"])
      assert.strictEqual(fibers.started, 4)
    }))

  it.effect("the progress stream ends without emitting the results (no empty chunk for them)", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const scheduler = yield* ToolScheduler.make({ maxConcurrency: 10, cancelled: ToolRuntime.cancelledResult }, scope)
      scheduler.add(job("a", false))
      scheduler.add(job("b", false))
      scheduler.close()
      const chunks = yield* Effect.scoped(Effect.gen(function*() {
        const pull = yield* Stream.toPull(scheduler.progress)
        let n = 0
        while (Exit.isSuccess(yield* Effect.exit(pull))) n++
        return n
      }))
      yield* Scope.close(scope, Exit.void)
      assert.strictEqual(chunks, 0)
      assert.deepStrictEqual([...scheduler.finished.keys()], ["a", "b"])
    }))
})
