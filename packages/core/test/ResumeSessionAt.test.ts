/**
 * Message uuids and `resumeSessionAt`: the SDK messages of a prompt's answers and tool results carry
 * their transcript entries' uuids; a fork cut at one of them has the history up to it (an answer's
 * tool calls answered as interrupted), the totals and envelopes of then, and leaves the source file as it was; a
 * uuid that is no message of the session fails with `MessageNotFound` and writes nothing.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { FileState, Message, MessageIds, SdkProjection, Session, SessionStore, TestModel, Tool, ToolRuntime } from "@keel/core"
import type { SdkMessage } from "@keel/core"
import { Effect, Either, Layer, Ref, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { collect, encodeMessage, layerFor, ownScope, plain, release } from "./support/Sessions.js"

const tmp = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix))

/** `Read` that records the file in the session's file state, as the built-in one does. */
const read = Tool.make({
  name: "Read",
  description: "Reads a file",
  input: Schema.Struct({ file_path: Schema.String }),
  isReadOnly: true,
  call: (input) =>
    Effect.gen(function*() {
      yield* FileState.record(input.file_path, fs.statSync(input.file_path).mtimeMs)
      return fs.readFileSync(input.file_path, "utf8")
    })
})

const storeLayer = (home: string) => SessionStore.layerFile({ home }).pipe(Layer.provide(NodeContext.layer))

/** Each kernel stands for a process of its own: a seed of its own, so ids do not repeat across them. */
let lastSeed = 100
const kernel = (script: ReadonlyArray<TestModel.ScriptItem>, home: string) =>
  layerFor(script, [read], { store: storeLayer(home), seed: ++lastSeed })

/** A session on `layer` with its scripted model, in a scope of its own. */
const openWithModel = <ROut, E>(layer: Layer.Layer<ROut, E>, options: Omit<Session.Options, "model">) =>
  ownScope(Effect.all([Session.make({ model: "claude-test", ...options }), TestModel.TestModel]).pipe(Effect.provide(layer)), ([s]) => s)

const storeAt = (home: string) => Effect.provide(SessionStore.SessionStore, storeLayer(home))

/** The transcript's entries, as JSON. */
const entries = (file: string): Array<any> =>
  fs.readFileSync(file, "utf8").split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l))

const usage = (input: number, output: number) => ({ usage: { input_tokens: input, output_tokens: output } })

/**
 * A session of two turns on file, its process done: "read small.txt" (a Read, then "It says small
 * file.") and "and then?" ("Nothing more."); with its SDK messages.
 */
const twoTurns = Effect.gen(function*() {
  const home = tmp("keel-home-")
  const cwd = tmp("keel-project-")
  const small = path.join(cwd, "small.txt")
  fs.writeFileSync(small, "small file\n")
  const [session] = yield* openWithModel(
    kernel([
      TestModel.reply([new Message.TextBlock({ text: "Reading." }), TestModel.toolUse("Read", { file_path: small }, "t1")], usage(100, 10)),
      TestModel.text("It says small file.", usage(200, 20)),
      TestModel.text("Nothing more.", usage(300, 30))
    ], home),
    { cwd }
  )
  const output = [...(yield* collect(session.submit("read small.txt"))), ...(yield* collect(session.submit("and then?")))]
  const sessionId = yield* session.sessionId
  yield* release(session)
  const store = yield* storeAt(home)
  const file = store.fileOf(cwd, sessionId)
  return { home, cwd, sessionId, output, file, store }
})

const ofType = <T extends SdkMessage.SdkMessage["type"]>(messages: ReadonlyArray<SdkMessage.SdkMessage>, type: T) =>
  messages.filter((m): m is Extract<SdkMessage.SdkMessage, { type: T }> => m.type === type)

