/**
 * Task: the subagent's own transcript, system prompt and restricted tools (as its model requests
 * show them), its messages forwarded with `parent_tool_use_id`, its final answer as the result, its
 * usage added to the parent's, the parent's permissions applied to its calls, failures as error
 * results, and interruption stopping its model stream and tools.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  BaseInstructions,
  type Compactor,
  Hooks,
  Ids,
  Message,
  ModelClient,
  type ModelRequest,
  ModelError,
  Permissions,
  type Pipeline,
  type SdkMessage,
  SdkProjection,
  Session,
  SessionState,
  SessionStore,
  TestModel,
  TokenUsage,
  Tool,
  ToolRegistry,
  TurnEvent
} from "@keel/core"
import { Testing } from "@keel/core/testing"
import { Subagents, Task, TodoWrite } from "@keel/tools"
import { Chunk, Deferred, Effect, Either, Fiber, type Layer, Ref, Schema, Stream } from "effect"
import { callServices } from "./support/Calls.js"

/** A stand-in tool: answers `<name> ran`. */
const stub = (name: string, isReadOnly: boolean) =>
  Tool.make({
    name,
    description: `${name} (stub)`,
    input: Schema.Struct({ arg: Schema.optional(Schema.String) }),
    isReadOnly,
    call: () => Effect.succeed(`${name} ran`)
  })

const parentTools: ReadonlyArray<Tool.Any> = [
  stub("Read", true),
  stub("Glob", true),
  stub("Grep", true),
  stub("Bash", false),
  stub("Edit", false),
  TodoWrite.tool,
  Task.tool
]

const SUBAGENT = "You are a Keel subagent"
const systemOf = (request: ModelRequest.ModelRequest) => typeof request.system === "string" ? request.system : ""
const isSubagent = (request: ModelRequest.ModelRequest) => systemOf(request).startsWith(SUBAGENT)
/** Whether the request ends with tool results (the model asked for tools, and they ran). */
const afterTools = (request: ModelRequest.ModelRequest) => {
  const last = request.messages.at(-1)
  return last instanceof Message.UserMessage && last.toolResults.length > 0
}
const namesOf = (request: ModelRequest.ModelRequest) => (request.tools ?? []).map((t) => t.name)

/**
 * The services a tool call sees inside a session's turn: model, pipeline and compactor (none), the
 * parent's tools, permissions (default: no checks) and state, ids.
 */
const parentContext = (
  script: ReadonlyArray<TestModel.ScriptItem>,
  history: ReadonlyArray<Message.Message> = [],
  tools: ReadonlyArray<Tool.Any> = parentTools,
  permissions: Layer.Layer<Permissions.Permissions> = Permissions.layerAllowAll
) => callServices({ script, history, tools, sessionId: "parent-session", permissions })

type TaskInput = typeof Task.Input.Type

/** The model the parent session's messages are projected with (answers that name none). */
const PARENT_MODEL = "claude-sonnet-4-6"

/**
 * Calls Task directly as toolu_task, collecting what it emits as the parent session shows it: each
 * reported event projected (`SdkProjection`) as the session's turn event `ToolReported` for the call.
 */
const callTask = (input: TaskInput, tool: typeof Task.tool = Task.tool) =>
  Effect.gen(function*() {
    const parent = yield* SessionState.SessionState
    const ids = yield* Ids.Ids
    const stamp: SdkProjection.Stamp = { sessionId: parent.sessionId, uuid: ids.uuid, parentToolUseId: null }
    const emitted: Array<SdkMessage.SdkMessage> = []
    const outcome = yield* tool.call(input, {
      toolUseId: "toolu_task",
      cwd: "/work",
      emit: (event) =>
        Effect.sync(() =>
          SdkProjection.turnEvent(TurnEvent.TurnEvent.ToolReported({ toolUseId: "toolu_task", event }), stamp, PARENT_MODEL, emitted)
        )
    }).pipe(Effect.either)
    return { outcome, emitted }
  })

const answer = (e: Either.Either<Tool.CallResult, Tool.ToolError>): string => {
  if (Either.isLeft(e)) assert.fail(`expected an answer, got error: ${e.left.message}`)
  return Tool.outputOf(e.right) as string
}
const failure = (e: Either.Either<Tool.CallResult, Tool.ToolError>): string => {
  if (Either.isRight(e)) assert.fail(`expected an error, got: ${String(e.right)}`)
  return e.left.message
}

const requests = Effect.flatMap(TestModel.TestModel, (t) => t.requests)

