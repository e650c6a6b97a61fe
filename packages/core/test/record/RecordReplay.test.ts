/**
 * Record, then replay: a session with a 429 retry, a tool round, a stalled stream the idle watchdog
 * cuts, three 529s and a fallback, and an autocompact runs under the testing layer (which journals
 * every model call); replayed from its journal alone (no script), it reproduces the transcript, the
 * SDK messages and the journal byte for byte. A changed system prompt makes the replay diverge at
 * the first call, naming the field, with a diff.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Autocompact, JournalEntry, ModelError, ReplayModel, Session, SessionStore, TestModel, Tool } from "@keel/core"
import { Testing, VirtualTime } from "@keel/core/testing"
import { Effect, Either, Layer, Option, Schema, Stream, TestContext } from "effect"
import { sleeper } from "../support/Tools.js"

const rateLimited = new ModelError.RateLimited({ message: "Rate limited", status: 429, headers: { "retry-after": "2" } })
const overloaded = new ModelError.Overloaded({ message: "Overloaded", status: 529 })

const script: ReadonlyArray<TestModel.ScriptItem> = [
  TestModel.fail(rateLimited),
  // An answer that takes 3 s to start and pauses 1 s mid-stream: replayed at the same offsets.
  {
    ...TestModel.reply([TestModel.toolUse("Sleep", { ms: 1500 }), TestModel.toolUse("Count", {})]),
    delay: "3 seconds",
    pauses: [{ after: 1, delay: "1 second" }]
  },
  // Half an answer, then silence: the idle watchdog cuts it and the call is retried.
  { events: TestModel.text("half an answer that never ends").events.slice(0, 3), stall: true },
  TestModel.fail(overloaded),
  TestModel.fail(overloaded),
  TestModel.fail(overloaded),
  // On the fallback model: a tool call whose usage puts the context over the autocompact threshold.
  TestModel.reply([TestModel.toolUse("Sleep", { ms: 10 })], { usage: { input_tokens: 30_000, output_tokens: 5 } }),
  TestModel.text("SUMMARY: the user wants two sleeps."),
  TestModel.text("Slept twice.")
]

/** `Count`: a tool with a side effect, to tell a call served from the journal from one run again. */
const runs = { count: 0 }
const counter = Tool.make({
  name: "Count",
  description: "Counts",
  input: Schema.Struct({}),
  isReadOnly: false,
  call: () => Effect.sync(() => `run ${++runs.count}`)
})

const options = (store: Layer.Layer<SessionStore.SessionStore>) => ({
  tools: [sleeper, counter],
  store,
  resilience: { idleTimeout: "5 seconds", fallbackModels: ["claude-fallback"] },
  context: Autocompact.layer({ window: 40_000 }).pipe(Layer.provide(NodeContext.layer))
}) as const

const home = "/keel"
const cwd = "/work/project"

/** One session in a fresh store under fresh virtual time: its SDK messages, transcript and journal. */
const runWith = (layerFor: (store: Layer.Layer<SessionStore.SessionStore>) => Layer.Layer<any>, systemPrompt?: string) =>
  Effect.gen(function*() {
    const files = SessionStore.memoryFiles()
    const store = Layer.succeed(SessionStore.SessionStore, SessionStore.make({ home, files }))
    const { journal, output, replay } = yield* Effect.gen(function*() {
      const session = yield* Session.make({ model: "claude-sonnet-4-6", cwd, ...(systemPrompt ? { systemPrompt } : {}) })
      const messages = yield* VirtualTime.run(Stream.runCollect(session.submit("sleep twice")))
      const replay = yield* Effect.serviceOption(ReplayModel.Replay)
      return {
        output: [...messages].map((m) => JSON.stringify(m)),
        journal: yield* Testing.journal,
        replay: Option.isSome(replay) ? { divergence: yield* replay.value.divergence, served: yield* replay.value.served } : undefined
      }
    }).pipe(Effect.scoped, Effect.provide(layerFor(store)), Effect.provide(TestContext.TestContext))
    const folder = `${home}/projects/${SessionStore.slug(cwd)}`
    const listed = yield* files.list(folder)
    const bytes = yield* files.read(`${folder}/${listed[0]!.name}`)
    return { output, journal, replay, transcript: new TextDecoder().decode(Option.getOrThrow(bytes)) }
  })

const record = runWith((store) => Testing.layer(script, options(store)))
const replay = (entries: ReadonlyArray<JournalEntry.Entry>, systemPrompt?: string, replayTools?: "live" | "recorded") =>
  runWith((store) => Testing.layerReplay(entries, { ...options(store), replayTools }), systemPrompt)