describe("message uuids", () => {
  it.scoped("the SDK messages of answers and tool results carry their transcript entries' uuids", () =>
    Effect.gen(function*() {
      const { file, output } = yield* twoTurns
      const lines = entries(file)
      const messageEntries = lines.filter((e) => e.type === "user" || e.type === "assistant")
      const assistants = ofType(output, "assistant")
      const users = ofType(output, "user")
      assert.strictEqual(assistants.length, 3)
      assert.strictEqual(users.length, 1)
      for (const m of [...assistants, ...users]) {
        const entry = messageEntries.find((e) => e.uuid === m.uuid)
        assert.isDefined(entry, `no entry with the uuid of ${m.type} ${m.uuid}`)
        assert.strictEqual(entry.type, m.type)
        assert.deepStrictEqual(entry.message.content, m.message.content)
      }
      // Every other SDK message has a uuid no entry has.
      const others = output.filter((m) => m.type !== "assistant" && m.type !== "user")
      for (const m of others) assert.isUndefined(lines.find((e) => e.uuid === m.uuid))
    }))

  it.scoped("a resumed session's new messages too; the loaded ones keep their entries' uuids", () =>
    Effect.gen(function*() {
      const { cwd, file, home, sessionId } = yield* twoTurns
      const before = entries(file)
      const [resumed] = yield* openWithModel(kernel([TestModel.text("Still nothing.")], home), { cwd, resume: sessionId })
      const output = yield* collect(resumed.submit("more?"))
      const [answer] = ofType(output, "assistant")
      const after = entries(file)
      assert.deepStrictEqual(after.slice(0, before.length), before)
      assert.strictEqual(after.filter((e) => e.uuid === answer!.uuid).length, 1)
      // The entries' uuids are unique in the file.
      assert.strictEqual(new Set(after.map((e) => e.uuid)).size, after.length)
    }))
})

describe("message uuids in the projection", () => {
  it("one message, one uuid: asked again it is the same; results sent one per message give the last part the message's", () => {
    let n = 0
    const ids = MessageIds.make(() => `u${++n}`)
    const stamp: SdkProjection.Stamp = { sessionId: "s", uuid: () => `fresh${++n}`, messageUuid: ids.of, parentToolUseId: null }
    const results = new Message.UserMessage({
      content: [ToolRuntime.interruptedResult("a"), ToolRuntime.interruptedResult("b"), ToolRuntime.interruptedResult("c")]
    })
    const own = ids.of(results)
    assert.strictEqual(ids.of(results), own)
    const parts = SdkProjection.toolResults(results, stamp)
    assert.strictEqual(parts.length, 3)
    assert.strictEqual(parts[2]!.uuid, own)
    assert.isTrue(parts.slice(0, 2).every((p) => p.uuid.startsWith("fresh")))
    // A loaded message keeps its entry's uuid.
    const known = new WeakMap([[results, "entry-uuid"]])
    assert.strictEqual(MessageIds.make(() => "new").of(results), "new")
    assert.strictEqual(MessageIds.make(() => "new", known as WeakMap<Message.Message, string>).of(results), "entry-uuid")
  })
})