/** A subagent that reads once, then answers `answerText`; replies carry the requested model. */
const readThenAnswer = (answerText: string): ReadonlyArray<TestModel.ScriptItem> => [
  (request) =>
    TestModel.reply([TestModel.toolUse("Read", { arg: "a.ts" }, "toolu_sub_read")], {
      model: request.model,
      usage: { input_tokens: 100, output_tokens: 10 }
    }),
  (request) => TestModel.text(answerText, { model: request.model, usage: { input_tokens: 200, output_tokens: 20 } })
]

const parentHistory: ReadonlyArray<Message.Message> = [
  Message.user("the parent's secret prompt"),
  new Message.AssistantMessage({ content: [Message.text("parent thinking out loud")], model: "claude-opus-4-6" })
]

describe("Task", () => {
  it.effect("the subagent starts a fresh transcript with its own system prompt, and its final answer is the result", () =>
    Effect.gen(function*() {
      const { outcome } = yield* callTask({ description: "Find the parser", prompt: "Where is the parser?" })
      assert.strictEqual(answer(outcome), "It is in src/parse.ts.")
      const [first, second] = yield* requests
      assert.deepStrictEqual(first!.messages.map(Message.toParam), [{ role: "user", content: "Where is the parser?" }])
      assert.notInclude(JSON.stringify(first), "secret prompt")
      assert.notInclude(JSON.stringify(first), "thinking out loud")
      assert.isTrue(systemOf(first!).startsWith(SUBAGENT))
      assert.include(systemOf(first!), "The working directory is /work.")
      // The second request continues the subagent's own conversation: prompt, its call, the result.
      assert.deepStrictEqual(second!.messages.map((m) => m.role), ["user", "assistant", "user"])
      assert.deepStrictEqual(second!.messages[2]!.content, [
        new Message.ToolResultBlock({ tool_use_id: "toolu_sub_read", content: "Read ran" })
      ])
    }).pipe(Effect.provide(parentContext(readThenAnswer("It is in src/parse.ts."), parentHistory))))

  it.effect("general-purpose is offered every tool of its parent except Task; Explore only Read, Glob and Grep", () =>
    Effect.gen(function*() {
      answer((yield* callTask({ description: "General work", prompt: "do it" })).outcome)
      answer((yield* callTask({ description: "Look around", prompt: "look", subagent_type: "Explore" })).outcome)
      const [general, explore] = yield* requests
      assert.deepStrictEqual(namesOf(general!), ["Read", "Glob", "Grep", "Bash", "Edit", "TodoWrite"])
      assert.deepStrictEqual(namesOf(explore!), ["Read", "Glob", "Grep"])
      assert.notStrictEqual(systemOf(general!), systemOf(explore!))
      assert.include(systemOf(explore!), "read-only")
    }).pipe(Effect.provide(parentContext([TestModel.text("done"), TestModel.text("looked")]))))

  it.effect("a call of a tool the subagent was not given is refused to it, naming the tools it has", () =>
    Effect.gen(function*() {
      answer((yield* callTask({ description: "Look around", prompt: "look", subagent_type: "Explore" })).outcome)
      const second = (yield* requests)[1]!
      const result = second.messages[2]!.content as ReadonlyArray<Message.ToolResultBlock>
      assert.isTrue(result[0]!.is_error)
      assert.include(String(result[0]!.content), "No such tool available: Bash. The available tools are: Read, Glob, Grep.")
    }).pipe(Effect.provide(parentContext([
      TestModel.reply([TestModel.toolUse("Bash", { arg: "rm -rf /" })]),
      TestModel.text("I could not")
    ]))))

  it.effect("the subagent's messages go out with parent_tool_use_id and the parent's session id; not its init or result", () =>
    Effect.gen(function*() {
      const { emitted, outcome } = yield* callTask({ description: "Find the parser", prompt: "Where is the parser?" })
      answer(outcome)
      assert.deepStrictEqual(emitted.map((m) => m.type), ["user", "assistant", "user", "assistant"])
      for (const m of emitted) {
        assert.strictEqual((m as SdkMessage.User).parent_tool_use_id, "toolu_task")
        assert.strictEqual(m.session_id, "parent-session")
      }
      assert.deepStrictEqual((emitted[0] as SdkMessage.User).message, { role: "user", content: "Where is the parser?" })
      const call = (emitted[1] as SdkMessage.Assistant).message.content as ReadonlyArray<{ type: string; id?: string }>
      assert.deepStrictEqual(call.map((b) => [b.type, b.id]), [["tool_use", "toolu_sub_read"]])
      const results = (emitted[2] as SdkMessage.User).message.content as ReadonlyArray<{ tool_use_id: string }>
      assert.strictEqual(results[0]!.tool_use_id, "toolu_sub_read")
      const final = (emitted[3] as SdkMessage.Assistant).message.content as ReadonlyArray<{ type: string; text?: string }>
      assert.deepStrictEqual(final.map((b) => [b.type, b.text]), [["text", "In src/parse.ts."]])
      assert.strictEqual(new Set(emitted.map((m) => m.uuid)).size, emitted.length)
    }).pipe(Effect.provide(parentContext(readThenAnswer("In src/parse.ts.")))))

  it.effect("the subagent's usage is added to the parent's, per model", () =>
    Effect.gen(function*() {
      const parent = yield* SessionState.SessionState
      yield* Ref.update(parent.usage, (u) =>
        TokenUsage.addTo(u, "claude-opus-4-6", TokenUsage.fromResponse(new Message.Usage({ input_tokens: 7, output_tokens: 3 }))))
      answer((yield* callTask({ description: "Find the parser", prompt: "Where?", model: "haiku" })).outcome)
      const usage = yield* Ref.get(parent.usage)
      assert.deepStrictEqual({ ...usage.get("claude-opus-4-6") }, {
        inputTokens: 7,
        outputTokens: 3,
        cacheReadInputTokens: 0,
        cacheCreationInputTokens: 0,
        cacheCreationEphemeral5mInputTokens: 0,
        cacheCreationEphemeral1hInputTokens: 0,
        requests: 1
      })
      assert.deepStrictEqual({ ...usage.get("claude-haiku-4-5") }, {
        inputTokens: 300,
        outputTokens: 30,
        cacheReadInputTokens: 0,
        cacheCreationInputTokens: 0,
        cacheCreationEphemeral5mInputTokens: 0,
        cacheCreationEphemeral1hInputTokens: 0,
        requests: 2
      })
    }).pipe(Effect.provide(parentContext(readThenAnswer("there")))))

  it.effect("the model: the call's (aliases resolved), else Task's option, else the model the parent is calling", () =>
    Effect.gen(function*() {
      // The turn loop sets this as each model call of the parent begins.
      yield* Ref.set((yield* SessionState.SessionState).model, "claude-opus-4-6")
      answer((yield* callTask({ description: "a", prompt: "p", model: "opus" })).outcome)
      answer((yield* callTask({ description: "b", prompt: "p", model: "claude-custom-1" })).outcome)
      answer((yield* callTask({ description: "c", prompt: "p" })).outcome)
      answer((yield* callTask({ description: "d", prompt: "p" }, Task.make({ model: "claude-sonnet-4-5" }))).outcome)
      assert.deepStrictEqual((yield* requests).map((r) => r.model), [
        "claude-opus-4-6",
        "claude-custom-1",
        "claude-opus-4-6", // the parent is calling Opus
        "claude-sonnet-4-5"
      ])
    }).pipe(Effect.provide(parentContext(Array.from({ length: 4 }, () => TestModel.text("ok")), parentHistory))))

  it.effect("an unknown subagent_type is an error result listing the types", () =>
    Effect.gen(function*() {
      const { emitted, outcome } = yield* callTask({ description: "x", prompt: "p", subagent_type: "Planner" })
      assert.strictEqual(failure(outcome), "Agent type 'Planner' not found. Available agents: general-purpose, Explore")
      assert.deepStrictEqual(emitted, [])
      assert.strictEqual((yield* requests).length, 0)
    }).pipe(Effect.provide(parentContext([]))))

  it.effect("a subagent whose model call fails gives an error result with the API error; its usage so far still counts", () =>
    Effect.gen(function*() {
      const parent = yield* SessionState.SessionState
      const message = failure((yield* callTask({ description: "x", prompt: "p", model: "claude-sonnet-4-6" })).outcome)
      assert.match(message, /^The general-purpose subagent failed: API Error: /)
      assert.include(message, "529")
      assert.strictEqual((yield* Ref.get(parent.usage)).get("claude-sonnet-4-6")?.inputTokens, 100)
    }).pipe(Effect.provide(parentContext([
      readThenAnswer("")[0]!,
      TestModel.fail(new ModelError.Overloaded({ message: "Overloaded", status: 529 }))
    ]))))

  it.effect("a subagent that spends its budget of model calls gives an error result saying so", () =>
    Effect.gen(function*() {
      const tool = Task.make({ maxTurns: 2 })
      const message = failure((yield* callTask({ description: "x", prompt: "p" }, tool)).outcome)
      assert.strictEqual(
        message,
        "The general-purpose subagent stopped without a final answer: it reached its limit of 2 model calls. " +
          "Give it a narrower task, or do the rest yourself."
      )
      assert.strictEqual((yield* requests).length, 2)
    }).pipe(Effect.provide(parentContext([
      TestModel.reply([TestModel.toolUse("Read", {})]),
      TestModel.reply([TestModel.toolUse("Read", {})]),
      TestModel.text("never asked")
    ]))))

  it.effect("the subagent's calls are checked by the parent's permissions; its denials join the parent's", () =>
    Effect.gen(function*() {
      const parent = yield* SessionState.SessionState
      answer((yield* callTask({ description: "x", prompt: "delete things" })).outcome)
      const denied = ((yield* requests)[1]!.messages[2]!.content as ReadonlyArray<Message.ToolResultBlock>)[0]!
      assert.isTrue(denied.is_error)
      assert.include(String(denied.content), "Permission to use Bash was denied")
      assert.deepStrictEqual(yield* Ref.get(parent.permissionDenials), [
        { tool_name: "Bash", tool_use_id: "toolu_sub_bash", tool_input: { arg: "rm -rf build" } }
      ])
    }).pipe(Effect.provide(parentContext(
      [
        TestModel.reply([TestModel.toolUse("Bash", { arg: "rm -rf build" }, "toolu_sub_bash")]),
        TestModel.text("I was not allowed")
      ],
      [],
      parentTools,
      Permissions.layer(Permissions.config({}).config)
    ))))

  it.effect("interrupting the call interrupts the subagent's running tool; the usage so far still counts", () =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      const interrupted = yield* Ref.make(false)
      const hang = Tool.make({
        name: "Hang",
        description: "never returns",
        input: Schema.Struct({}),
        isReadOnly: true,
        call: () =>
          Deferred.succeed(started, undefined).pipe(
            Effect.zipRight(Effect.never),
            Effect.onInterrupt(() => Ref.set(interrupted, true))
          )
      })
      const parent = yield* SessionState.SessionState
      const fiber = yield* Effect.fork(
        callTask({ description: "x", prompt: "p", model: "claude-sonnet-4-6" }).pipe(
          Effect.provide(ToolRegistry.layer([stub("Read", true), hang, Task.tool]))
        )
      )
      yield* Deferred.await(started)
      assert.isFalse(yield* Ref.get(interrupted))
      yield* Fiber.interrupt(fiber)
      assert.isTrue(yield* Ref.get(interrupted))
      assert.strictEqual((yield* Ref.get(parent.usage)).get("claude-sonnet-4-6")?.inputTokens, 10)
    }).pipe(Effect.provide(parentContext([(r) => TestModel.reply([TestModel.toolUse("Hang", {})], { model: r.model })]))))

  it.effect("interrupting the call stops the subagent's model stream", () =>
    Effect.gen(function*() {
      const streaming = yield* Deferred.make<void>()
      const stopped = yield* Ref.make(false)
      const client = ModelClient.make({
        stream: () =>
          Stream.fromEffect(Deferred.succeed(streaming, undefined)).pipe(
            Stream.drain,
            Stream.concat(Stream.never),
            Stream.ensuring(Ref.set(stopped, true))
          )
      })
      const fiber = yield* Effect.fork(
        callTask({ description: "x", prompt: "p" }).pipe(Effect.provideService(ModelClient.ModelClient, client))
      )
      yield* Deferred.await(streaming)
      assert.isFalse(yield* Ref.get(stopped))
      yield* Fiber.interrupt(fiber)
      assert.isTrue(yield* Ref.get(stopped))
    }).pipe(Effect.provide(parentContext([]))))

  it.effect("Task needs no permission (each call of its subagent is checked instead), even in plan mode", () =>
    Effect.gen(function*() {
      const input: TaskInput = { description: "x", prompt: "p" }
      assert.isTrue(Task.tool.isReadOnly(input))
      assert.isTrue(Task.tool.isConcurrencySafe(input))
      // Yet a subagent may write: a Task a crash cut short is never run again on resume.
      assert.isFalse(Task.tool.isIdempotent?.(input))
      for (const mode of ["default", "plan", "dontAsk"] as const) {
        const decision = Permissions.decide(Permissions.config({ mode }).config, {
          toolName: "Task",
          input,
          isReadOnly: Task.tool.isReadOnly(input),
          toolUseId: "t",
          cwd: "/work"
        })
        assert.strictEqual(decision._tag, "Allow", mode)
      }
    }))

  it.effect("the subagent's TodoWrite keeps its own list, not its parent's", () =>
    Effect.gen(function*() {
      const parent = yield* SessionState.SessionState
      const mine: ReadonlyArray<SessionState.Todo> = [{ content: "Ship it", status: "in_progress", activeForm: "Shipping it" }]
      yield* Ref.set(parent.todos, mine)
      answer((yield* callTask({ description: "x", prompt: "plan" })).outcome)
      assert.deepStrictEqual(yield* Ref.get(parent.todos), mine)
      const second = (yield* requests)[1]!
      assert.strictEqual((second.messages[2]!.content as ReadonlyArray<Message.ToolResultBlock>)[0]!.content, TodoWrite.SUCCESS)
    }).pipe(Effect.provide(parentContext([
      TestModel.reply([
        TestModel.toolUse("TodoWrite", { todos: [{ content: "Look", status: "in_progress", activeForm: "Looking" }] })
      ]),
      TestModel.text("planned")
    ]))))

  it("outside a session a call does not compile: the services its subagent runs on are the call's requirements", () => {
    const call = Task.tool.call({ description: "x", prompt: "p" }, { toolUseId: "toolu_task", cwd: "/work" })
    const runAlone = <A, E>(effect: Effect.Effect<A, E, never>) => effect
    // @ts-expect-error the call requires the turn's services (its ModelClient, Pipeline, ToolRegistry, ...)
    runAlone(call)
    // Each of them, the ones a call outside a session used to lack among them.
    type Needs = Effect.Effect.Context<typeof call>
    const needs = <S>(required: [S] extends [Needs] ? true : false) => required
    assert.isTrue(needs<ModelClient.ModelClient>(true))
    assert.isTrue(needs<Pipeline.Pipeline>(true))
    assert.isTrue(needs<ToolRegistry.ToolRegistry>(true))
    assert.isTrue(needs<Compactor.Compactor>(true))
    assert.isTrue(needs<Permissions.Permissions>(true))
    assert.isTrue(needs<SessionState.SessionState>(true))
    assert.isTrue(needs<Ids.Ids>(true))
    assert.isTrue(needs<Hooks.Hooks>(true))
    // With the turn's services it compiles.
    runAlone(call.pipe(Effect.provide(parentContext([]))))
  })

  it("general-purpose, which edits and runs commands, follows the base rules on care and security; Explore does not need them", () => {
    const prompt = Subagents.generalPurpose.systemPrompt("/work/project")
    for (const section of BaseInstructions.SUBAGENT_SECTIONS) assert.include(prompt, section)
    assert.include(prompt, "# Acting with care")
    assert.include(prompt, "You cannot ask the user")
    assert.include(prompt, "The working directory is /work/project.")
    // Not the parts about talking to the user, asking, planning or the main prompt's context.
    assert.notInclude(prompt, "# When to ask and when to act")
    assert.notInclude(prompt, "# Planning and delegating")
    assert.notInclude(Subagents.explore.systemPrompt("/w"), "# Acting with care")
    // The budget of model calls it is told is the one it runs under.
    assert.include(Task.tool.description, `stops after ${Task.DEFAULT_MAX_TURNS} model calls`)
    assert.include(Task.make({ maxTurns: 7 }).description, "stops after 7 model calls")
  })

  it("the description lists the types and their tools; Subagents never hand out Task", () => {
    assert.include(Task.tool.description, "- general-purpose: Research and multi-step work")
    assert.include(Task.tool.description, "(Tools: all of yours except Task, AskUserQuestion, update_goal, StructuredOutput)")
    assert.include(Task.tool.description, "- Explore: Fast and read-only")
    assert.include(Task.tool.description, "(Tools: Read, Glob, Grep)")
    assert.deepStrictEqual(Subagents.toolsFor(Subagents.generalPurpose, parentTools).map((t) => t.name), [
      "Read",
      "Glob",
      "Grep",
      "Bash",
      "Edit",
      "TodoWrite"
    ])
    const custom: Subagents.Definition = { ...Subagents.explore, agentType: "Sneaky", tools: ["Read", "Task"] }
    assert.deepStrictEqual(Subagents.toolsFor(custom, parentTools).map((t) => t.name), ["Read"])
    assert.strictEqual(Subagents.resolveModel("haiku"), "claude-haiku-4-5")
    assert.strictEqual(Subagents.resolveModel("claude-x"), "claude-x")
  })
})

