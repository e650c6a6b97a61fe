/**
 * Durable turns, in the kernel: a recorded session is "crashed" by cutting its transcript after the
 * answer whose tool calls were running, and its journal at the moment of the crash (one call
 * finished, one started, one never started); the session resumed with what the journal recorded
 * (`DurableTurn.recover`) runs the open turn on when its runtime resumes: the finished call keeps
 * its recorded result (not run again), the idempotent call cut short runs again, the one never
 * started runs, a call cut short that is not idempotent is answered as cut short. Also the pure
 * parts: which turn is open across processes, where a conversation can run on from, idempotence.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  DurableTurn,
  type JournalEntry,
  Message,
  RecordedResults,
  Session,
  SessionRuntime,
  SessionStore,
  TestModel,
  Tool
} from "@keel/core"
import { Testing, VirtualTime } from "@keel/core/testing"
import { Effect, Layer, Option, Ref, Schema, Stream, TestContext } from "effect"

const runs = { count: 0, look: 0, nap: 0, cut: 0 }
/** A tool of `name` whose calls count in `runs[key]`. */
const counting = (name: string, key: keyof typeof runs, isReadOnly: boolean, isConcurrencySafe = isReadOnly) =>
  Tool.make({
    name,
    description: name,
    input: Schema.Struct({}),
    isReadOnly,
    isConcurrencySafe,
    call: () => Effect.sync(() => `${name} run ${++runs[key]}`)
  })
// Look and Cut run side by side (both concurrency-safe); only Look is idempotent.
const tools = [
  counting("Count", "count", false),
  counting("Look", "look", true),
  counting("Cut", "cut", false, true),
  counting("Nap", "nap", false)
]

const home = "/keel"
const cwd = "/work/project"
const folder = `${home}/projects/${SessionStore.slug(cwd)}`

/**
 * The session as a crash left it: recorded to the end, then its transcript cut after the answer
 * with the four calls, and its journal cut where Count had finished, Look and Cut had started, and
 * Nap had not.
 */
const crashed = Effect.gen(function*() {
  const files = SessionStore.memoryFiles()
  const store = Layer.succeed(SessionStore.SessionStore, SessionStore.make({ home, files }))
  const script = [
    TestModel.reply([TestModel.toolUse("Count", {}), TestModel.toolUse("Look", {}), TestModel.toolUse("Cut", {}), TestModel.toolUse("Nap", {})]),
    TestModel.text("done")
  ]
  const { journal, sessionId } = yield* Effect.gen(function*() {
    const session = yield* Session.make({ model: "claude-test", cwd })
    yield* VirtualTime.run(Stream.runDrain(session.submit("go")))
    return { journal: yield* Testing.journal, sessionId: yield* session.sessionId }
  }).pipe(Effect.scoped, Effect.provide(Testing.layer(script, { tools, store })), Effect.provide(TestContext.TestContext))
  const file = `${folder}/${sessionId}.jsonl`
  const text = new TextDecoder().decode(Option.getOrThrow(yield* files.read(file)))
  const answer = text.indexOf("\n", text.indexOf("\"name\":\"Count\"")) + 1
  yield* files.truncate(file, new TextEncoder().encode(text.slice(0, answer)).length)
  const ids = new Map<string, string>()
  for (const e of journal) if (e.type === "tool_start") ids.set(e.name, e.id)
  // Count ended; Look and Cut started and never ended; Nap never started; the turn never ended.
  const cut = journal.filter((e) =>
    !(e.type === "tool_start" && e.id === ids.get("Nap")) &&
    !(e.type === "tool_end" && e.id !== ids.get("Count")) &&
    e.type !== "turn_end" &&
    !((e.type === "call" || e.type === "chunk" || e.type === "end") && e.call === 2)
  )
  return { store, sessionId, cut, ids }
})

