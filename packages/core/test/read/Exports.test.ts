/**
 * The read model and the exports, over the transcript of a real session under the testing layer
 * (its runtime, its permission asks answered through pending actions): four turns with a Write, a
 * task list, a whole-file Read, an Edit, a call denied by a rule, a call asked about and allowed, a
 * call asked about and never answered, usage on a priced model, a goal set in the session's state
 * and an input still queued when the runtime closed. Each export is checked for what it claims:
 * the read model's turns, items, decisions, per-turn usage and cost; the handoff's goal, answers,
 * open items and files; the review's decisions and diffs; the replay case's envelopes, and its
 * requests, which must be exactly the conversations the model was sent.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  Export,
  Goal,
  Handoff,
  Message,
  Permissions,
  ReadModel,
  ReplayCase,
  Review,
  Session,
  SessionRuntime,
  SessionStore,
  TestModel,
  Tool
} from "@keel/core"
import { Actions } from "@keel/core"
import { Testing } from "@keel/core/testing"
import { Effect, Fiber, Ref, Schema, Stream } from "effect"

const cwd = "/project/notes"
const notes = `${cwd}/NOTES.md`
const model = "claude-sonnet-4-6"

/** File tools over a map of files, with the built-in tools' names, inputs and result wording. */
const fileTools = (files: Map<string, string>) => [
  Tool.make({
    name: "Read",
    description: "Reads a file",
    input: Schema.Struct({ file_path: Schema.String }),
    isReadOnly: true,
    call: (input) => {
      const text = files.get(input.file_path)
      if (text === undefined) return Tool.fail(`File does not exist: ${input.file_path}`)
      const lines = text.split("\n")
      if (lines.at(-1) === "") lines.pop()
      return Effect.succeed(lines.map((l, i) => `${String(i + 1).padStart(6, " ")}\t${l}`).join("\n"))
    }
  }),
  Tool.make({
    name: "Write",
    description: "Writes a file",
    input: Schema.Struct({ file_path: Schema.String, content: Schema.String }),
    isReadOnly: false,
    call: (input) =>
      Effect.sync(() => {
        const existed = files.has(input.file_path)
        files.set(input.file_path, input.content)
        return existed ? `The file ${input.file_path} has been updated.` : `File created successfully at: ${input.file_path}`
      })
  }),
  Tool.make({
    name: "Edit",
    description: "Edits a file",
    input: Schema.Struct({ file_path: Schema.String, old_string: Schema.String, new_string: Schema.String }),
    isReadOnly: false,
    call: (input) => {
      const text = files.get(input.file_path)
      if (text === undefined || !text.includes(input.old_string)) return Tool.fail("String to replace not found")
      files.set(input.file_path, text.replace(input.old_string, input.new_string))
      return Effect.succeed(`The file ${input.file_path} has been updated.`)
    }
  }),
  Tool.make({
    name: "Bash",
    description: "Runs a command",
    input: Schema.Struct({ command: Schema.String }),
    isReadOnly: false,
    call: (input) => Effect.succeed(`ran: ${input.command}`)
  }),
  Tool.make({
    name: "TodoWrite",
    description: "Keeps the task list",
    input: Schema.Struct({ todos: Schema.Array(Schema.Struct({ content: Schema.String, status: Schema.String, activeForm: Schema.String })) }),
    isReadOnly: false,
    call: () => Effect.succeed("Todos have been modified successfully.")
  })
]

const usage = { input_tokens: 1000, output_tokens: 100 }
const reply = (blocks: ReadonlyArray<Message.ContentBlock>) => TestModel.reply(blocks, { model, usage })
const text = (value: string) => TestModel.text(value, { model, usage })
const use = TestModel.toolUse

const todos = [
  { content: "Write the notes", status: "completed", activeForm: "Writing the notes" },
  { content: "Publish the notes", status: "pending", activeForm: "Publishing the notes" }
]

const script = [
  // Turn 1: a Write and the task list, then the answer.
  reply([use("Write", { file_path: notes, content: "# Notes\n\n- alpha\n- beta\n" }, "w1"), use("TodoWrite", { todos }, "t1")]),
  text("Wrote NOTES.md."),
  // Turn 2: a whole-file Read, then an Edit and a cleanup the rules deny.
  reply([use("Read", { file_path: notes }, "r1")]),
  reply([use("Edit", { file_path: notes, old_string: "- beta", new_string: "- gamma" }, "e1"), use("Bash", { command: "rm -rf build" }, "b1")]),
  text("Fixed the second item; the cleanup was denied."),
  // Turn 3: a command that asks; the test allows it.
  reply([use("Bash", { command: "npm test" }, "b2")]),
  text("The tests pass."),
  // Turn 4: a command that asks and is never answered.
  reply([use("Bash", { command: "npm publish" }, "b3")])
]

