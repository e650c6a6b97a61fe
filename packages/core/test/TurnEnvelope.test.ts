/**
 * The turn input envelope: its schema round-trips through a transcript line; a session writes one
 * per turn (after the prompt, before the model call) with the fields it claims, and its system
 * prompt once per file, by hash; a resumed session (or a fork) sends the recorded prompt and
 * context instead of assembling them again, while a transcript without envelopes, `/clear` and
 * `/context refresh` assemble afresh; `/context` reports from the envelope.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  BuiltinCommands,
  Commands,
  ContextAssembly,
  ContextSnapshot,
  Environment,
  GitContext,
  Message,
  Session,
  SessionStore,
  SystemPrompt,
  TestModel,
  Tool,
  Transcript,
  TranscriptEntry,
  TurnEnvelope
} from "@keel/core"
import type { SdkMessage } from "@keel/core"
import { Effect, Either, Layer, Schema } from "effect"
import * as path from "node:path"
import { collect, layerFor, ownScope, release } from "./support/Sessions.js"

const cwd = "/work/project"
const home = "/keel"
const encoder = new TextEncoder()

/** A snapshot whose git status names `commit` (what a commit between runs changes). */
const snapshotAt = (commit: number) =>
  ContextSnapshot.make({
    files: [],
    memory: false,
    environment: new Environment.Environment({ cwd, isGitRepository: true, platform: "linux 6.8.0", date: "2025-06-01" }),
    git: new GitContext.GitContext({
      root: cwd,
      branch: "main",
      defaultBranch: "main",
      status: commit === 1 ? " M a.ts" : "",
      statusCut: false,
      recentCommits: `c0ffee${commit} commit ${commit}`,
      user: "Keel Tester"
    }),
    cut: []
  })

/**
 * An assembly that counts its calls and builds a prompt whose git section changes with each (as
 * after a commit), with its snapshot.
 */
const countingAssembly = () => {
  const calls = { n: 0 }
  const assembly = ContextAssembly.ContextAssembly.of({
    assemble: () =>
      Effect.sync(() => {
        calls.n++
        const snapshot = snapshotAt(calls.n)
        return SystemPrompt.make(
          [SystemPrompt.section("base", "You are Keel.")],
          [SystemPrompt.section("environment", GitContext.render(snapshot.git!))],
          snapshot
        )
      })
  })
  return { calls, layer: Layer.succeed(ContextAssembly.ContextAssembly, assembly) }
}

/** A `Read` that answers every file with one line (for `@` mentions). */
const read = Tool.make({
  name: "Read",
  description: "Reads a file",
  input: Schema.Struct({ file_path: Schema.String }),
  isReadOnly: true,
  call: () => Effect.succeed("     1\tnotes")
})

/** An embedder's command that runs a prompt on its own model. */
const review: Commands.Command = {
  name: "review",
  description: "Review a file",
  source: "embedder",
  run: (args) =>
    Effect.succeed(Commands.CommandResult.Prompt({ prompt: Message.user(`Review ${args} carefully.`), model: "claude-opus-4-6" }))
}

/** One "process": the scripted model, the counting assembly, the shared in-memory store, its own id seed. */
const kernel = (
  script: ReadonlyArray<TestModel.ScriptItem>,
  store: SessionStore.Service,
  assembly: Layer.Layer<ContextAssembly.ContextAssembly>,
  seed: number
) =>
  Layer.merge(
    layerFor(script, [read], {
      store: Layer.succeed(SessionStore.SessionStore, store),
      seed,
      commands: Commands.layerAppend([review]).pipe(Layer.provide(BuiltinCommands.layer))
    }),
    assembly
  )

/** The entries of session `id`'s file, as JSON. */
const entriesOf = (files: SessionStore.Files, id: string) =>
  Effect.map(files.read(`${home}/projects/${SessionStore.slug(cwd)}/${id}.jsonl`), (bytes) =>
    new TextDecoder().decode(bytes._tag === "Some" ? bytes.value : new Uint8Array()).split("\n").filter((l) => l !== "").map(
      (l) => JSON.parse(l)
    ))

const resultText = (messages: ReadonlyArray<SdkMessage.SdkMessage>) => (messages.at(-1) as SdkMessage.Result).result!

