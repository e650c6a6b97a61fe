/**
 * TodoWrite: the session's task list replaced on each call, lists with several tasks in progress
 * refused, Claude Code's answer, and no permission needed (but deny rules still apply).
 */
import { assert, describe, it } from "@effect/vitest"
import { Permissions, type SdkMessage, Session, SessionState, SessionStore, TestModel } from "@keel/core"
import { Testing } from "@keel/core/testing"
import { TodoWrite } from "@keel/tools"
import { Chunk, Effect, Either, Layer, Ref, Schema, Stream } from "effect"
import { err, ok } from "./support/Outcome.js"

const write = (todos: ReadonlyArray<SessionState.Todo>) =>
  TodoWrite.tool.call({ todos }, { toolUseId: "toolu_todo", cwd: "/work" }).pipe(Effect.either)

const inSession = Layer.effect(SessionState.SessionState, SessionState.make("s"))

const plan: ReadonlyArray<SessionState.Todo> = [
  { content: "Read the code", status: "completed", activeForm: "Reading the code" },
  { content: "Fix the bug", status: "in_progress", activeForm: "Fixing the bug" },
  { content: "Run the tests", status: "pending", activeForm: "Running the tests" }
]

describe("TodoWrite", () => {
  it.effect("replaces the session's task list and answers with Claude Code's text", () =>
    Effect.gen(function*() {
      const state = yield* SessionState.SessionState
      assert.deepStrictEqual(yield* Ref.get(state.todos), [])
      assert.strictEqual(ok(yield* write(plan)), TodoWrite.SUCCESS)
      assert.isTrue(TodoWrite.SUCCESS.startsWith("Todos have been modified successfully."))
      assert.deepStrictEqual(yield* Ref.get(state.todos), plan)
      const next: ReadonlyArray<SessionState.Todo> = [{ content: "Run the tests", status: "in_progress", activeForm: "Running the tests" }]
      ok(yield* write(next))
      assert.deepStrictEqual(yield* Ref.get(state.todos), next, "the list is replaced, not appended to")
      ok(yield* write([]))
      assert.deepStrictEqual(yield* Ref.get(state.todos), [])
    }).pipe(Effect.provide(inSession)))

  it.effect("a list with two tasks in progress is refused, naming them, and the list stays as it was", () =>
    Effect.gen(function*() {
      const state = yield* SessionState.SessionState
      ok(yield* write(plan))
      const message = err(yield* write([
        { content: "Fix the bug", status: "in_progress", activeForm: "Fixing the bug" },
        { content: "Run the tests", status: "in_progress", activeForm: "Running the tests" }
      ]))
      assert.include(message, "2 tasks are in_progress (\"Fix the bug\", \"Run the tests\")")
      assert.include(message, "exactly one in_progress")
      assert.deepStrictEqual(yield* Ref.get(state.todos), plan)
    }).pipe(Effect.provide(inSession)))

  it("outside a session there is no list to keep: the compiler refuses the call (the session state is its requirement)", () => {
    const runAlone = <A, E>(effect: Effect.Effect<A, E, never>) => effect
    // @ts-expect-error TodoWrite's call requires SessionState
    runAlone(write(plan))
    // With a session state it compiles: the state is all the call lacks.
    runAlone(write(plan).pipe(Effect.provide(inSession)))
  })

  it("the input takes Claude Code's statuses only, and non-empty content and activeForm", () => {
    const decode = Schema.decodeUnknownEither(TodoWrite.Input)
    assert.isTrue(Either.isRight(decode({ todos: plan })))
    assert.isTrue(Either.isLeft(decode({ todos: [{ content: "x", status: "done", activeForm: "Xing" }] })))
    assert.isTrue(Either.isLeft(decode({ todos: [{ content: "", status: "pending", activeForm: "Xing" }] })))
    assert.isTrue(Either.isLeft(decode({ todos: [{ content: "x", status: "pending" }] })))
  })

  it("needs no permission in any mode (it is not read-only), but a deny rule still denies it", () => {
    const input = { todos: plan }
    assert.isFalse(TodoWrite.tool.isReadOnly(input))
    assert.isFalse(TodoWrite.tool.isConcurrencySafe(input))
    const decide = (rules: Parameters<typeof Permissions.config>[0]) =>
      Permissions.decide(Permissions.config(rules).config, {
        toolName: "TodoWrite",
        input,
        isReadOnly: TodoWrite.tool.isReadOnly(input),
        toolUseId: "t",
        cwd: "/work"
      })._tag
    for (const mode of ["default", "plan", "dontAsk", "acceptEdits"] as const) assert.strictEqual(decide({ mode }), "Allow", mode)
    assert.strictEqual(decide({ deny: ["TodoWrite"] }), "Deny")
    assert.strictEqual(decide({ ask: ["TodoWrite"] }), "Ask")
    // Another tool that writes still asks: the exemption is TodoWrite's, not every non-read-only tool's.
    assert.strictEqual(
      Permissions.decide(Permissions.config({}).config, { toolName: "Write", input: {}, isReadOnly: false, toolUseId: "t", cwd: "/work" })._tag,
      "Ask"
    )
  })

  it.scoped("in a headless session (no one to ask), the model's TodoWrite call runs and the list is kept", () =>
    Effect.gen(function*() {
      const session = yield* Session.make({ model: "claude-sonnet-4-6", cwd: "/work" })
      const messages = yield* Stream.runCollect(session.submit("plan the work")).pipe(Effect.map(Chunk.toReadonlyArray))
      const toolResult = messages.find((m): m is SdkMessage.User => m.type === "user")!
      assert.deepStrictEqual(toolResult.message.content, [{ type: "tool_result", tool_use_id: "toolu_todo", content: TodoWrite.SUCCESS }])
      assert.deepStrictEqual(yield* Ref.get((yield* session.state).todos), plan)
      const result = messages.at(-1) as SdkMessage.Result
      assert.strictEqual(result.is_error, false)
      assert.deepStrictEqual(result.permission_denials, [])
    }).pipe(Effect.provide(Testing.layer(
      [TestModel.reply([TestModel.toolUse("TodoWrite", { todos: plan }, "toolu_todo")]), TestModel.text("planned")],
      { tools: [TodoWrite.tool], permissions: Permissions.layer(Permissions.config({}).config), store: SessionStore.layerNoop }
    ))))
})