describe("a recorded session resumed after a crash mid-turn", () => {
  it.effect("runs the open turn on: recorded results kept, the idempotent call run again, the unstarted one run, the other answered cut short", () =>
    Effect.gen(function*() {
      const { cut, ids, sessionId, store } = yield* crashed
      const before = { ...runs }
      const { requests, result } = yield* Effect.gen(function*() {
        const session = yield* Session.make({ model: "claude-test", cwd, resume: sessionId, recovered: DurableTurn.recover(cut) })
        const runtime = yield* SessionRuntime.make(session)
        const resumed = yield* runtime.resume
        yield* VirtualTime.run(runtime.idle)
        const model = yield* TestModel.TestModel
        return { requests: yield* model.requests, result: resumed }
      }).pipe(Effect.scoped, Effect.provide(Testing.layer([TestModel.text("after the crash")], { tools, store })), Effect.provide(TestContext.TestContext))
      assert.isDefined(result.resumedTurn)
      // Count finished before the crash: not run again. Look (read-only) ran again; Nap ran once; Cut did not.
      assert.deepStrictEqual(
        { count: runs.count - before.count, look: runs.look - before.look, nap: runs.nap - before.nap, cut: runs.cut - before.cut },
        { count: 0, look: 1, nap: 1, cut: 0 }
      )
      assert.strictEqual(requests.length, 1)
      const last = requests[0]!.messages.at(-1)!
      assert.isTrue(last instanceof Message.UserMessage)
      const results = (last as Message.UserMessage).toolResults.map((b) => [b.tool_use_id, b.is_error === true, JSON.stringify(b.content)])
      assert.deepStrictEqual(results, [
        [ids.get("Count"), false, JSON.stringify(`Count run ${before.count}`)],
        [ids.get("Look"), false, JSON.stringify(`Look run ${before.look + 1}`)],
        [ids.get("Cut"), true, JSON.stringify(`<tool_use_error>${RecordedResults.CUT_SHORT}</tool_use_error>`)],
        [ids.get("Nap"), false, JSON.stringify(`Nap run ${before.nap + 1}`)]
      ])
    }))

  it.effect("without the journal's word that the turn was open, nothing runs on: the cut calls are answered from the journal", () =>
    Effect.gen(function*() {
      const { cut, sessionId, store } = yield* crashed
      const closed: ReadonlyArray<JournalEntry.Entry> = [...cut, { type: "turn_end", turn: 1, at: 0 }]
      const before = { ...runs }
      const { messages, resumed } = yield* Effect.gen(function*() {
        const session = yield* Session.make({ model: "claude-test", cwd, resume: sessionId, recovered: DurableTurn.recover(closed) })
        const runtime = yield* SessionRuntime.make(session)
        const resumed = yield* runtime.resume
        return { resumed, messages: yield* Ref.get((yield* session.state).messages) }
      }).pipe(Effect.scoped, Effect.provide(Testing.layer([], { tools, store })), Effect.provide(TestContext.TestContext))
      assert.isUndefined(resumed.resumedTurn)
      assert.deepStrictEqual(runs, before)
      const results = (messages.at(-1) as Message.UserMessage).toolResults
      assert.deepStrictEqual(results.map((b) => b.is_error === true), [false, true, true, true])
    }))
})

describe("DurableTurn", () => {
  const start = (turn: number): JournalEntry.Entry => ({ type: "turn_start", turn, at: 0, prompt: null })
  const end = (turn: number): JournalEntry.Entry => ({ type: "turn_end", turn, at: 0 })
  const header: JournalEntry.Entry = { type: "journal", version: 1, startedAt: 0 }

  it("isOpen: the last turn started and did not end, across the processes of a session", () => {
    assert.isFalse(DurableTurn.isOpen([header]))
    assert.isTrue(DurableTurn.isOpen([header, start(1)]))
    assert.isFalse(DurableTurn.isOpen([header, start(1), end(1)]))
    // A second process that started no turn: the first's open turn is still open.
    assert.isTrue(DurableTurn.isOpen([header, start(1), end(1), start(2), header]))
    // It ran the turn on (its own turn 1) to the end; a turn_end of another number closes nothing.
    assert.isFalse(DurableTurn.isOpen([header, start(2), header, start(1), end(1)]))
    assert.isTrue(DurableTurn.isOpen([header, start(2), header, start(1), end(2)]))
  })

  it("continuation: from a user message, or an answer whose calls wait; not from a whole answer", () => {
    const user = new Message.UserMessage({ content: "hi" })
    const calls = new Message.AssistantMessage({ content: [new Message.ToolUseBlock({ id: "t1", name: "Look", input: {} })] })
    const whole = new Message.AssistantMessage({ content: [new Message.TextBlock({ text: "done" })] })
    assert.isUndefined(DurableTurn.continuation([]))
    assert.deepStrictEqual(DurableTurn.continuation([user]), [user])
    assert.deepStrictEqual(DurableTurn.continuation([user, calls]), [user, calls])
    assert.isUndefined(DurableTurn.continuation([user, whole]))
  })

  it("isIdempotent: the tool's word, else isReadOnly; an unknown tool, a bad input or a throwing predicate is not", () => {
    const use = (input: unknown) => new Message.ToolUseBlock({ id: "t", name: "X", input })
    const look = tools[1]!
    const strict = Tool.make({
      name: "Strict",
      description: "",
      input: Schema.Struct({ n: Schema.Number }),
      isReadOnly: false,
      isIdempotent: (i) => i.n > 0,
      call: () => Effect.succeed("")
    })
    const throwing = { ...look, isIdempotent: () => { throw new Error("no") } }
    assert.isTrue(DurableTurn.isIdempotent(look, use({})))
    assert.isFalse(DurableTurn.isIdempotent(tools[0], use({})))
    assert.isFalse(DurableTurn.isIdempotent(undefined, use({})))
    assert.isTrue(DurableTurn.isIdempotent(strict, use({ n: 1 })))
    assert.isFalse(DurableTurn.isIdempotent(strict, use({ n: 0 })))
    assert.isFalse(DurableTurn.isIdempotent(strict, use({ n: "1" })))
    assert.isFalse(DurableTurn.isIdempotent(throwing, use({})))
  })

  it("RecordedResults: a call run again after a resume is judged by its last run", () => {
    const calls = RecordedResults.of([
      header,
      { type: "tool_start", id: "t", name: "Look", at: 0, input: {} },
      header,
      { type: "tool_start", id: "t", name: "Look", at: 0, input: {} },
      { type: "tool_end", id: "t", at: 5, outcome: "done", output: "seen" }
    ])
    assert.strictEqual(calls("t")?._tag, "Finished")
    assert.isUndefined(calls("other"))
  })
})
