/**
 * Under the testing layer, the same script gives the same session, byte for byte: its SDK messages
 * and its transcript on disk (ids, timestamps, retries with jitter, tool rounds, a second turn).
 */
import { assert, describe, it } from "@effect/vitest"
import { ModelError, Session, SessionStore, TestModel } from "@keel/core"
import { Testing } from "@keel/core/testing"
import { Effect, Layer, Option, Stream, TestContext } from "effect"
import { sleeper } from "./support/Tools.js"

const overloaded = new ModelError.Overloaded({ message: "Overloaded", status: 529 })

/**
 * One scripted session in a fresh store, under fresh virtual time: its output and its transcript's
 * bytes. (Transcripts in memory: real file writes would race the virtual clock. The bytes are the
 * file store's: the same encoder writes both.)
 */
const runOnce = Effect.gen(function*() {
  const files = SessionStore.memoryFiles()
  const home = "/keel"
  const script = [
    TestModel.reply([TestModel.toolUse("Sleep", { ms: 1500 })]),
    TestModel.fail(overloaded),
    TestModel.text("Rested, after a retry."),
    TestModel.reply([TestModel.toolUse("Sleep", { ms: 10 }), TestModel.toolUse("Sleep", { ms: 20 })]),
    TestModel.text("Done twice.")
  ]
  const store = Layer.succeed(SessionStore.SessionStore, SessionStore.make({ home, files }))
  const output = yield* Effect.gen(function*() {
    const session = yield* Session.make({ model: "claude-sonnet-4-6", cwd: "/work/project" })
    const first = yield* Testing.runFor("1 minute", Stream.runCollect(session.submit("sleep, then say so")))
    const second = yield* Testing.runFor("1 minute", Stream.runCollect(session.submit("twice more")))
    return [...first, ...second].map((m) => JSON.stringify(m))
  }).pipe(
    Effect.scoped,
    Effect.provide(Testing.layer(script, { tools: [sleeper], store, resilience: {} })),
    Effect.provide(TestContext.TestContext)
  )
  const folder = `${home}/projects/${SessionStore.slug("/work/project")}`
  const listed = yield* files.list(folder)
  const bytes = yield* files.read(`${folder}/${listed[0]!.name}`)
  return { output, files: listed.map((f) => f.name), transcript: new TextDecoder().decode(Option.getOrThrow(bytes)) }
})

describe("determinism under the testing layer", () => {
  it.effect("two runs of the same scripted session write byte-identical transcripts and SDK messages", () =>
    Effect.gen(function*() {
      const a = yield* runOnce
      const b = yield* runOnce
      assert.deepStrictEqual(a.files, b.files)
      assert.strictEqual(a.transcript, b.transcript)
      assert.deepStrictEqual(a.output, b.output)
      // Not trivially equal: a real session with a retry, tool rounds and distinct ids.
      assert.include(a.output.join("\n"), "\"subtype\":\"api_retry\"")
      assert.strictEqual(a.output.filter((line) => line.includes("\"type\":\"result\"")).length, 2)
      const uuids = a.output.map((line) => JSON.parse(line).uuid as string)
      assert.strictEqual(new Set(uuids).size, uuids.length)
      assert.match(uuids[0]!, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      assert.isAbove(a.transcript.split("\n").length, 8)
    }))

  it.effect("another seed gives other ids (the ids come from the seed, not from a constant)", () =>
    Effect.gen(function*() {
      const idOf = (seed: number) =>
        Effect.gen(function*() {
          const session = yield* Session.make({ model: "claude-test", cwd: "/work" })
          return yield* session.sessionId
        }).pipe(Effect.scoped, Effect.provide(Testing.layer([], { seed })))
      assert.strictEqual(yield* idOf(7), yield* idOf(7))
      assert.notStrictEqual(yield* idOf(7), yield* idOf(8))
    }))
})