describe("TurnEnvelope", () => {
  it("round-trips through a transcript line: the entry decodes to the envelope, the prompt to its record", () => {
    const prompt = SystemPrompt.make(
      [SystemPrompt.section("base", "You are Keel.")],
      [SystemPrompt.section("environment", "gitStatus: ..."), SystemPrompt.section("append", "Be brief.")],
      snapshotAt(1)
    )
    const record = TurnEnvelope.recordOf({ prompt, request: SystemPrompt.toRequest(prompt) })
    assert.strictEqual(record.hash, TurnEnvelope.hashOf({ stable: record.stable, dynamic: record.dynamic }))
    assert.match(record.hash, /^[0-9a-f]{64}$/)
    const envelope = TurnEnvelope.withUserEntry(
      TurnEnvelope.make({
        turnId: "turn-1",
        prepared: { record, context: { source: "assembled", snapshot: prompt.context! } },
        routing: { model: "claude-sonnet-4-6", fallbacks: ["claude-haiku-4-5"], reason: "flag" },
        toolPolicy: {
          tools: ["Read", "Bash"],
          toolsHash: TurnEnvelope.sha256("[]"),
          permissionMode: "acceptEdits",
          allow: ["Bash(npm test:*)"],
          deny: ["Read(./.env)"],
          ask: [],
          additionalDirectories: ["../shared"]
        },
        user: TurnEnvelope.userInputOf(Message.user("explain @a.ts"), {
          typed: "explain @a.ts",
          attachments: [`${cwd}/a.ts`],
          command: { name: "review", args: "a.ts" }
        }),
        metadata: { ticket: "K-1", nested: { n: 1 } }
      }),
      "u-1"
    )
    const base = { sessionId: "s", timestamp: "1970-01-01T00:00:00.000Z", cwd, version: TranscriptEntry.VERSION } as const
    const lines = [
      TranscriptEntry.encodeLine({ type: "user", uuid: "u-1", parentUuid: null, ...base, message: Message.user("explain @a.ts") }),
      TranscriptEntry.encodeLine({ type: "system_prompt", uuid: "p-1", parentUuid: "u-1", ...base, ...record }),
      TranscriptEntry.encodeLine({ type: "envelope", uuid: "e-1", parentUuid: "p-1", ...base, ...envelope })
    ]
    const json = JSON.parse(lines[2]!)
    assert.deepStrictEqual(
      [json.format, json.turnId, json.systemPrompt, json.context.source, json.context.snapshot.git.status, json.user.entry],
      [1, "turn-1", record.hash, "assembled", " M a.ts", "u-1"]
    )
    const parsed = Transcript.parse(encoder.encode(lines.join("")), { file: "f.jsonl", sessionId: "s" })
    if (Either.isLeft(parsed)) return assert.fail(parsed.left.message)
    assert.deepStrictEqual(parsed.right.envelopes, [envelope])
    assert.deepStrictEqual([...parsed.right.prompts.values()], [record])
    assert.deepStrictEqual(TurnEnvelope.recordedOf(parsed.right), { context: envelope.context, record })
    // The recorded prompt, as an assembly's output again: without the run's own appended section.
    const assembled = TurnEnvelope.assembledOf(record, envelope.context.snapshot) as SystemPrompt.SystemPrompt
    assert.deepStrictEqual(assembled.dynamic.map((s) => s.name), ["environment"])
  })

  it("an envelope naming a system prompt that no entry before it stores is a corrupt transcript", () => {
    const base = { sessionId: "s", timestamp: "1970-01-01T00:00:00.000Z", cwd, version: TranscriptEntry.VERSION } as const
    const envelope = TurnEnvelope.make({
      turnId: "t",
      prepared: { record: { hash: "f".repeat(64) }, context: { source: "custom" } },
      routing: { model: "m", fallbacks: [], reason: "default" },
      toolPolicy: TurnEnvelope.toolPolicyOf([], { mode: "default", allow: [], deny: [], ask: [] }),
      user: TurnEnvelope.userInputOf(Message.user("hi"))
    })
    const line = TranscriptEntry.encodeLine({ type: "envelope", uuid: "e", parentUuid: null, ...base, ...envelope })
    const parsed = Transcript.parse(encoder.encode(line), { file: "f.jsonl", sessionId: "s" })
    assert.isTrue(Either.isLeft(parsed))
    if (Either.isLeft(parsed)) assert.include(parsed.left.message, "which no entry before it stores")
  })
})