/** One price: a request of 1000 input and 100 output tokens on Sonnet 4.6 ($3 and $15 per million). */
const requestUsd = (1000 * 3 + 100 * 15) / 1_000_000

const permissions = Permissions.layerAsking(Permissions.config({ allow: ["Write", "Edit"], deny: ["Bash(rm:*)"] }).config)

const settle = Effect.repeatN(Effect.yieldNow(), 100)

/** Runs the session's four turns through its runtime, leaving one action open and one input queued; answers its id. */
const recordSession = Effect.gen(function*() {
  const session = yield* Session.make({ model, cwd })
  const state = yield* session.state
  yield* Ref.set(state.goal, { ...Goal.make("Ship the release notes", 0), status: "paused" as const })
  const rt = yield* SessionRuntime.make(session)
  const actions = yield* Actions.Actions
  const run = (prompt: string) => Effect.flatMap(rt.submit(prompt), (s) => Stream.runDrain(s.events))
  yield* run("Write the release notes")
  yield* run("Fix the second item and clean up the build")
  const third = yield* Effect.fork(run("Run the tests"))
  yield* settle
  const [asked] = yield* actions.pending
  yield* actions.respond(asked!.id, { behavior: "allow" })
  yield* Fiber.join(third)
  yield* Effect.fork(run("Publish"))
  yield* settle
  yield* rt.submit("Then update the changelog", { priority: "later" })
  yield* settle
  return { sessionId: (yield* session.state).sessionId }
})

/** The session recorded, then its transcript read back from the store as an export would. */
const recorded = Effect.gen(function*() {
  const { sessionId } = yield* Effect.scoped(recordSession)
  const store = yield* SessionStore.SessionStore
  const decoded = yield* store.loadEntries(cwd, sessionId)
  const requests = yield* Effect.flatMap(TestModel.TestModel, (m) => m.requests)
  return { decoded, requests, sessionId }
})

const layer = () => Testing.layer(script, { tools: fileTools(new Map()), permissions })

const encodeMessages = (messages: ReadonlyArray<Message.Message>) => messages.map((m) => Schema.encodeSync(Message.Message)(m))

