/**
 * Tool execution in the turn loop, under `TestClock`: calls start while the answer still streams,
 * a parallel batch takes as long as its longest call, serial calls add up, the concurrency cap
 * holds, results keep `tool_use` order, a failing sibling-cancelling call (Bash) cancels the rest,
 * and calls started by a retracted answer are stopped and forgotten.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  Compactor,
  Hooks,
  Ids,
  Invariants,
  Message,
  ModelError,
  Permissions,
  Pipeline,
  Retry,
  SessionState,
  TestModel,
  Tool,
  ToolEvent,
  ToolRegistry,
  ToolRuntime,
  TurnLoop
} from "@keel/core"
import type { TurnEvent } from "@keel/core"
import { Chunk, ConfigProvider, type Context, Effect, Fiber, Layer, Random, Ref, Schema, Stream, TestClock } from "effect"

type Event = TurnEvent.TurnEvent

/** `Work` (`id`, `ms`, `fail?`): logs start/end/interruption with the virtual time, sleeps `ms`, maybe fails. */
const makeWork = (
  log: Ref.Ref<ReadonlyArray<string>>,
  options: { readonly name: string; readonly safe: boolean; readonly cancelsSiblingsOnError?: boolean }
) =>
  Tool.make({
    name: options.name,
    description: "Works for a while",
    input: Schema.Struct({ id: Schema.String, ms: Schema.Number, fail: Schema.optional(Schema.Boolean) }),
    isReadOnly: options.safe,
    cancelsSiblingsOnError: options.cancelsSiblingsOnError ?? false,
    call: (input) => {
      const note = (what: string) =>
        Effect.flatMap(TestClock.currentTimeMillis, (t) => Ref.update(log, (l) => [...l, `${what} ${input.id} @${t}`]))
      return Effect.gen(function*() {
        yield* note("start")
        yield* Effect.sleep(input.ms)
        yield* note("end")
        if (input.fail === true) return yield* Tool.fail(`${input.id} failed`)
        return `done ${input.id}`
      }).pipe(Effect.onInterrupt(() => note("interrupted")))
    }
  })

/** `Narrate`: reports one event (a subagent's prompt) to the turn's output while it runs, then answers. */
const narrate = Tool.make({
  name: "Narrate",
  description: "Narrates",
  input: Schema.Struct({ text: Schema.String }),
  isReadOnly: true,
  call: (input, context) =>
    Effect.gen(function*() {
      if (context.emit !== undefined) {
        yield* context.emit(ToolEvent.ToolEvent.SubagentPrompt({ message: Message.user(input.text) }))
      }
      return "narrated"
    })
})

const setup = (
  script: ReadonlyArray<TestModel.ScriptItem>,
  options: { readonly maxConcurrency?: number; readonly retry?: boolean } = {}
) =>
  Effect.gen(function*() {
    const log = yield* Ref.make<ReadonlyArray<string>>([])
    const tools = [
      makeWork(log, { name: "Look", safe: true }),
      makeWork(log, { name: "Change", safe: false }),
      makeWork(log, { name: "Shell", safe: true, cancelsSiblingsOnError: true }),
      narrate
    ]
    const state = yield* SessionState.make("session-test", [Message.user("go")])
    const model = options.retry === true
      ? Retry.layer({}).pipe(Layer.provideMerge(TestModel.layer(script)), Layer.merge(Layer.setRandom(Random.fixed([0.5]))))
      : TestModel.layer(script)
    const layer = Layer.mergeAll(
      model,
      Pipeline.layerEmpty,
      Compactor.layerNone,
      Ids.layerSeeded(1),
      Hooks.layerNone,
      ToolRuntime.layer({ maxConcurrency: options.maxConcurrency ?? 10 }).pipe(
        Layer.provideMerge(ToolRegistry.layer(tools)),
        Layer.provideMerge(Permissions.layerAllowAll)
      ),
      Layer.succeed(SessionState.SessionState, state)
    )
    return { log, state, context: yield* Layer.build(layer) } as const
  })

const runTurn = (context: Context.Context<any>): Effect.Effect<ReadonlyArray<Event>> =>
  TurnLoop.run({ model: "claude-test", maxTokens: 1000, cwd: "/tmp" }).pipe(
    Stream.runCollect,
    Effect.map(Chunk.toReadonlyArray),
    Effect.provide(context)
  ) as Effect.Effect<ReadonlyArray<Event>>

