/**
 * Sessions persisted to real files in temporary folders: the transcript written as the session
 * goes, resume (messages, usage, file read state, model), resume after context rewrites and a
 * compaction (the same requests as the session that went on), fork, a process stopped mid-turn,
 * truncated, corrupt and foreign files (never overwritten), listing, concurrent sessions in one
 * folder, `/clear`, and persistence failures that do not stop a turn.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import {
  Autocompact,
  BuiltinCommands,
  ContextAssembly,
  FileState,
  Hooks,
  Ids,
  Invariants,
  Message,
  Microcompact,
  Permissions,
  Session,
  SessionStore,
  Snip,
  SummaryPrompt,
  TestModel,
  Tool,
  ToolRegistry,
  ToolResultBudget,
  ToolRuntime,
  Transcript
} from "@keel/core"
import type { ModelRequest, SdkMessage } from "@keel/core"
import { Testing } from "@keel/core/testing"
import { Effect, Either, Fiber, Layer, Option, Ref, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { collect, encodeMessage, layerFor, messagesOf, ownScope, plain, release } from "./support/Sessions.js"
import { sleeper } from "./support/Tools.js"

const tmp = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix))

/** A project folder with two files: small.txt and big.txt (over the tool result budget used below). */
const project = () => {
  const dir = tmp("keel-project-")
  fs.writeFileSync(path.join(dir, "small.txt"), "small file\n")
  fs.writeFileSync(path.join(dir, "big.txt"), "big line\n".repeat(100))
  return dir
}

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

/**
 * The seed of the next kernel's ids. Each kernel stands for a process of its own: with one seed for
 * all, two kernels would make the same session ids and transcript entry uuids.
 */
let lastSeed = 0
const nextSeed = () => ++lastSeed

/** The scripted model, no stages, Sleep and Read, and the file store under `home`. */
const kernel = (script: ReadonlyArray<TestModel.ScriptItem>, home: string) =>
  layerFor(script, [sleeper, read], { store: storeLayer(home), seed: nextSeed() })

/** As {@link kernel}, with the real stages before autocompact: a tool result budget of 300 characters, snip, microcompact keeping 1. */
const kernelWithStages = (script: ReadonlyArray<TestModel.ScriptItem>, home: string) => {
  const model = TestModel.layer(script)
  const stages = Layer.unwrapEffect(
    Effect.map(
      Effect.all([
        ToolResultBudget.make({ directory: path.join(home, "sessions"), maxResultChars: 300, previewChars: 50 }),
        Snip.make(),
        Microcompact.make({ triggerTokens: 1, keepRecent: 1 })
      ]),
      (before) => Autocompact.layer({ window: 200_000 }, before)
    )
  ).pipe(Layer.provide(model), Layer.provide(NodeContext.layer))
  return Layer.mergeAll(
    model,
    stages,
    ToolRuntime.layer().pipe(
      Layer.provideMerge(ToolRegistry.layer([sleeper, read])),
      Layer.provideMerge(Permissions.layerAllowAll)
    ),
    ContextAssembly.layerMinimal,
    storeLayer(home),
    BuiltinCommands.layer,
    Ids.layerSeeded(nextSeed()),
    Hooks.layerNone,
    Testing.fixedRandom()
  )
}

const resultOf = (messages: ReadonlyArray<SdkMessage.SdkMessage>) => messages.at(-1) as SdkMessage.Result

/** The store under `home`, outside any session. */
const storeAt = (home: string) => Effect.provide(SessionStore.SessionStore, storeLayer(home))

/** A `claude-test` session made with `options` on `layer`, in a scope of its own ({@link release}). */
const open = <ROut, E>(layer: Layer.Layer<ROut, E>, options: Omit<Session.Options, "model">) =>
  ownScope(Session.make({ model: "claude-test", ...options }).pipe(Effect.provide(layer)), (s) => s)

/** As {@link open}, with the layer's scripted model (to read the requests it was sent). */
const openWithModel = <ROut, E>(layer: Layer.Layer<ROut, E>, options: Omit<Session.Options, "model">) =>
  ownScope(Effect.all([Session.make({ model: "claude-test", ...options }), TestModel.TestModel]).pipe(Effect.provide(layer)), ([s]) => s)

