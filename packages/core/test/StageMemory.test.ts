/**
 * The stages that remember a conversation (tool result budget, snip) keep it in the session's
 * `StageMemory`, not in themselves: one stage instance serving many sessions (as a runtime's
 * pipeline does) keeps nothing of a session after it ends, and two sessions never share state,
 * even under the same id.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { CompactionBreaker, Message, SessionState, Snip, type Stage, StageMemory, ToolResultBudget } from "@keel/core"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import { resultOf, round } from "./support/ToolRounds.js"

v8.setFlagsFromString("--expose-gc")
const gc = vm.runInNewContext("gc") as () => void

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "keel-stage-memory-"))

/** The stage context of a session with its own memory. */
const contextOf = (session: SessionState.Service): Stage.StageContext => ({
  model: "m",
  iteration: 1,
  sessionId: session.sessionId,
  maxTokens: 1_000,
  memory: session.stageMemory
})

/** Collects garbage until `refs` are all gone, or gives up after a few rounds. */
const collected = async (refs: ReadonlyArray<WeakRef<object>>): Promise<number> => {
  for (let i = 0; i < 10; i++) {
    // (A WeakRef keeps its target alive until the job that made it ends.)
    await new Promise((resolve) => setTimeout(resolve, 1))
    gc()
    if (refs.every((r) => r.deref() === undefined)) break
  }
  return refs.filter((r) => r.deref() !== undefined).length
}

describe("StageMemory", () => {
  it.effect("a slot is made once per stage and session, and each session has its own", () =>
    Effect.gen(function*() {
      const a = yield* StageMemory.make
      const b = yield* StageMemory.make
      const made: Array<string> = []
      const x = yield* a.slot(Snip.id, () => (made.push("a"), { n: 1 }))
      const y = yield* a.slot(Snip.id, () => (made.push("again"), { n: 2 }))
      const z = yield* b.slot(Snip.id, () => (made.push("b"), { n: 3 }))
      assert.strictEqual(x, y)
      assert.notStrictEqual(x, z)
      assert.deepStrictEqual(made, ["a", "b"])
      assert.strictEqual(yield* a.size, 1)
    }))

  it.effect("two sessions in one budget stage do not share decisions, even under the same session id", () =>
    Effect.gen(function*() {
      const stage = yield* ToolResultBudget.make({ directory: tmp() })
      const first = yield* SessionState.make("same-id")
      const kept = yield* stage.run([Message.user("go"), ...round("toolu_1", "Bash", {}, "small")], contextOf(first))
      assert.strictEqual(resultOf(kept.messages, "toolu_1"), "small")
      assert.strictEqual(yield* first.stageMemory.size, 1)
      // A later session (the same id, hosted again) whose call of the same id returned 60,000 characters.
      const second = yield* SessionState.make("same-id")
      const big = "x".repeat(60_000)
      const result = yield* stage.run([Message.user("go"), ...round("toolu_1", "Bash", {}, big)], contextOf(second))
      assert.match(resultOf(result.messages, "toolu_1") as string, /^<persisted-output>/)
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("two sessions in one snip stage do not share their index of reads, even under the same session id", () =>
    Effect.gen(function*() {
      const stage = yield* Snip.make()
      const read = (id: string) => round(id, "Read", { file_path: "/a" }, "same text")
      const first = yield* SessionState.make("same-id")
      const one = [Message.user("go"), ...read("r1")]
      yield* stage.run(one, contextOf(first))
      // The second session's history starts with the very message objects of the first (a fork):
      // its first run must not take the first session's index for its own.
      const second = yield* SessionState.make("same-id")
      const result = yield* stage.run([...one, new Message.AssistantMessage({ content: [Message.text("ok")] }), Message.user("x")], contextOf(second))
      assert.strictEqual(yield* second.stageMemory.size, 1)
      assert.strictEqual(resultOf(result.messages, "r1"), "same text")
    }))

  it("a stage serving many sessions in turn keeps nothing of those that ended", async () => {
    const directory = tmp()
    const [budget, snip] = await Effect.runPromise(
      Effect.all([ToolResultBudget.make({ directory }), Snip.make()]).pipe(Effect.provide(NodeContext.layer))
    )
    const refs: Array<WeakRef<object>> = []
    for (let i = 0; i < 20; i++) {
      await Effect.runPromise(Effect.gen(function*() {
        const session = yield* SessionState.make(`session-${i}`)
        const messages = [
          Message.user("go"),
          ...round(`r${i}a`, "Read", { file_path: "/f" }, `text ${i}`),
          ...round(`r${i}b`, "Read", { file_path: "/f" }, `text ${i}`)
        ]
        const budgeted = yield* budget.run(messages, contextOf(session))
        const snipped = yield* snip.run(budgeted.messages, contextOf(session))
        assert.strictEqual(resultOf(snipped.messages, `r${i}a`), Snip.STALE)
        refs.push(new WeakRef(messages.at(-1)!), new WeakRef(snipped.messages.at(-1)!))
        if (session.stageMemory !== undefined) refs.push(new WeakRef(session.stageMemory))
      }).pipe(Effect.provide(NodeContext.layer)))
    }
    // Every session's memory and messages are unreachable once the session is gone.
    await Effect.runPromise(Effect.yieldNow())
    const alive = await collected(refs)
    const which = refs.map((r, i) => r.deref() !== undefined ? i : -1).filter((i) => i >= 0)
    assert.strictEqual(alive, 0, JSON.stringify(which))
    assert.isTrue(budget !== undefined && snip !== undefined)
  })
})

describe("CompactionBreaker", () => {
  it.effect("keeps each session's state in its memory: two sessions under one id never share an open breaker", () =>
    Effect.gen(function*() {
      const breaker = yield* CompactionBreaker.make()
      const base = { model: "m", iteration: 1, sessionId: "same", maxTokens: 1_000 }
      const first = { ...base, memory: yield* StageMemory.make }
      const second = { ...base, memory: yield* StageMemory.make }
      yield* CompactionBreaker.setState(breaker, first, { ...CompactionBreaker.initial, failures: 3 })
      assert.isDefined(CompactionBreaker.tripped(breaker, yield* CompactionBreaker.stateOf(breaker, first)))
      assert.deepStrictEqual(yield* CompactionBreaker.stateOf(breaker, second), CompactionBreaker.initial)
      // Nothing is kept in the breaker itself for sessions with a memory.
      assert.strictEqual((yield* breaker.states.get).size, 0)
    }))

  it.effect("keeps at most MAX_LOOSE_STATES states of runs without a session's memory, the oldest dropped", () =>
    Effect.gen(function*() {
      const breaker = yield* CompactionBreaker.make()
      const loose = (i: number) => ({ model: "m", iteration: 1, sessionId: `s${i}`, maxTokens: 1_000 })
      for (let i = 0; i < CompactionBreaker.MAX_LOOSE_STATES + 10; i++) {
        yield* CompactionBreaker.setState(breaker, loose(i), { ...CompactionBreaker.initial, calls: i })
      }
      assert.strictEqual((yield* breaker.states.get).size, CompactionBreaker.MAX_LOOSE_STATES)
      assert.deepStrictEqual(yield* CompactionBreaker.stateOf(breaker, loose(0)), CompactionBreaker.initial)
      assert.strictEqual((yield* CompactionBreaker.stateOf(breaker, loose(265))).calls, 265)
    }))
})