describe("TurnEnvelope in a session", () => {
  it.scoped("one envelope per turn, after its prompt and before the model call; the system prompt once per file, by hash", () =>
    Effect.gen(function*() {
      const files = SessionStore.memoryFiles()
      const store = SessionStore.make({ home, files })
      const assembly = countingAssembly()
      const layer = kernel(
        [TestModel.text("one"), TestModel.text("two"), TestModel.text("three"), TestModel.text("four")],
        store,
        assembly.layer,
        1
      )
      const session = yield* Session.make({ model: "claude-sonnet-4-6", cwd, fallbackModels: ["claude-haiku-4-5"] }).pipe(
        Effect.provide(layer)
      )
      yield* collect(session.submit("first"))
      yield* collect(session.submit("/model opus"))
      yield* collect(session.submit("look at @notes.md", { turnId: "turn-2", metadata: { ticket: "K-1" } }))
      yield* collect(session.submit("/review a.ts"))
      assert.strictEqual(assembly.calls.n, 1)
      const lines = yield* entriesOf(files, yield* session.sessionId)
      const prompts = lines.filter((e) => e.type === "system_prompt")
      const envelopes = lines.filter((e) => e.type === "envelope")
      assert.strictEqual(prompts.length, 1)
      assert.strictEqual(envelopes.length, 3)
      assert.isTrue(envelopes.every((e) => e.systemPrompt === prompts[0].hash && e.format === 1))
      // Each envelope follows its user message and comes before the answer.
      for (const envelope of envelopes) {
        const at = lines.indexOf(envelope)
        const user = lines.find((e) => e.uuid === envelope.user.entry)
        assert.isBelow(lines.indexOf(user), at)
        assert.strictEqual(lines.slice(at).find((e) => e.type === "assistant" || e.type === "user")?.type, "assistant")
      }
      const [first, second, third] = envelopes
      assert.match(first.turnId, /^[0-9a-f-]{36}$/)
      assert.deepStrictEqual(first.routing, { model: "claude-sonnet-4-6", fallbacks: ["claude-haiku-4-5"], reason: "default" })
      assert.deepStrictEqual(
        [first.context.source, first.context.snapshot.git.status, first.context.snapshot.environment.date],
        ["assembled", " M a.ts", "2025-06-01"]
      )
      assert.deepStrictEqual(first.user, { entry: first.user.entry, text: "first", attachments: [], blocks: 1 })
      assert.deepStrictEqual(
        [first.toolPolicy.tools, first.toolPolicy.permissionMode, first.toolPolicy.toolsHash.length],
        [["Read"], "bypassPermissions", 64]
      )
      assert.strictEqual(first.metadata, undefined)
      // The caller's id and metadata; the files @ mentions attached; the model /model switched to.
      assert.deepStrictEqual([second.turnId, second.metadata], ["turn-2", { ticket: "K-1" }])
      assert.deepStrictEqual(
        [second.user.text, second.user.attachments, second.user.blocks],
        ["look at @notes.md", [path.join(cwd, "notes.md")], 3]
      )
      assert.deepStrictEqual(second.routing, { model: "claude-opus-4-6", fallbacks: ["claude-haiku-4-5"], reason: "switch" })
      // A command's prompt: the text it expanded to, the command, its model for this turn.
      assert.deepStrictEqual(
        [third.user.text, third.user.command, third.routing.model, third.routing.reason],
        ["Review a.ts carefully.", { name: "review", args: "a.ts" }, "claude-opus-4-6", "command"]
      )
      // The transcript replays to the same envelopes.
      const loaded = yield* store.load(cwd, yield* session.sessionId)
      assert.deepStrictEqual(loaded.envelopes.map((e) => e.turnId), envelopes.map((e) => e.turnId))
      assert.deepStrictEqual([...loaded.prompts.keys()], [prompts[0].hash])
    }))

  it.scoped("resume and fork send the recorded prompt and context (nothing assembled); an old transcript assembles", () =>
    Effect.gen(function*() {
      const files = SessionStore.memoryFiles()
      const store = SessionStore.make({ home, files })
      const assembly = countingAssembly()
      const [first, firstModel] = yield* ownScope(Effect.all([Session.make({ model: "m", cwd }), TestModel.TestModel]).pipe(
        Effect.provide(kernel([TestModel.text("one")], store, assembly.layer, 1))
      ), ([s]) => s)
      yield* collect(first.submit("first"))
      const id = yield* first.sessionId
      const [sent] = yield* firstModel.requests
      yield* release(first)

      // A commit since: the assembly would now say commit 2. The resumed session does not ask it.
      const [resumed, resumedModel] = yield* ownScope(Effect.all([Session.make({ model: "m", cwd, resume: id }), TestModel.TestModel]).pipe(
        Effect.provide(kernel([TestModel.text("two")], store, assembly.layer, 2))
      ), ([s]) => s)
      const context = resultText(yield* collect(resumed.submit("/context")))
      // What the last turn was sent (the first run's), and that the next turn sends it again.
      assert.include(context, "context assembled when the session started")
      assert.include(context, "Git: main · 1 changed · last commit c0ffee1 commit 1")
      assert.include(context, "Next turn: the same system prompt, kept from the resumed session")
      yield* collect(resumed.submit("next"))
      const [again] = yield* resumedModel.requests
      assert.deepStrictEqual(again!.system, sent!.system)
      assert.strictEqual(again!.systemStableBlocks, sent!.systemStableBlocks)
      assert.strictEqual(assembly.calls.n, 1)
      const lines = yield* entriesOf(files, id)
      assert.strictEqual(lines.filter((e) => e.type === "system_prompt").length, 1)
      const envelopes = lines.filter((e) => e.type === "envelope")
      assert.deepStrictEqual(envelopes.map((e) => e.context.source), ["assembled", "resumed"])
      assert.deepStrictEqual(envelopes[1].context.snapshot, envelopes[0].context.snapshot)
      assert.strictEqual(envelopes[1].systemPrompt, envelopes[0].systemPrompt)

      // A fork carries the prompt into its own file, stored there once.
      const fork = yield* Session.make({ model: "m", cwd, resume: id, forkSession: true }).pipe(
        Effect.provide(kernel([TestModel.text("three")], store, assembly.layer, 3))
      )
      yield* collect(fork.submit("forked"))
      const forked = yield* entriesOf(files, yield* fork.sessionId)
      assert.deepStrictEqual(forked.filter((e) => e.type === "system_prompt").map((e) => e.hash), [envelopes[0].systemPrompt])
      assert.strictEqual(forked.find((e) => e.type === "envelope").context.source, "resumed")
      assert.strictEqual(assembly.calls.n, 1)

      // The same transcript as a Keel before envelopes wrote it: resuming it assembles, as before.
      yield* release(resumed)
      const old = lines.filter((e) => e.type !== "system_prompt" && e.type !== "envelope")
        .map((e, i, all) => ({ ...e, parentUuid: i === 0 ? null : all[i - 1].uuid }))
      const file = store.fileOf(cwd, id)
      yield* files.truncate(file, 0)
      yield* files.append(file, encoder.encode(old.map((e) => JSON.stringify(e) + "\n").join("")), false)
      const [legacy, legacyModel] = yield* Effect.all([Session.make({ model: "m", cwd, resume: id }), TestModel.TestModel]).pipe(
        Effect.provide(kernel([TestModel.text("four")], store, assembly.layer, 4))
      )
      yield* collect(legacy.submit("after the upgrade"))
      const [fresh] = yield* legacyModel.requests
      assert.strictEqual(assembly.calls.n, 2)
      assert.include(JSON.stringify(fresh!.system), "commit 2")
      const upgraded = (yield* entriesOf(files, id)).filter((e) => e.type === "envelope")
      assert.deepStrictEqual(upgraded.map((e) => e.context.source), ["assembled"])
    }))

  it.scoped("on resume the run's own appendSystemPrompt applies to the recorded prompt: the same one gives the same bytes", () =>
    Effect.gen(function*() {
      const files = SessionStore.memoryFiles()
      const store = SessionStore.make({ home, files })
      const assembly = countingAssembly()
      const options = { model: "m", cwd, appendSystemPrompt: "Be brief." } as const
      const [first, firstModel] = yield* ownScope(Effect.all([Session.make(options), TestModel.TestModel]).pipe(
        Effect.provide(kernel([TestModel.text("one")], store, assembly.layer, 1))
      ), ([s]) => s)
      yield* collect(first.submit("first"))
      const id = yield* first.sessionId
      yield* release(first)
      // Each resume runs and ends (its lock released) before the next.
      const again = (append: string | undefined, seed: number) =>
        Effect.all([Session.make({ model: "m", cwd, resume: id, appendSystemPrompt: append }), TestModel.TestModel]).pipe(
          Effect.flatMap(([session, model]) => Effect.zipRight(collect(session.submit("next")), model.requests)),
          Effect.provide(kernel([TestModel.text("two")], store, assembly.layer, seed)),
          Effect.scoped
        )
      const [sent] = yield* firstModel.requests
      const [same] = yield* again("Be brief.", 2)
      assert.deepStrictEqual(same!.system, sent!.system)
      const [without] = yield* again(undefined, 3)
      assert.deepStrictEqual(without!.system, (sent!.system as ReadonlyArray<{ readonly type: "text"; readonly text: string }>).slice(0, -1))
      assert.strictEqual(assembly.calls.n, 1)
    }))

  it.scoped("/clear and /context refresh assemble afresh; a custom prompt is the same on resume", () =>
    Effect.gen(function*() {
      const files = SessionStore.memoryFiles()
      const store = SessionStore.make({ home, files })
      const assembly = countingAssembly()
      const [session, model] = yield* Effect.all([Session.make({ model: "m", cwd }), TestModel.TestModel]).pipe(
        Effect.provide(kernel(
          [TestModel.text("one"), TestModel.text("two"), TestModel.text("three")],
          store,
          assembly.layer,
          1
        ))
      )
      yield* collect(session.submit("first"))
      const refresh = resultText(yield* collect(session.submit("/context refresh")))
      assert.include(refresh, "Refreshed the context: instruction files, environment and git as they are now.")
      assert.include(refresh, "Next turn: system prompt sha256")
      assert.include(refresh, "context rebuilt by /context refresh")
      assert.include(refresh, "last commit c0ffee2 commit 2")
      assert.strictEqual(assembly.calls.n, 2)
      yield* collect(session.submit("after the refresh"))
      const refreshedId = yield* session.sessionId
      const refreshed = (yield* entriesOf(files, refreshedId)).filter((e) => e.type === "envelope" || e.type === "system_prompt")
      assert.deepStrictEqual(refreshed.map((e) => e.type), ["system_prompt", "envelope", "system_prompt", "envelope"])
      assert.deepStrictEqual(refreshed[3].context.source, "refreshed")
      assert.strictEqual(refreshed[3].systemPrompt, refreshed[2].hash)

      yield* collect(session.submit("/clear"))
      yield* collect(session.submit("after clear"))
      assert.strictEqual(assembly.calls.n, 3)
      const requests = yield* model.requests
      assert.include(JSON.stringify(requests[2]!.system), "commit 3")
      const cleared = (yield* entriesOf(files, yield* session.sessionId)).filter((e) => e.type === "envelope")
      assert.deepStrictEqual(cleared.map((e) => e.context.source), ["assembled"])
      const bad = yield* collect(session.submit("/context now"))
      assert.isTrue((bad.at(-1) as SdkMessage.Result).is_error)

      // A prompt the embedder gives: nothing assembled, recorded as custom, sent as given again on resume.
      const custom = { model: "m", cwd, systemPrompt: "Be brief." } as const
      const [mine, mineModel] = yield* ownScope(Effect.all([Session.make(custom), TestModel.TestModel]).pipe(
        Effect.provide(kernel([TestModel.text("ok")], store, assembly.layer, 5))
      ), ([s]) => s)
      yield* collect(mine.submit("hi"))
      yield* release(mine)
      const [resumedMine, resumedModel] = yield* Effect.all([
        Session.make({ ...custom, resume: yield* mine.sessionId }),
        TestModel.TestModel
      ]).pipe(Effect.provide(kernel([TestModel.text("ok")], store, assembly.layer, 6)))
      yield* collect(resumedMine.submit("again"))
      assert.strictEqual((yield* mineModel.requests)[0]!.system, "Be brief.")
      assert.strictEqual((yield* resumedModel.requests)[0]!.system, "Be brief.")
      assert.strictEqual(assembly.calls.n, 3)
      const customEnvelopes = (yield* entriesOf(files, yield* mine.sessionId)).filter((e) => e.type === "envelope")
      assert.deepStrictEqual(customEnvelopes.map((e) => [e.context.source, e.context.snapshot]), [
        ["custom", undefined],
        ["custom", undefined]
      ])
    }))
})