describe("resumeSessionAt", () => {
  it.scoped("a fork cut at the first turn's answer: its history, totals and envelope of then; the source untouched", () =>
    Effect.gen(function*() {
      const { cwd, file, home, output, sessionId, store } = yield* twoTurns
      const sourceBytes = fs.readFileSync(file)
      const firstAnswer = ofType(output, "assistant")[1]!
      assert.strictEqual((firstAnswer.message.content[0] as { text: string }).text, "It says small file.")
      const [fork, model] = yield* openWithModel(kernel([TestModel.text("ok")], home), {
        cwd,
        resume: sessionId,
        forkSession: true,
        resumeSessionAt: firstAnswer.uuid
      })
      const forkId = yield* fork.sessionId
      assert.notStrictEqual(forkId, sessionId)
      const state = yield* fork.state
      // The first call and the second (not the third): 300 input tokens.
      assert.strictEqual((yield* Ref.get(state.usage)).get("claude-test")!.inputTokens, 300)
      assert.strictEqual((yield* Ref.get(state.fileState)).size, 1)
      yield* collect(fork.submit("next"))
      const [request] = yield* model.requests
      const source = yield* store.load(cwd, sessionId)
      assert.deepStrictEqual(plain(request!.messages), [...plain(source.messages.slice(0, 4)), encodeMessage(Message.user("next"))])
      assert.deepStrictEqual(fs.readFileSync(file), sourceBytes)
      const forkLines = entries(store.fileOf(cwd, forkId))
      assert.deepStrictEqual(forkLines[0], { ...forkLines[0], type: "origin", source: "fork", from: sessionId })
      // The first turn's envelope, then the fork's own.
      const envelopes = forkLines.filter((e) => e.type === "envelope")
      assert.strictEqual(envelopes.length, 1)
      const loaded = yield* store.load(cwd, forkId)
      assert.strictEqual(loaded.envelopes.length, 1)
      // The carried messages keep their uuids.
      const sourceLines = entries(file)
      const carried = forkLines.filter((e) => e.type === "user" || e.type === "assistant").slice(0, 4)
      assert.deepStrictEqual(carried.map((e) => e.uuid), sourceLines.filter((e) => e.type === "user" || e.type === "assistant").slice(0, 4).map((e) => e.uuid))
    }))

  it.scoped("a cut at an answer with a tool call answers the call as interrupted (not with its later result)", () =>
    Effect.gen(function*() {
      const { cwd, home, output, sessionId, store } = yield* twoTurns
      const callingAnswer = ofType(output, "assistant")[0]!
      const [fork, model] = yield* openWithModel(kernel([TestModel.text("ok")], home), {
        cwd,
        resume: sessionId,
        forkSession: true,
        resumeSessionAt: callingAnswer.uuid
      })
      // The first call's totals only; the Read's file is not read in the fork.
      const state = yield* fork.state
      assert.strictEqual((yield* Ref.get(state.usage)).get("claude-test")!.inputTokens, 100)
      assert.strictEqual((yield* Ref.get(state.fileState)).size, 0)
      yield* collect(fork.submit("next"))
      const [request] = yield* model.requests
      const source = yield* store.load(cwd, sessionId)
      // The prompt, the answer with its call, the call answered "Interrupted by user", then "next".
      assert.deepStrictEqual(plain(request!.messages), [
        ...plain(source.messages.slice(0, 2)),
        encodeMessage(new Message.UserMessage({ content: [ToolRuntime.interruptedResult("t1")] })),
        encodeMessage(Message.user("next"))
      ])
    }))

  it.scoped("a cut at a prompt keeps its turn's envelope and ends the history at it", () =>
    Effect.gen(function*() {
      const { cwd, file, home, sessionId } = yield* twoTurns
      const secondPrompt = entries(file).filter((e) => e.type === "user" && e.message.content === "and then?")[0]
      const [fork] = yield* openWithModel(kernel([], home), { cwd, resume: sessionId, forkSession: true, resumeSessionAt: secondPrompt.uuid })
      const messages = yield* Ref.get((yield* fork.state).messages)
      assert.strictEqual(messages.length, 5)
      assert.deepStrictEqual(encodeMessage(messages[4]!), encodeMessage(Message.user("and then?")))
    }))

  it.scoped("a uuid that is no message of the session fails with MessageNotFound, and nothing is written", () =>
    Effect.gen(function*() {
      const { cwd, file, home, sessionId, store } = yield* twoTurns
      const folder = path.dirname(file)
      const listing = fs.readdirSync(folder).sort()
      const envelope = entries(file).find((e) => e.type === "envelope")
      for (const [uuid, found] of [["00000000-0000-4000-8000-000000000000", undefined], [envelope.uuid, "envelope"]] as const) {
        const failed = yield* Effect.either(
          openWithModel(kernel([], home), { cwd, resume: sessionId, forkSession: true, resumeSessionAt: uuid })
        )
        assert.isTrue(Either.isLeft(failed))
        const error = (failed as Either.Left<any, unknown>).left
        assert.strictEqual(error._tag, "MessageNotFound")
        assert.strictEqual(error.found, found)
        assert.include(error.message, sessionId)
        assert.include(error.message, uuid)
      }
      assert.deepStrictEqual(fs.readdirSync(folder).sort(), listing)
      assert.strictEqual((yield* store.list(cwd)).length, 1)
    }))
})