describe("Task in a session", () => {
  /** Answers the parent and its subagent by their system prompts: the parent starts an Explore agent, which reads. */
  const router = (request: ModelRequest.ModelRequest): TestModel.Reply =>
    isSubagent(request)
      ? afterTools(request)
        ? TestModel.text("The parser is in src/parse.ts.", { model: request.model, usage: { input_tokens: 200, output_tokens: 20 } })
        : TestModel.reply([TestModel.toolUse("Read", { arg: "src/parse.ts" }, "toolu_sub_read")], {
          model: request.model,
          usage: { input_tokens: 100, output_tokens: 10 }
        })
      : afterTools(request)
      ? TestModel.text("Found it: src/parse.ts.", { model: request.model, usage: { input_tokens: 40, output_tokens: 4 } })
      : TestModel.reply([
        TestModel.toolUse("Task", {
          description: "Find the parser",
          prompt: "Where is the parser?",
          subagent_type: "Explore",
          model: "haiku"
        }, "toolu_task")
      ], { model: request.model, usage: { input_tokens: 30, output_tokens: 3 } })

  /** The testing layer: the parent's tools under the default permissions, nothing persisted. */
  const sessionLayer = Testing.layer(Array.from({ length: 6 }, () => router), {
    tools: parentTools,
    permissions: Permissions.layer(Permissions.config({}).config),
    store: SessionStore.layerNoop
  })

  it.scoped("the answer comes back as the tool result, and the result's modelUsage and cost include the subagent's", () =>
    Effect.gen(function*() {
      const session = yield* Session.make({ model: "claude-sonnet-4-6", cwd: "/work", sessionId: "parent-session" })
      const messages = yield* Stream.runCollect(session.submit("where is the parser?")).pipe(Effect.map(Chunk.toReadonlyArray))
      const result = messages.at(-1) as SdkMessage.Result
      assert.strictEqual(result.subtype, "success")
      assert.strictEqual(result.result, "Found it: src/parse.ts.")
      const toolResult = messages.find((m): m is SdkMessage.User => m.type === "user" && m.parent_tool_use_id === null)!
      assert.deepStrictEqual(toolResult.message.content, [
        { type: "tool_result", tool_use_id: "toolu_task", content: "The parser is in src/parse.ts." }
      ])
      assert.deepStrictEqual(Object.keys(result.modelUsage).sort(), ["claude-haiku-4-5", "claude-sonnet-4-6"])
      assert.strictEqual(result.modelUsage["claude-haiku-4-5"]!.inputTokens, 300)
      assert.strictEqual(result.modelUsage["claude-sonnet-4-6"]!.inputTokens, 70)
      // Haiku $1/$5, Sonnet $3/$15 per million.
      const cost = (300 * 1 + 30 * 5 + 70 * 3 + 7 * 15) / 1e6
      assert.closeTo(result.total_cost_usd, cost, 1e-12)
      // `usage` is the main loop's only, as in Claude Code.
      assert.strictEqual(result.usage.input_tokens, 70)
      // The subagent's messages, between the parent's Task call and its result, carry the call's id.
      const visible = messages.filter((m) => m.type !== "tool_progress")
      assert.deepStrictEqual(
        visible.map((m) => `${m.type}${"parent_tool_use_id" in m && m.parent_tool_use_id !== null ? `<${m.parent_tool_use_id}` : ""}`),
        [
          "system",
          "assistant",
          "user<toolu_task",
          "assistant<toolu_task",
          "user<toolu_task",
          "assistant<toolu_task",
          "user",
          "assistant",
          "result"
        ]
      )
      assert.isTrue(messages.every((m) => m.session_id === "parent-session"))
      const all = yield* requests
      const sub = all.filter(isSubagent)
      assert.strictEqual(sub.length, 2)
      assert.deepStrictEqual(namesOf(sub[0]!), ["Read", "Glob", "Grep"])
      assert.deepStrictEqual(sub[0]!.messages.map(Message.toParam), [{ role: "user", content: "Where is the parser?" }])
      assert.strictEqual(sub[0]!.model, "claude-haiku-4-5")
    }).pipe(Effect.provide(sessionLayer)))
})
