/**
 * Ask → respond as a service, under `TestClock`: an ask waits for `respond`; a bounded ask is
 * refused (and cancelled) exactly at its timeout; an interrupted ask is cancelled; answers are
 * validated by kind; a restored action is taken up by the ask for the same tool call, and an answer
 * given before that ask is kept for it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Action, Actions, Ids } from "@keel/core"
import { Chunk, Effect, Fiber, Layer, Option, Stream, TestClock } from "effect"

const permission = (toolUseId: string): Action.PermissionRequest => ({
  kind: "permission",
  toolName: "Bash",
  input: { command: "ls" },
  toolUseId,
  reason: "Bash needs permission"
})

const layer = (options: Actions.Options = {}) => Actions.layer(options).pipe(Layer.provide(Ids.layerSeeded(7)))

/** Lets forked fibers run up to their next wait. */
const settle = Effect.repeatN(Effect.yieldNow(), 20)

describe("Actions", () => {
  it.scoped("an ask waits for respond; the answer is validated against its kind; unknown ids are typed errors", () =>
    Effect.gen(function*() {
      const actions = yield* Actions.Actions
      const events = yield* actions.subscribe
      const asking = yield* Effect.fork(actions.ask(permission("toolu_1")))
      yield* settle
      const [pending] = yield* actions.pending
      assert.strictEqual(pending!.request.kind, "permission")
      const wrong = yield* Effect.flip(actions.respond(pending!.id, { behavior: "maybe" }))
      assert.strictEqual(wrong._tag, "InvalidAnswer")
      const missing = yield* Effect.flip(actions.respond("nope", { behavior: "allow" }))
      assert.deepStrictEqual(missing, new Actions.ActionNotFound({ actionId: "nope" }))
      yield* actions.respond(pending!.id, { behavior: "allow", updatedInput: { command: "ls -la" } })
      assert.deepStrictEqual(yield* Fiber.join(asking), { behavior: "allow", updatedInput: { command: "ls -la" } })
      assert.deepStrictEqual(yield* actions.pending, [])
      const seen = yield* Stream.runCollect(Stream.take(events, 2))
      assert.deepStrictEqual(Chunk.toReadonlyArray(seen).map((e) => e.event), ["opened", "resolved"])
      const again = yield* Effect.flip(actions.respond(pending!.id, { behavior: "allow" }))
      assert.strictEqual(again._tag, "ActionNotFound")
    }).pipe(Effect.provide(layer())))

  it.scoped("a bounded ask is refused and cancelled exactly at its timeout, not before", () =>
    Effect.gen(function*() {
      const actions = yield* Actions.Actions
      const asking = yield* Effect.fork(actions.ask(permission("toolu_t")))
      yield* settle
      yield* TestClock.adjust("29999 millis")
      assert.isTrue(Option.isNone(yield* Fiber.poll(asking)), "still waiting at 29.999 s")
      yield* TestClock.adjust("1 millis")
      const answer = yield* Fiber.join(asking)
      assert.deepStrictEqual(answer, {
        behavior: "deny",
        message: "Permission to use Bash was denied: nobody answered within 30s."
      })
      assert.deepStrictEqual(yield* actions.pending, [])
    }).pipe(Effect.provide(layer({ timeout: "30 seconds" }))))

  it.scoped("interrupting the ask cancels its action; cancel refuses one that waits", () =>
    Effect.gen(function*() {
      const actions = yield* Actions.Actions
      const events = yield* actions.subscribe
      const first = yield* Effect.fork(actions.ask(permission("toolu_a")))
      yield* settle
      yield* Fiber.interrupt(first)
      const second = yield* Effect.fork(actions.ask({ kind: "elicitation", serverName: "docs", message: "Which?" }))
      yield* settle
      const [waiting] = yield* actions.pending
      assert.isTrue(yield* actions.cancel(waiting!.id, "no one can answer"))
      assert.deepStrictEqual(yield* Fiber.join(second), { action: "cancel" })
      const seen = Chunk.toReadonlyArray(yield* Stream.runCollect(Stream.take(events, 4)))
      assert.deepStrictEqual(seen.map((e) => e.event === "cancelled" ? `cancelled: ${e.reason}` : e.event), [
        "opened",
        "cancelled: its turn was interrupted",
        "opened",
        "cancelled: no one can answer"
      ])
    }).pipe(Effect.provide(layer())))

  it.scoped("a restored action is taken up by the ask for its tool call (same id); an early answer is kept for it", () =>
    Effect.gen(function*() {
      const actions = yield* Actions.Actions
      yield* actions.restore([
        { id: "act-1", turnId: "turn-1", request: permission("toolu_cut"), openedAt: 0 },
        { id: "act-2", turnId: "turn-1", request: permission("toolu_early"), openedAt: 0 }
      ])
      const asking = yield* Effect.fork(actions.ask(permission("toolu_cut")))
      yield* settle
      assert.deepStrictEqual((yield* actions.pending).map((a) => a.id), ["act-1", "act-2"], "no new action opened")
      yield* actions.respond("act-1", { behavior: "deny", message: "not now" })
      assert.deepStrictEqual(yield* Fiber.join(asking), { behavior: "deny", message: "not now" })
      // Answered before its turn asked again: the ask gets the answer at once.
      yield* actions.respond("act-2", { behavior: "allow" })
      assert.deepStrictEqual(yield* actions.ask(permission("toolu_early")), { behavior: "allow" })
      assert.deepStrictEqual(yield* actions.pending, [])
    }).pipe(Effect.provide(layer())))
})