describe("ReadModel and exports", () => {
  it.effect("the read model: turns, items in order, permission decisions, usage and cost per turn, what is open", () =>
    Effect.gen(function*() {
      const { decoded, sessionId } = yield* recorded
      const read = ReadModel.make(decoded)
      assert.strictEqual(read.format, 1)
      assert.strictEqual(read.sessionId, sessionId)
      assert.strictEqual(read.cwd, cwd)
      assert.strictEqual(read.model, model)
      assert.deepStrictEqual(read.turns.map((t) => t.prompt), [
        "Write the release notes",
        "Fix the second item and clean up the build",
        "Run the tests",
        "Publish"
      ])
      // Each turn carries its envelope's id and summary.
      const envelopes = decoded.loaded.envelopes
      assert.deepStrictEqual(read.turns.map((t) => t.turnId), envelopes.map((e) => e.turnId))
      assert.deepStrictEqual(read.turns[1]!.envelope?.allow, ["Write", "Edit"])
      assert.deepStrictEqual(read.turns[1]!.envelope?.deny, ["Bash(rm:*)"])
      assert.strictEqual(read.turns[1]!.envelope?.permissionMode, "default")

      // Items in order: calls with input, output and decision, then the answer.
      const second = read.turns[1]!
      assert.deepStrictEqual(second.items.map((i) => i._tag === "tool_call" ? `${i.name}:${i.decision.outcome}` : i._tag), [
        "Read:allowed",
        "Edit:allowed",
        "Bash:denied",
        "text"
      ])
      const calls = ReadModel.toolCalls(read)
      const byId = new Map(calls.map((c) => [c.id, c]))
      assert.deepStrictEqual(byId.get("w1")!.decision, { outcome: "allowed", by: "rule", rule: "Write", detail: "allowed by the rule Write" })
      assert.strictEqual(byId.get("r1")!.decision.by, "default")
      assert.strictEqual(byId.get("r1")!.output, "     1\t# Notes\n     2\t\n     3\t- alpha\n     4\t- beta")
      const denied = byId.get("b1")!
      assert.isTrue(denied.isError)
      assert.deepStrictEqual(denied.decision, {
        outcome: "denied",
        by: "policy",
        detail: "denied: the rule Bash(rm:*) denies it",
        rule: "Bash(rm:*)",
        mode: "default",
        message: "Permission to use Bash was denied: the rule Bash(rm:*) denies it."
      })
      const allowed = byId.get("b2")!
      assert.strictEqual(allowed.output, "ran: npm test")
      assert.strictEqual(allowed.decision.outcome, "allowed")
      assert.strictEqual(allowed.decision.by, "user")
      assert.match(allowed.decision.askedBecause!, /Bash needs permission/)
      assert.isDefined(allowed.decision.actionId)
      const waiting = byId.get("b3")!
      assert.strictEqual(waiting.decision.outcome, "pending")

      // Usage per turn: the difference of the running totals; cost from the price table.
      assert.deepStrictEqual(read.turns.map((t) => t.requests), [2, 3, 2, 1])
      assert.deepStrictEqual(read.turns.map((t) => t.usage[model]?.inputTokens), [2000, 3000, 2000, 1000])
      assert.deepStrictEqual(read.turns.map((t) => t.usage[model]?.outputTokens), [200, 300, 200, 100])
      for (const t of read.turns) assert.closeTo(t.costUsd, t.requests * requestUsd, 1e-12)
      assert.strictEqual(read.totals.requests, 8)
      assert.closeTo(read.totals.costUsd, 8 * requestUsd, 1e-12)
      assert.deepStrictEqual(read.totals.usage[model]!.inputTokens, 8000)
      assert.strictEqual(read.totals.denied, 1)

      // What is open, as the transcript left it.
      assert.deepStrictEqual(read.pendingActions.map((a) => a.request.kind === "permission" ? a.request.toolUseId : ""), ["b3"])
      assert.deepStrictEqual(read.queue.map((q) => [q.text, q.priority]), [["Then update the changelog", "later"]])
      assert.strictEqual(read.goal?.objective, "Ship the release notes")
      assert.strictEqual(read.goal?.status, "paused")
      assert.deepStrictEqual(read.todos, todos)
      assert.deepStrictEqual(read.files, { read: [notes], written: [notes], edited: [notes] })

      // Stable: a Schema, whose encoded form survives JSON and decodes to the same model.
      const json = JSON.parse(JSON.stringify(ReadModel.encode(read)))
      assert.deepStrictEqual(ReadModel.encode(Schema.decodeUnknownSync(ReadModel.ReadModel)(json)), json)
      assert.deepStrictEqual(ReadModel.encode(ReadModel.make(decoded)), ReadModel.encode(read))
      // The same, read by id from the store.
      assert.deepStrictEqual(ReadModel.encode(yield* ReadModel.load(sessionId, { cwd })), ReadModel.encode(read))
      assert.deepStrictEqual(yield* Export.load(sessionId, "review", { cwd }), Export.render(decoded, "review"))
      const missing = yield* Effect.flip(ReadModel.load("no-such-session", { cwd }))
      assert.strictEqual(missing._tag, "SessionNotFound")
    }).pipe(Effect.provide(layer())))

  it.effect("the handoff: goal, last answers, open items (pending action, queued input, unfinished task), files", () =>
    Effect.gen(function*() {
      const { decoded, sessionId } = yield* recorded
      const handoff = Handoff.make(ReadModel.make(decoded))
      assert.strictEqual(handoff.kind, "keel/handoff")
      assert.strictEqual(handoff.session.resume, `keel --resume ${sessionId}`)
      assert.strictEqual(handoff.goal?.objective, "Ship the release notes")
      assert.strictEqual(handoff.goal?.status, "paused")
      assert.deepStrictEqual(handoff.summary.answers.map((a) => [a.prompt, a.answer]), [
        ["Fix the second item and clean up the build", "Fixed the second item; the cleanup was denied."],
        ["Run the tests", "The tests pass."]
      ])
      assert.isNull(handoff.summary.compaction)
      assert.deepStrictEqual(handoff.open.pendingActions.map((a) => a.description), [
        "Bash (Bash needs permission and no rule allows this call): {\"command\":\"npm publish\"}"
      ])
      assert.deepStrictEqual(handoff.open.queued.map((q) => q.text), ["Then update the changelog"])
      assert.deepStrictEqual(handoff.open.todos.map((t) => t.content), ["Publish the notes"])
      assert.deepStrictEqual(handoff.files.edited, [notes])

      const markdown = Export.render(decoded, "handoff").text
      assert.include(markdown, `# Handoff: session ${sessionId}`)
      assert.include(markdown, "Goal (paused): Ship the release notes")
      assert.include(markdown, "The tests pass.")
      assert.include(markdown, "- [ ] Publish the notes (pending)")
      assert.include(markdown, "(later) Then update the changelog")
      assert.include(markdown, `### Edited\n\n- ${notes}`)
      const json = JSON.parse(Export.render(decoded, "handoff", { json: true }).text)
      assert.deepStrictEqual(json, Schema.encodeSync(Handoff.Handoff)(handoff))
    }).pipe(Effect.provide(layer())))

  it.effect("the review: every call with its decision, and the diffs of the edited file", () =>
    Effect.gen(function*() {
      const { decoded } = yield* recorded
      const review = JSON.parse(Export.render(decoded, "review").text) as typeof Review.Review.Encoded
      assert.strictEqual(review.kind, "keel/review")
      assert.deepStrictEqual(review.calls.map((c) => [c.id, c.name, c.decision.outcome]), [
        ["w1", "Write", "allowed"],
        ["t1", "TodoWrite", "allowed"],
        ["r1", "Read", "allowed"],
        ["e1", "Edit", "allowed"],
        ["b1", "Bash", "denied"],
        ["b2", "Bash", "allowed"],
        ["b3", "Bash", "pending"]
      ])
      const call = (id: string) => review.calls.find((c) => c.id === id)!
      assert.deepStrictEqual(call("w1").edit, {
        file: notes,
        baseline: "created",
        applied: true,
        patch: `--- /dev/null\n+++ ${notes}\n@@ -0,0 +1,4 @@\n+# Notes\n+\n+- alpha\n+- beta\n`
      })
      // The Edit's diff is the whole file's, against the content the Write recorded.
      assert.deepStrictEqual(call("e1").edit, {
        file: notes,
        baseline: "recorded",
        applied: true,
        patch: `--- ${notes}\n+++ ${notes}\n@@ -1,4 +1,4 @@\n # Notes\n \n - alpha\n-- beta\n+- gamma\n`
      })
      assert.include(call("b1").decision.message!, "Permission to use Bash was denied")
      assert.strictEqual(call("b2").decision.by, "user")
      assert.deepStrictEqual(call("b2").input, { command: "npm test" })
      assert.strictEqual(call("b2").output, "ran: npm test")
      assert.deepStrictEqual(review.files, [{
        file: notes,
        calls: ["w1", "e1"],
        created: true,
        patch: `--- /dev/null\n+++ ${notes}\n@@ -0,0 +1,4 @@\n+# Notes\n+\n+- alpha\n+- gamma\n`
      }])
      assert.deepStrictEqual(review.totals, { calls: 7, errors: 2, allowed: 5, denied: 1, asked: 2, edits: 2 })
    }).pipe(Effect.provide(layer())))

  it.effect("the replay case: envelopes and system prompts, and each request exactly as the model was sent it", () =>
    Effect.gen(function*() {
      const { decoded, requests } = yield* recorded
      const replay = Schema.decodeUnknownSync(ReplayCase.ReplayCase)(JSON.parse(Export.render(decoded, "replay").text))
      assert.strictEqual(replay.kind, "keel/replay-case")
      assert.isFalse(replay.recorded.modelStreams)
      assert.deepStrictEqual(replay.turns.map((t) => t.envelope?.turnId), decoded.loaded.envelopes.map((e) => e.turnId))
      for (const turn of replay.turns) assert.isDefined(replay.systemPrompts[turn.envelope!.systemPrompt])
      assert.deepStrictEqual(replay.turns.map((t) => t.requests.length), [2, 3, 2, 1])
      // The conversations the case holds are the ones the model got, request by request.
      const sent = ReplayCase.conversations(replay)
      assert.strictEqual(sent.length, requests.length)
      sent.forEach((messages, i) => assert.deepStrictEqual(encodeMessages(messages), encodeMessages(requests[i]!.messages)))
      // Each request's answer and the results of its calls.
      const editRequest = replay.turns[1]!.requests[1]!
      assert.deepStrictEqual(editRequest.response.toolUses.map((u) => u.id), ["e1", "b1"])
      assert.deepStrictEqual(editRequest.toolResults.map((r) => [r.tool_use_id, r.is_error === true]), [["e1", false], ["b1", true]])
      // A request carries what changed since the one before: turn 2's first keeps turn 1's last request
      // (prompt, calls, results) and adds its answer and the new prompt.
      assert.strictEqual(replay.turns[1]!.requests[0]!.messages.keep, 3)
      assert.strictEqual(replay.turns[1]!.requests[0]!.messages.append.length, 2)
    }).pipe(Effect.provide(layer())))
})