/** A new home and project, and a session there whose one turn (`first`, answered `one`) is on file; with the store. */
const afterOneTurn = Effect.gen(function*() {
  const home = tmp("keel-home-")
  const cwd = project()
  const first = yield* open(kernel([TestModel.text("one")], home), { cwd })
  yield* collect(first.submit("first"))
  // Its process is done: the session is free to resume.
  yield* release(first)
  return { home, cwd, first, store: yield* storeAt(home) }
})

/** The transcript's entries, as JSON. */
const entries = (file: string): Array<any> =>
  fs.readFileSync(file, "utf8").split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l))

/** Asserts the file replays to `messages` and its entries form one chain. */
const assertTranscript = (home: string, cwd: string, session: Session.Service) =>
  Effect.gen(function*() {
    const store = yield* storeAt(home)
    const sessionId = yield* session.sessionId
    const loaded = yield* store.load(cwd, sessionId)
    assert.deepStrictEqual(plain(loaded.messages), plain(yield* messagesOf(session)))
    const lines = entries(store.fileOf(cwd, sessionId))
    lines.forEach((entry, i) => {
      assert.strictEqual(entry.parentUuid, i === 0 ? null : lines[i - 1].uuid)
      assert.strictEqual(entry.sessionId, sessionId)
      assert.strictEqual(entry.cwd, cwd)
      assert.strictEqual(entry.version, 1)
    })
    return { loaded, lines }
  })