/** Runs the turn in a fiber while virtual time moves on by `ms`, then joins it. */
const runFor = (context: Context.Context<any>, ms: number) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(runTurn(context))
    yield* TestClock.adjust(ms)
    return yield* Fiber.join(fiber)
  })

const requestTimes = (context: Context.Context<any>) =>
  Effect.flatMap(TestModel.TestModel, (m) => m.requestTimes).pipe(Effect.provide(context))

const resultsOf = (state: SessionState.Service) =>
  Effect.map(Ref.get(state.messages), (ms) =>
    ms.flatMap((m) => (m instanceof Message.UserMessage ? m.toolResults : [])).map((r) => [r.tool_use_id, r.content]))

const use = (name: string, id: string, ms: number, fail?: boolean) =>
  TestModel.toolUse(name, { id, ms, ...(fail === true ? { fail } : {}) }, id)

describe("Tool execution", () => {
  it.scoped("a call still running at its timeout (2 minutes by default) is stopped at exactly t=120 s; its error goes to the model and the turn goes on", () =>
    Effect.gen(function*() {
      const { context, log, state } = yield* setup([
        TestModel.reply([use("Look", "slow", 3_600_000), use("Look", "quick", 1000)]),
        TestModel.text("done")
      ])
      const events = yield* runFor(context, 200_000)
      assert.strictEqual(events[events.length - 1]!._tag, "TurnComplete")
      assert.deepStrictEqual(yield* requestTimes(context), [0, 120_000])
      assert.deepStrictEqual(yield* Ref.get(log), ["start slow @0", "start quick @0", "end quick @1000", "interrupted slow @120000"])
      const results = (yield* Ref.get(state.messages)).flatMap((m) => (m instanceof Message.UserMessage ? m.toolResults : []))
      assert.deepStrictEqual(results.map((r) => [r.tool_use_id, r.content, r.is_error ?? false]), [
        [
          "slow",
          "<tool_use_error>Look timed out after 120 s and was stopped (KEEL_TOOL_TIMEOUT_MS, or KEEL_TOOL_TIMEOUT_MS_LOOK for this tool, sets the limit).</tool_use_error>",
          true
        ],
        ["quick", "done quick", false]
      ])
    }))

  it.scoped("the timeout is set per tool (KEEL_TOOL_TIMEOUT_MS_<TOOL>) over all tools (KEEL_TOOL_TIMEOUT_MS); 0 turns it off", () =>
    Effect.gen(function*() {
      const run = (env: Record<string, string>, ms: number) =>
        Effect.gen(function*() {
          const { context, log } = yield* setup([
            TestModel.reply([use("Look", "a", ms), use("Change", "b", ms)]),
            TestModel.text("done")
          ])
          yield* runFor(context, 1_000_000).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))
          return (yield* Ref.get(log)).filter((l) => !l.startsWith("start"))
        })
      assert.deepStrictEqual(yield* run({ KEEL_TOOL_TIMEOUT_MS: "5000", KEEL_TOOL_TIMEOUT_MS_LOOK: "2500" }, 10_000), [
        "interrupted a @2500",
        "interrupted b @7500"
      ])
      // The virtual clock goes on from t=1,000,000 (the first turn's end).
      assert.deepStrictEqual(yield* run({ KEEL_TOOL_TIMEOUT_MS: "0" }, 500_000), ["end a @1500000", "end b @2000000"])
    }))

  it.scoped("a parallel batch takes as long as its longest call: the next request goes out at t=3 s", () =>
    Effect.gen(function*() {
      const { context, log, state } = yield* setup([
        TestModel.reply([use("Look", "a", 3000), use("Look", "b", 1000), use("Look", "c", 2000)]),
        TestModel.text("done")
      ])
      const events = yield* runFor(context, 10_000)
      assert.strictEqual(events[events.length - 1]!._tag, "TurnComplete")
      assert.deepStrictEqual(yield* requestTimes(context), [0, 3000])
      assert.deepStrictEqual(yield* Ref.get(log), [
        "start a @0",
        "start b @0",
        "start c @0",
        "end b @1000",
        "end c @2000",
        "end a @3000"
      ])
      // Finished b, c, a; answered a, b, c.
      assert.deepStrictEqual(yield* resultsOf(state), [["a", "done a"], ["b", "done b"], ["c", "done c"]])
    }))

  it.scoped("serial calls add up: three unsafe calls of 1, 2 and 3 s send the next request at t=6 s", () =>
    Effect.gen(function*() {
      const { context, log } = yield* setup([
        TestModel.reply([use("Change", "a", 1000), use("Change", "b", 2000), use("Change", "c", 3000)]),
        TestModel.text("done")
      ])
      yield* runFor(context, 10_000)
      assert.deepStrictEqual(yield* requestTimes(context), [0, 6000])
      assert.deepStrictEqual(yield* Ref.get(log), [
        "start a @0",
        "end a @1000",
        "start b @1000",
        "end b @3000",
        "start c @3000",
        "end c @6000"
      ])
    }))

  it.scoped("an unsafe call waits for the safe ones before it, and the safe ones after it wait for it", () =>
    Effect.gen(function*() {
      const { context, log, state } = yield* setup([
        TestModel.reply([use("Look", "a", 2000), use("Look", "b", 1000), use("Change", "c", 1000), use("Look", "d", 500)]),
        TestModel.text("done")
      ])
      yield* runFor(context, 10_000)
      assert.deepStrictEqual(yield* requestTimes(context), [0, 3500])
      assert.deepStrictEqual((yield* Ref.get(log)).filter((l) => l.startsWith("start")), [
        "start a @0",
        "start b @0",
        "start c @2000",
        "start d @3000"
      ])
      assert.deepStrictEqual((yield* resultsOf(state)).map(([id]) => id), ["a", "b", "c", "d"])
    }))

  it.scoped("at most maxConcurrency safe calls run at once; the next starts when one ends", () =>
    Effect.gen(function*() {
      const { context, log } = yield* setup([
        TestModel.reply([use("Look", "a", 1000), use("Look", "b", 3000), use("Look", "c", 1000)]),
        TestModel.text("done")
      ], { maxConcurrency: 2 })
      yield* runFor(context, 10_000)
      assert.deepStrictEqual((yield* Ref.get(log)).filter((l) => l.startsWith("start")), [
        "start a @0",
        "start b @0",
        "start c @1000"
      ])
      assert.deepStrictEqual(yield* requestTimes(context), [0, 3000])
    }))

  it.scoped("a call starts as soon as its tool_use block is complete, while the answer still streams", () =>
    Effect.gen(function*() {
      const answer = TestModel.reply([use("Look", "early", 2000), use("Look", "late", 1000)])
      // The first block stops at event 3 (message_start, block start, input delta, block stop);
      // the rest of the answer arrives 5 s later.
      const firstStop = answer.events.findIndex((e) => e.type === "content_block_stop")
      const { context, log, state } = yield* setup([
        { ...answer, pauses: [{ after: firstStop, delay: "5 seconds" }] },
        TestModel.text("done")
      ])
      const fiber = yield* Effect.fork(runTurn(context))
      yield* TestClock.adjust(3000)
      // The answer has not ended, and the early call has already run to its end.
      assert.deepStrictEqual(yield* Ref.get(log), ["start early @0", "end early @2000"])
      assert.deepStrictEqual(yield* Ref.get(state.messages).pipe(Effect.map((ms) => ms.length)), 1)
      yield* TestClock.adjust(10_000)
      const events = yield* Fiber.join(fiber)
      assert.deepStrictEqual(yield* Ref.get(log), [
        "start early @0",
        "end early @2000",
        "start late @5000",
        "end late @6000"
      ])
      // The results come after the assistant message, in tool_use order.
      const tags = events.filter((e) => e._tag === "Assistant" || e._tag === "ToolResults").map((e) => e._tag)
      assert.deepStrictEqual(tags, ["Assistant", "ToolResults", "Assistant"])
      assert.deepStrictEqual(yield* requestTimes(context), [0, 6000])
      assert.deepStrictEqual((yield* resultsOf(state)).map(([id]) => id), ["early", "late"])
    }))

  it.scoped("a failing Shell call cancels its running siblings and the calls queued after it", () =>
    Effect.gen(function*() {
      const { context, log, state } = yield* setup([
        TestModel.reply([
          use("Look", "slow", 10_000),
          use("Shell", "broken", 1000, true),
          use("Look", "other", 5000),
          use("Change", "queued", 1000)
        ]),
        TestModel.text("done")
      ])
      yield* runFor(context, 20_000)
      const entries = yield* Ref.get(log)
      assert.deepStrictEqual(entries.slice(0, 4), ["start slow @0", "start broken @0", "start other @0", "end broken @1000"])
      // Both siblings are interrupted at once (in no set order); the queued call never starts.
      assert.deepStrictEqual([...entries.slice(4)].sort(), ["interrupted other @1000", "interrupted slow @1000"])
      // The model hears back at t=1 s, not t=10 s.
      assert.deepStrictEqual(yield* requestTimes(context), [0, 1000])
      const cancelled = "<tool_use_error>Cancelled: parallel tool call Shell(broken) errored</tool_use_error>"
      assert.deepStrictEqual(yield* resultsOf(state), [
        ["slow", cancelled],
        ["broken", "<tool_use_error>broken failed</tool_use_error>"],
        ["other", cancelled],
        ["queued", cancelled]
      ])
      assert.deepStrictEqual(Invariants.violations(yield* Ref.get(state.messages)), [])
    }))

  it.scoped("a failing call of a tool that does not cancel siblings leaves them running", () =>
    Effect.gen(function*() {
      const { context, state } = yield* setup([
        TestModel.reply([use("Look", "slow", 3000), use("Look", "broken", 1000, true)]),
        TestModel.text("done")
      ])
      yield* runFor(context, 10_000)
      assert.deepStrictEqual(yield* requestTimes(context), [0, 3000])
      assert.deepStrictEqual(yield* resultsOf(state), [
        ["slow", "done slow"],
        ["broken", "<tool_use_error>broken failed</tool_use_error>"]
      ])
    }))

  it.scoped("calls started by an answer that is then retracted are stopped and forgotten; the retry's calls run", () =>
    Effect.gen(function*() {
      const first = TestModel.reply([use("Look", "void", 60_000), use("Look", "never", 1000)])
      const firstStop = first.events.findIndex((e) => e.type === "content_block_stop")
      const { context, log, state } = yield* setup([
        // The stream breaks after the first block completed: its call has started.
        TestModel.fail(
          new ModelError.StreamTruncated({ message: "the stream ended early" }),
          first.events.slice(0, firstStop + 1)
        ),
        TestModel.reply([use("Look", "real", 1000)]),
        TestModel.text("done")
      ], { retry: true })
      yield* runFor(context, 30_000)
      const entries = yield* Ref.get(log)
      assert.deepStrictEqual(entries[0], "start void @0")
      assert.match(entries[1]!, /^interrupted void @\d+$/)
      assert.deepStrictEqual(entries.slice(2).map((e) => e.replace(/ @\d+$/, "")), ["start real", "end real"])
      assert.deepStrictEqual(yield* resultsOf(state), [["real", "done real"]])
      assert.deepStrictEqual(Invariants.violations(yield* Ref.get(state.messages)), [])
    }))

  it.scoped("progress ticks every second while a call runs, and messages a tool emits reach the output", () =>
    Effect.gen(function*() {
      const { context } = yield* setup([
        TestModel.reply([use("Look", "long", 2500), TestModel.toolUse("Narrate", { text: "hello" }, "n")]),
        TestModel.text("done")
      ])
      const events = yield* runFor(context, 10_000)
      const progress = events.flatMap((e) => e._tag === "ToolProgress" ? [[e.toolUseId, e.toolName, e.elapsedSeconds]] : [])
      assert.deepStrictEqual(progress, [["long", "Look", 1], ["long", "Look", 2]])
      const reported = events.flatMap((e) => (e._tag === "ToolReported" ? [[e.toolUseId, e.event]] as const : []))
      assert.deepStrictEqual(
        reported.map(([id, r]) => [id, r._tag === "SubagentPrompt" ? Message.toParam(r.message).content : r._tag]),
        [["n", "hello"]]
      )
    }))
})