describe("record and replay", () => {
  it.effect("the recorded session has what it claims: a retry, a stall, a fallback, a compaction and tool rounds", () =>
    Effect.gen(function*() {
      const { journal, output } = yield* record
      const all = output.join("\n")
      assert.include(all, "\"subtype\":\"api_retry\"")
      assert.include(all, "\"subtype\":\"compact_boundary\"")
      assert.include(all, "claude-fallback")
      assert.include(all, "slept 1500")
      const offsets = journal.flatMap((e) => e.type === "chunk" && e.call === 2 ? [e.at] : [])
      assert.deepStrictEqual([offsets[0], offsets.at(-1)], [3_000, 4_000])
      const ends = journal.filter((e) => e.type === "end").map((e) => e.type === "end" ? e.outcome + (e.error ? `:${e.error._tag}` : "") : "")
      assert.deepStrictEqual(ends, [
        "failed:RateLimited",
        "done",
        "interrupted",
        "failed:Overloaded",
        "failed:Overloaded",
        "failed:Overloaded",
        "done",
        "done",
        "done"
      ])
      // Each distinct body once; every call names one.
      const bodies = journal.filter((e) => e.type === "body")
      assert.strictEqual(new Set(bodies.map((b) => b.type === "body" && b.hash)).size, bodies.length)
      assert.strictEqual(journal[0]!.type, "journal")
      // The turn, with what was submitted, around its calls.
      const turns = journal.filter((e) => e.type === "turn_start" || e.type === "turn_end")
      assert.deepStrictEqual(turns.map((e) => [e.type, e.turn]), [["turn_start", 1], ["turn_end", 1]])
      assert.isTrue(turns[0]!.type === "turn_start" && turns[0]!.prompt === "sleep twice")
      assert.strictEqual(journal.at(-1)!.type, "turn_end")
    }))

  it.effect("a replay from the journal alone reproduces transcript, SDK messages and journal byte for byte", () =>
    Effect.gen(function*() {
      const recorded = yield* record
      // Through text, as a journal file would carry it.
      const text = recorded.journal.map(JournalEntry.encodeLine).join("\n") + "\n"
      const entries = Either.getOrThrow(JournalEntry.parse(text))
      const started = Date.now()
      const before = runs.count
      const replayed = yield* replay(entries)
      const realMs = Date.now() - started
      // The tools were served from the journal: Count did not run again, yet the transcript says "run N".
      assert.strictEqual(runs.count, before)
      assert.deepStrictEqual(replayed.replay, { divergence: Option.none(), served: 9 })
      assert.strictEqual(replayed.transcript, recorded.transcript)
      assert.deepStrictEqual(replayed.output, recorded.output)
      assert.strictEqual(replayed.journal.map(JournalEntry.encodeLine).join("\n") + "\n", text)
      // Over 2 minutes of virtual waits (backoff, retry-after, the watchdog, the tools), in far less real time.
      assert.isBelow(realMs, 5_000)
    }))

  it.effect("with live tools the replay runs them again; a tool that answers otherwise diverges at the next call, which names it", () =>
    Effect.gen(function*() {
      const recorded = yield* record
      const before = runs.count
      const replayed = yield* replay(recorded.journal, undefined, "live")
      assert.strictEqual(runs.count, before + 1)
      // Count answers "run N+1" now: the next request differs from the recording, and the replay says where.
      const divergence = Option.getOrThrow(replayed.replay!.divergence)
      assert.strictEqual(divergence.call, 3)
      assert.match(divergence.path, /^\$\.messages\[2\]\.content\[1\]\.content/)
      assert.include(divergence.diff, `- run ${before}`)
      assert.include(divergence.diff, `+ run ${before + 1}`)
    }))

  it.effect("a changed system prompt diverges at call 1, naming the field, with a diff", () =>
    Effect.gen(function*() {
      const recorded = yield* record
      const replayed = yield* replay(recorded.journal, "You are a different assistant.")
      const divergence = Option.getOrThrow(replayed.replay!.divergence)
      assert.strictEqual(divergence.call, 1)
      assert.match(divergence.path, /^\$\.system/)
      assert.include(divergence.diff, "+ You are a different assistant.")
      assert.match(divergence.diff, /^- /m)
      assert.include(divergence.message, "model call 1")
      assert.strictEqual(replayed.replay!.served, 0)
    }))

  it.effect("slash commands are journaled as submissions, so a replay that submits what was recorded makes the same requests", () =>
    Effect.gen(function*() {
      const session = (layer: Layer.Layer<any>, submissions: ReadonlyArray<string>) =>
        Effect.gen(function*() {
          const s = yield* Session.make({ model: "claude-sonnet-4-6", cwd })
          for (const prompt of submissions) yield* VirtualTime.run(Stream.runDrain(s.submit(prompt)))
          const replay = yield* Effect.serviceOption(ReplayModel.Replay)
          return {
            journal: yield* Testing.journal,
            divergence: Option.isSome(replay) ? yield* replay.value.divergence : Option.none()
          }
        }).pipe(Effect.scoped, Effect.provide(layer), Effect.provide(TestContext.TestContext))
      const recorded = yield* session(Testing.layer([TestModel.text("Hello from haiku.")]), ["/model claude-haiku-4-5", "hello"])
      const submitted = recorded.journal.flatMap((e) => e.type === "turn_start" ? [e.prompt] : [])
      assert.deepStrictEqual(submitted, ["/model claude-haiku-4-5", "hello"])
      const replayed = yield* session(Testing.layerReplay(recorded.journal), submitted as ReadonlyArray<string>)
      assert.isTrue(Option.isNone(replayed.divergence))
      // Without the command the request is for the other model, whose thinking parameters come first
      // in the body: the replay names that field.
      const skipped = yield* session(Testing.layerReplay(recorded.journal), ["hello"])
      assert.strictEqual(Option.getOrThrow(skipped.divergence).path, "$.thinking.type")
    }))
})