describe("Session persistence", () => {
  it.scoped("the transcript is written as the session goes; resume restores messages, usage, file state and model", () =>
    Effect.gen(function*() {
      const home = tmp("keel-home-")
      const cwd = project()
      const small = path.join(cwd, "small.txt")
      const first = yield* open(kernel([
        TestModel.reply([TestModel.toolUse("Read", { file_path: small }, "t1")], { usage: { input_tokens: 100, output_tokens: 10 } }),
        TestModel.text("It says small file.", { usage: { input_tokens: 200, output_tokens: 20 } })
      ], home), { cwd })
      const a = resultOf(yield* collect(first.submit("read small.txt")))
      assert.strictEqual(a.result, "It says small file.")
      const { lines } = yield* assertTranscript(home, cwd, first)
      // The file state entry comes with the first checkpoint after the Read ran (it may finish before
      // its answer is recorded: calls start while the answer streams).
      // The prompt, then what its turn was built from (the system prompt once, the envelope), before the model is called.
      assert.deepStrictEqual(lines.filter((e) => e.type !== "file_state").map((e) => e.type), [
        "user",
        "system_prompt",
        "envelope",
        "model",
        "assistant",
        "usage",
        "user",
        "assistant",
        "usage"
      ])
      assert.strictEqual(lines.filter((e) => e.type === "file_state").length, 1)
      assert.strictEqual(lines[0].message.content, "read small.txt")
      // Timestamps come from the Clock (the TestClock here).
      assert.isTrue(lines.every((e) => e.timestamp === "1970-01-01T00:00:00.000Z"))
      const modelEntry = lines.find((e) => e.type === "model")
      assert.deepStrictEqual(modelEntry, { ...modelEntry, model: "claude-test", fallback: false })

      const firstId = yield* first.sessionId
      yield* release(first)
      const [second, model] = yield* openWithModel(kernel([TestModel.text("Still small.")], home), { cwd, resume: firstId })
      assert.strictEqual(yield* second.sessionId, firstId)
      const firstState = yield* first.state
      const secondState = yield* second.state
      assert.deepStrictEqual(plain(yield* Ref.get(secondState.messages)), plain(yield* Ref.get(firstState.messages)))
      assert.deepStrictEqual(yield* Ref.get(secondState.usage), yield* Ref.get(firstState.usage))
      assert.deepStrictEqual([...(yield* Ref.get(secondState.fileState))], [[small, fs.statSync(small).mtimeMs]])
      assert.strictEqual(yield* Ref.get(secondState.model), "claude-test")

      const b = resultOf(yield* collect(second.submit("and now?")))
      // The totals go on from the first session's: 300 + 10 input tokens.
      assert.strictEqual(b.modelUsage["claude-test"]!.inputTokens, 310)
      const [request] = yield* model.requests
      assert.deepStrictEqual(plain(request!.messages), [...plain(yield* messagesOf(first)), encodeMessage(Message.user("and now?"))])
      yield* assertTranscript(home, cwd, second)
    }))

  it.scoped("after snip, microcompact, the tool result budget and /compact, a resumed fork sends exactly what the original sends", () =>
    Effect.gen(function*() {
      const home = tmp("keel-home-")
      const cwd = project()
      const small = path.join(cwd, "small.txt")
      const big = path.join(cwd, "big.txt")
      const [original, originalModel] = yield* openWithModel(kernelWithStages([
        TestModel.reply([TestModel.toolUse("Read", { file_path: big }, "t1"), TestModel.toolUse("Read", { file_path: small }, "t2")]),
        TestModel.text("Read both."),
        TestModel.reply([TestModel.toolUse("Read", { file_path: small }, "t3")]),
        TestModel.reply([TestModel.toolUse("Read", { file_path: big }, "t4")]),
        // The API's count of the conversation: what a compaction must shrink.
        TestModel.text("Read again.", { usage: { input_tokens: 5_000, output_tokens: 10 } }),
        TestModel.text("SUMMARY: the user read two files."),
        TestModel.text("ok")
      ], home), { cwd })
      yield* collect(original.submit("read both files"))
      yield* assertTranscript(home, cwd, original)
      yield* collect(original.submit("read them again"))
      const { lines } = yield* assertTranscript(home, cwd, original)
      const triggers = new Set(lines.filter((e) => e.type === "rewrite").flatMap((e) => e.trigger.split(",")))
      assert.deepStrictEqual([...triggers].sort(), ["microcompact", "snip", "tool-result-budget"])
      // Every rewrite line is small: ranges for what it keeps.
      for (const e of lines.filter((e) => e.type === "rewrite")) assert.isBelow(JSON.stringify(e).length, 2_000)

      // A fork of the transcript as it is now, with its own stages (nothing remembered) and model.
      const originalId = yield* original.sessionId
      const [fork, forkModel] = yield* openWithModel(
        kernelWithStages([TestModel.text("SUMMARY: the user read two files."), TestModel.text("ok")], home),
        { cwd, resume: originalId, forkSession: true }
      )
      assert.notStrictEqual(yield* fork.sessionId, originalId)

      for (const session of [original, fork]) {
        const compacted = resultOf(yield* collect(session.submit("/compact")))
        assert.isFalse(compacted.is_error, compacted.result)
        yield* collect(session.submit("what now?"))
        yield* assertTranscript(home, cwd, session)
      }
      const lastOf = (rs: ReadonlyArray<ModelRequest.ModelRequest>) => rs.slice(-2)
      const [originalSummary, originalLast] = lastOf(yield* originalModel.requests)
      const [forkSummary, forkLast] = lastOf(yield* forkModel.requests)
      assert.include(JSON.stringify(originalSummary!.messages.at(-1)), SummaryPrompt.HEADING)
      assert.deepStrictEqual(plain(forkSummary!.messages), plain(originalSummary!.messages))
      // The original points at its transcript for detail; the fork, whose file is not written yet, does not.
      const note = SummaryPrompt.transcriptNote((yield* storeAt(home)).fileOf(cwd, originalId))
      const withoutNote = (ms: ReadonlyArray<Message.Message>) =>
        plain(ms).map((m: any) => Array.isArray(m.content) ? { ...m, content: m.content.filter((b: any) => b.text !== note) } : m)
      assert.include(JSON.stringify(originalLast!.messages[0]), JSON.stringify(note))
      assert.deepStrictEqual(withoutNote(forkLast!.messages), withoutNote(originalLast!.messages))
      assert.strictEqual(originalLast!.messages.length, 2)
      const compaction = entries((yield* storeAt(home)).fileOf(cwd, originalId)).filter((e) => e.trigger === "compact")
      assert.strictEqual(compaction.length, 1)
      assert.strictEqual(compaction[0].compaction.trigger, "manual")

      // And resuming the original after its compaction sends the compacted conversation (once it is closed).
      yield* release(original)
      const [resumed, resumedModel] = yield* openWithModel(kernelWithStages([TestModel.text("fine")], home), {
        cwd,
        resume: originalId
      })
      yield* collect(resumed.submit("one more"))
      const [request] = yield* resumedModel.requests
      assert.deepStrictEqual(plain(request!.messages), [
        ...plain(yield* messagesOf(original)),
        encodeMessage(Message.user("one more"))
      ])
    }))

  it.scoped("fork: a new id and file carrying the history; the original file is not touched", () =>
    Effect.gen(function*() {
      const { cwd, first, home, store } = yield* afterOneTurn
      const firstId = yield* first.sessionId
      const originalBytes = fs.readFileSync(store.fileOf(cwd, firstId))
      const id = "123e4567-e89b-42d3-a456-426614174000"
      const fork = yield* open(kernel([TestModel.text("two")], home), { cwd, resume: firstId, forkSession: true, sessionId: id })
      assert.strictEqual(yield* fork.sessionId, id)
      const messages = yield* collect(fork.submit("second"))
      assert.isTrue(messages.every((m) => m.session_id === id))
      assert.deepStrictEqual(fs.readFileSync(store.fileOf(cwd, firstId)), originalBytes)
      const { lines, loaded } = yield* assertTranscript(home, cwd, fork)
      assert.deepStrictEqual(lines[0], { ...lines[0], type: "origin", source: "fork", from: firstId })
      assert.deepStrictEqual(loaded.messages.map((m) => m.role), ["user", "assistant", "user", "assistant"])
      assert.deepStrictEqual(loaded.origin, { source: "fork", from: firstId })
    }))

  it.scoped("a process stopped while a tool ran: resume answers the call as interrupted and the next request is valid", () =>
    Effect.gen(function*() {
      const home = tmp("keel-home-")
      const cwd = project()
      const session = yield* open(kernel([TestModel.reply([TestModel.toolUse("Sleep", { ms: 60_000 }, "t1")])], home), { cwd })
      const fiber = yield* Effect.fork(collect(session.submit("sleep")))
      const sessionId = yield* session.sessionId
      const store = yield* storeAt(home)
      const file = store.fileOf(cwd, sessionId)
      // The assistant's call is in the file before its tool finishes (the TestClock holds the Sleep).
      // (Polled between turns of the event loop, where the store's writes complete.)
      const written = () => fs.existsSync(file) && entries(file).some((e) => e.type === "assistant")
      for (let i = 0; i < 10_000 && !written(); i++) yield* Effect.promise(() => new Promise((r) => setImmediate(r)))
      assert.isTrue(written())
      // What a crash leaves: the file as it is now, in another home.
      const crashed = tmp("keel-home-")
      const crashedFile = (yield* storeAt(crashed)).fileOf(cwd, sessionId)
      fs.mkdirSync(path.dirname(crashedFile), { recursive: true })
      fs.copyFileSync(file, crashedFile)
      yield* Fiber.interrupt(fiber)

      const [resumed, model] = yield* openWithModel(kernel([TestModel.text("Sorry, go on.")], crashed), {
        cwd,
        resume: sessionId
      })
      const history = yield* messagesOf(resumed)
      assert.deepStrictEqual(Invariants.violations(history), [])
      const answer = (history.at(-1) as Message.UserMessage).toolResults[0]!
      assert.deepStrictEqual([answer.tool_use_id, answer.is_error, answer.content], [
        "t1",
        true,
        "<tool_use_error>Interrupted by user</tool_use_error>"
      ])
      assert.strictEqual(resultOf(yield* collect(resumed.submit("go on"))).result, "Sorry, go on.")
      const [request] = yield* model.requests
      assert.deepStrictEqual(Invariants.requestViolations(request!.messages), [])
      const { lines } = yield* assertTranscript(crashed, cwd, resumed)
      // The resumed turn's envelope names the prompt the file already holds: no second system_prompt.
      assert.deepStrictEqual(lines.slice(-5).map((e) => e.type), ["user", "user", "envelope", "assistant", "usage"])
    }))

  it.scoped("a truncated last line: resume warns, cuts it and goes on; the file replays afterwards", () =>
    Effect.gen(function*() {
      const { cwd, first, home, store } = yield* afterOneTurn
      const firstId = yield* first.sessionId
      const file = store.fileOf(cwd, firstId)
      fs.appendFileSync(file, "{\"type\":\"user\",\"uuid\":\"cut-he")
      const resumed = yield* open(kernel([TestModel.text("two")], home), { cwd, resume: firstId })
      const messages = yield* collect(resumed.submit("second"))
      const warning = messages.find((m) => m.type === "system" && m.subtype === "informational") as SdkMessage.Informational
      assert.strictEqual(warning.level, "warning")
      assert.match(warning.content, /:7: the last line is incomplete \(the process stopped while writing it\); it was skipped$/)
      assert.isFalse(fs.readFileSync(file, "utf8").includes("cut-he"))
      const { loaded } = yield* assertTranscript(home, cwd, resumed)
      assert.deepStrictEqual(loaded.warnings, [])
    }))

  it.scoped("a foreign file, a bad first line, or an unknown id: resume fails naming the file and line; a bad middle line resumes; no file is touched", () =>
    Effect.gen(function*() {
      const { cwd, first, home, store } = yield* afterOneTurn
      const firstId = yield* first.sessionId
      const file = store.fileOf(cwd, firstId)
      const lines = fs.readFileSync(file, "utf8").split("\n")
      // A first line that is not JSON: nothing to resume from, and nothing touched.
      const firstBroken = ["{ this is not json", ...lines.slice(1)].join("\n")
      fs.writeFileSync(file, firstBroken)
      const resume = (id: string) => Effect.flip(open(kernel([], home), { cwd, resume: id }))
      const corrupt = yield* resume(firstId)
      assert.strictEqual(corrupt._tag, "ForeignTranscript")
      assert.match(corrupt.message, new RegExp(`^${file.replace(/[.]/g, "\\.")}:1: not a Keel transcript of this session: it is not JSON`))
      assert.strictEqual(fs.readFileSync(file, "utf8"), firstBroken)
      // A bad line in the middle: the session resumes from the entries before it, with a warning.
      lines.splice(1, 0, "{ this is not json")
      fs.writeFileSync(file, lines.join("\n"))
      const before = fs.readFileSync(file)
      const torn = yield* open(kernel([], home), { cwd, resume: firstId })
      // The stray line is skipped; the entries after it chain from the first one: all of them resume.
      assert.strictEqual((yield* Ref.get((yield* torn.state).messages)).length, 2)
      assert.deepStrictEqual(fs.readFileSync(file), before)
      yield* release(torn)

      const foreignId = "f0000000-0000-4000-8000-000000000000"
      fs.writeFileSync(store.fileOf(cwd, foreignId), "{\"type\":\"summary\",\"summary\":\"x\",\"leafUuid\":\"y\"}\n")
      const foreign = yield* resume(foreignId)
      assert.strictEqual(foreign._tag, "ForeignTranscript")
      assert.include(foreign.message, ":1: not a Keel transcript of this session")

      const missing = yield* resume("00000000-0000-4000-8000-000000000000")
      assert.strictEqual(missing._tag, "SessionNotFound")
      assert.include(missing.message, "no session 00000000-0000-4000-8000-000000000000 in")
      assert.include(missing.message, firstId)
      assert.include(missing.message, foreignId)
    }))

  it.scoped("a new session never writes over a transcript: an id in use is a warning, and the file is unchanged", () =>
    Effect.gen(function*() {
      const { cwd, first, home, store } = yield* afterOneTurn
      const firstId = yield* first.sessionId
      const file = store.fileOf(cwd, firstId)
      const before = fs.readFileSync(file)
      const again = yield* open(kernel([TestModel.text("two")], home), { cwd, sessionId: firstId })
      const messages = yield* collect(again.submit("second"))
      assert.isFalse(resultOf(messages).is_error)
      const warning = messages.find((m) => m.type === "system" && m.subtype === "informational") as SdkMessage.Informational
      assert.include(warning.content, `session ${firstId} already exists`)
      assert.deepStrictEqual(fs.readFileSync(file), before)
    }))

  it.scoped("listing: a folder's sessions newest first, with their first prompts; continue picks the latest", () =>
    Effect.gen(function*() {
      const home = tmp("keel-home-")
      const cwd = project()
      const other = project()
      const ids: Array<string> = []
      for (const prompt of ["alpha", "beta", "gamma"]) {
        const s = yield* open(kernel([TestModel.text(prompt)], home), { cwd })
        yield* collect(s.submit(`${prompt} prompt`))
        yield* release(s)
        const id = yield* s.sessionId
        ids.push(id)
        // Files written in distinct milliseconds, as sessions a person starts one after another are.
        const file = (yield* storeAt(home)).fileOf(cwd, id)
        fs.utimesSync(file, new Date(), new Date(Date.UTC(2026, 0, 1) + ids.length * 1_000))
      }
      const store = yield* storeAt(home)
      const listed = yield* store.list(cwd)
      assert.deepStrictEqual(listed.map((s) => [s.sessionId, s.firstPrompt]), [
        [ids[2], "gamma prompt"],
        [ids[1], "beta prompt"],
        [ids[0], "alpha prompt"]
      ])
      assert.deepStrictEqual(yield* store.list(other), [])
      assert.strictEqual(Option.getOrThrow(yield* store.latest(cwd)).sessionId, ids[2])
      const [continued, model] = yield* openWithModel(kernel([TestModel.text("delta")], home), { cwd, continue: true })
      assert.strictEqual(yield* continued.sessionId, ids[2])
      yield* collect(continued.submit("delta prompt"))
      assert.strictEqual(Message.toParam((yield* model.requests)[0]!.messages[0]!).content, "gamma prompt")
      const none = yield* Effect.flip(open(kernel([], home), { cwd: other, continue: true }))
      assert.strictEqual(none.message.split(":")[0], `no session to continue in ${other}`)
    }))

  it.scoped("concurrent sessions in one folder write their own files, each a valid chain", () =>
    Effect.gen(function*() {
      const home = tmp("keel-home-")
      const cwd = project()
      const small = path.join(cwd, "small.txt")
      const sessions = yield* Effect.forEach(["a", "b", "c"], (name) =>
        open(kernel([
          TestModel.reply([TestModel.toolUse("Read", { file_path: small }, `t-${name}`)]),
          TestModel.reply([TestModel.toolUse("Read", { file_path: small }, `u-${name}`)]),
          TestModel.text(`done ${name}`)
        ], home), { cwd }))
      // The three turns run at once; their writes interleave on the file system.
      const results = yield* Effect.forEach(sessions, (s, i) => collect(s.submit(`prompt ${i}`)), { concurrency: "unbounded" })
      assert.deepStrictEqual(results.map((r) => resultOf(r).result), ["done a", "done b", "done c"])
      const store = yield* storeAt(home)
      assert.strictEqual((yield* store.list(cwd)).length, 3)
      for (const [i, s] of sessions.entries()) {
        const { loaded } = yield* assertTranscript(home, cwd, s)
        assert.strictEqual(loaded.firstPrompt, `prompt ${i}`)
        assert.strictEqual(loaded.messages.length, 6)
      }
    }))

  it.scoped("/clear starts a new session: new id, empty conversation, new file; the old file is left as it is; no model call", () =>
    Effect.gen(function*() {
      const home = tmp("keel-home-")
      const cwd = project()
      const [session, model] = yield* openWithModel(kernel([TestModel.text("one"), TestModel.text("two")], home), { cwd })
      yield* collect(session.submit("first"))
      const old = yield* session.sessionId
      const store = yield* storeAt(home)
      const oldBytes = fs.readFileSync(store.fileOf(cwd, old))
      const cleared = yield* collect(session.submit("/clear"))
      const now = yield* session.sessionId
      assert.notStrictEqual(now, old)
      const state = yield* session.state
      assert.strictEqual(state.sessionId, now)
      assert.deepStrictEqual(cleared.map((m) => m.type), ["system", "result"])
      assert.deepStrictEqual([(cleared[0] as SdkMessage.SystemInit).subtype, cleared[0]!.session_id], ["init", now])
      const result = resultOf(cleared)
      assert.deepStrictEqual([result.is_error, result.session_id, result.num_turns], [false, now, 0])
      assert.include(result.result, `Started a new session, ${now}`)
      assert.include(result.result, `--resume ${old}`)
      assert.strictEqual((yield* model.requests).length, 1)
      assert.deepStrictEqual(yield* Ref.get(state.messages), [])
      assert.strictEqual((yield* Ref.get(state.usage)).size, 0)
      assert.deepStrictEqual(entries(store.fileOf(cwd, now)).map((e) => [e.type, e.source, e.from]), [
        ["origin", "clear", old]
      ])
      assert.deepStrictEqual(fs.readFileSync(store.fileOf(cwd, old)), oldBytes)

      const next = yield* collect(session.submit("fresh start"))
      assert.strictEqual(yield* session.sessionId, now)
      assert.isTrue(next.every((m) => m.session_id === now))
      assert.deepStrictEqual(plain((yield* model.requests)[1]!.messages), [encodeMessage(Message.user("fresh start"))])
      const { loaded } = yield* assertTranscript(home, cwd, session)
      assert.deepStrictEqual(loaded.origin, { source: "clear", from: old })
      assert.deepStrictEqual(fs.readFileSync(store.fileOf(cwd, old)), oldBytes)
    }))

  it.scoped("persist: false writes nothing (and can still resume); without a store nothing is written", () =>
    Effect.gen(function*() {
      const { cwd, first, home, store } = yield* afterOneTurn
      const firstId = yield* first.sessionId
      const before = fs.readFileSync(store.fileOf(cwd, firstId))
      const [quiet, model] = yield* openWithModel(kernel([TestModel.text("two")], home), {
        cwd,
        resume: firstId,
        persist: false
      })
      yield* collect(quiet.submit("second"))
      assert.strictEqual((yield* model.requests)[0]!.messages.length, 3)
      assert.deepStrictEqual(fs.readFileSync(store.fileOf(cwd, firstId)), before)
      const fresh = yield* open(kernel([TestModel.text("x")], home), { cwd, persist: false })
      yield* collect(fresh.submit("nothing saved"))
      assert.deepStrictEqual((yield* store.list(cwd)).map((s) => s.sessionId), [firstId])
    }))

  it.scoped("a transcript that cannot be written is a warning; the turn goes on", () =>
    Effect.gen(function*() {
      const cwd = project()
      const home = path.join(tmp("keel-home-"), "a-file")
      fs.writeFileSync(home, "not a folder")
      // A model with a price, so no other warning shows.
      const model = "claude-sonnet-4-6"
      const session = yield* Session.make({ model, cwd }).pipe(
        Effect.provide(kernel([TestModel.text("one", { model }), TestModel.text("two", { model })], home))
      )
      const messages = yield* collect(session.submit("first"))
      assert.deepStrictEqual(messages.map((m) => m.type), ["system", "system", "assistant", "result"])
      const warning = messages[1] as SdkMessage.Informational
      assert.deepStrictEqual([warning.subtype, warning.level], ["informational", "warning"])
      assert.match(warning.content, /^could not save the session: could not write .*; the session goes on without saving$/)
      assert.strictEqual(resultOf(messages).result, "one")
      // Once stopped, the recorder does not try again (no half-written file is continued).
      const second = yield* collect(session.submit("second"))
      assert.deepStrictEqual(second.map((m) => m.type), ["assistant", "result"])
    }))

  it.scoped("the store's errors are one line; a file replayed by the store and by Transcript.parse agree", () =>
    Effect.gen(function*() {
      const { cwd, first: session, home, store } = yield* afterOneTurn
      const sessionId = yield* session.sessionId
      const file = store.fileOf(cwd, sessionId)
      const parsed = Either.getOrThrow(Transcript.parse(fs.readFileSync(file), { file, sessionId }))
      const loaded = yield* store.load(cwd, sessionId)
      assert.deepStrictEqual(plain(parsed.messages), plain(loaded.messages))
      assert.strictEqual(path.dirname(file), path.join(home, "projects", SessionStore.slug(cwd)))
      assert.strictEqual(SessionStore.slug("/a/b c.d"), "-a-b-c-d")
      const long = "/" + "x".repeat(300)
      assert.strictEqual(SessionStore.slug(long).length, 200 + 1 + 12)
      assert.notStrictEqual(SessionStore.slug(long), SessionStore.slug(long + "y"))
      const bad = yield* Effect.flip(store.load(cwd, "../escape"))
      assert.strictEqual(bad._tag, "SessionNotFound")
      assert.notInclude(bad.message, "\n")
    }))
})
