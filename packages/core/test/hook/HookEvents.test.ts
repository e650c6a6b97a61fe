/**
 * Each hook event's effect in the loop, on the scripted model: PreToolUse (deny, ask, allow,
 * updatedInput, invalid updatedInput), Notification on an ask, PostToolUse context and blocks,
 * UserPromptSubmit (block, context), SessionStart context on the first turn only, Stop (one
 * continuation, the budget), SessionEnd when the session closes.
 */
import { assert, describe, it } from "@effect/vitest"
import { Compactor, type HookEvent, type HookOutput, Hooks, Message, Permissions, Pipeline, Session, type SdkMessage, Stage, TestModel, Tool } from "@keel/core"
import { Testing } from "@keel/core/testing"
import { Effect, Exit, Layer, Schema, Scope } from "effect"
import { collect, resultOf } from "../support/Sessions.js"

const options = { model: "claude-sonnet-4-6", cwd: "/work", sessionId: "s-1" } as const

/** A tool that records the inputs it ran with. */
const recorder = (ran: Array<unknown>) =>
  Tool.make({
    name: "Bash",
    description: "Runs a command",
    input: Schema.Struct({ command: Schema.String }),
    isReadOnly: false,
    call: (input) => Effect.sync(() => (ran.push(input), `ran ${input.command}`))
  })

/** A callback hook answering `output` and recording its inputs. */
const hook = (output: unknown, seen: Array<HookEvent.HookInput> = []): Hooks.Hook => ({
  name: "cb",
  run: (input) => Effect.sync(() => (seen.push(input), { _tag: "Answered", output } as HookOutput.Raw))
})

const layer = (
  script: ReadonlyArray<TestModel.ScriptItem>,
  config: Hooks.Config,
  ran: Array<unknown> = [],
  permissions: Layer.Layer<Permissions.Permissions> = Permissions.layerAllowAll
) => Testing.layer(script, { tools: [recorder(ran)], hooks: Hooks.layer(config), permissions })

const shellThenDone = [TestModel.reply([TestModel.toolUse("Bash", { command: "rm -rf build" }, "t1")]), TestModel.text("done")]

const lastRequest = Effect.flatMap(TestModel.TestModel, (m) => Effect.map(m.requests, (rs) => rs.at(-1)!))
const toolResultOf = Effect.map(lastRequest, (r) => {
  const last = r.messages.at(-1) as Message.UserMessage
  return (last.content as ReadonlyArray<Message.ContentBlock>)[0] as Message.ToolResultBlock
})
const textOf = (content: Message.ToolResultBlock["content"] | Message.UserMessage["content"]): string =>
  typeof content === "string" ? content : (content ?? []).map((b) => ("text" in b ? b.text : "")).join("\n")

const pre = (fields: Record<string, unknown>) => ({ hookSpecificOutput: { hookEventName: "PreToolUse", ...fields } })

describe("PreToolUse in the loop", () => {
  it.scoped("deny answers the call with the reason as an error result, records the denial, and never runs it", () => {
    const ran: Array<unknown> = []
    const seen: Array<HookEvent.HookInput> = []
    return Effect.gen(function*() {
      const session = yield* Session.make(options)
      const result = resultOf(yield* collect(session.submit("clean up")))
      const toolResult = yield* toolResultOf
      assert.isTrue(toolResult.is_error)
      assert.include(textOf(toolResult.content), "A PreToolUse hook denied this Bash call: not on main")
      assert.deepStrictEqual(ran, [])
      assert.deepStrictEqual(result.permission_denials.map((d) => d.tool_use_id), ["t1"])
      assert.deepStrictEqual(seen[0], {
        hook_event_name: "PreToolUse",
        session_id: "s-1",
        transcript_path: "",
        cwd: "/work",
        permission_mode: "bypassPermissions",
        tool_name: "Bash",
        tool_input: { command: "rm -rf build" },
        tool_use_id: "t1"
      })
    }).pipe(Effect.provide(layer(shellThenDone, {
      PreToolUse: [{ matcher: "Bash", hooks: [hook(pre({ permissionDecision: "deny", permissionDecisionReason: "not on main" }), seen)] }]
    }, ran)))
  })

  it.scoped("updatedInput replaces the input; an input the tool's schema refuses is an error result", () => {
    const ran: Array<unknown> = []
    return Effect.gen(function*() {
      const session = yield* Session.make(options)
      yield* collect(session.submit("clean up"))
      assert.deepStrictEqual(ran, [{ command: "rm -rf build --dry-run" }])
      const second = yield* collect(session.submit("again"))
      const toolResult = yield* toolResultOf
      assert.isTrue(toolResult.is_error)
      assert.include(textOf(toolResult.content), "A PreToolUse hook changed the input of Bash into an invalid one")
      assert.strictEqual(ran.length, 1)
      assert.strictEqual(resultOf(second).result, "done")
    }).pipe(Effect.provide(layer([...shellThenDone, ...shellThenDone], {
      PreToolUse: [{
        hooks: [{
          name: "rewrite",
          run: (input) =>
            Effect.succeed({
              _tag: "Answered",
              output: pre({
                updatedInput: (input as any).session_id === "s-1" && ran.length === 0
                  ? { command: "rm -rf build --dry-run" }
                  : { command: 42 }
              })
            })
        }]
      }]
    }, ran)))
  })

  it.scoped("ask makes the policy ask even where it allows (denied with nobody to ask), and fires Notification", () => {
    const ran: Array<unknown> = []
    const notified: Array<HookEvent.HookInput> = []
    return Effect.gen(function*() {
      const session = yield* Session.make(options)
      yield* collect(session.submit("clean up"))
      assert.deepStrictEqual(ran, [])
      const toolResult = yield* toolResultOf
      assert.include(textOf(toolResult.content), "check with a human first")
      yield* Effect.yieldNow()
      assert.deepInclude(notified[0], { hook_event_name: "Notification", notification_type: "permission_prompt" })
    }).pipe(Effect.provide(layer(shellThenDone, {
      PreToolUse: [{ hooks: [hook(pre({ permissionDecision: "ask", permissionDecisionReason: "check with a human first" }))] }],
      Notification: [{ matcher: "permission_prompt", hooks: [hook({}, notified)] }]
    }, ran, Permissions.layer(Permissions.config({ allow: ["Bash"] }).config))))
  })

  it.scoped("allow skips the ask; a deny rule still denies", () => {
    const ran: Array<unknown> = []
    return Effect.gen(function*() {
      const session = yield* Session.make(options)
      yield* collect(session.submit("clean up"))
      assert.deepStrictEqual(ran, [{ command: "rm -rf build" }])
      yield* collect(session.submit("again"))
      assert.strictEqual(ran.length, 1)
      assert.include(textOf((yield* toolResultOf).content), "denies it")
    }).pipe(Effect.provide(layer(
      [...shellThenDone, TestModel.reply([TestModel.toolUse("Bash", { command: "curl evil" }, "t2")]), TestModel.text("ok")],
      { PreToolUse: [{ hooks: [hook(pre({ permissionDecision: "allow" }))] }] },
      ran,
      // Default mode: a non-read-only call would ask, and nobody can answer here.
      Permissions.layer(Permissions.config({ deny: ["Bash(curl:*)"] }).config)
    )))
  })
})

describe("PostToolUse in the loop", () => {
  it.scoped("additional context and a block's reason reach the model with the result", () =>
    Effect.gen(function*() {
      const session = yield* Session.make(options)
      yield* collect(session.submit("clean up"))
      const toolResult = yield* toolResultOf
      assert.isNotTrue(toolResult.is_error)
      const text = textOf(toolResult.content)
      assert.include(text, "ran rm -rf build")
      assert.include(text, "the build folder is gone now")
      assert.include(text, "A PostToolUse hook blocked after this call: lint failed")
    }).pipe(Effect.provide(layer(shellThenDone, {
      PostToolUse: [{
        hooks: [
          hook({ hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "the build folder is gone now" } }),
          hook({ decision: "block", reason: "lint failed" })
        ]
      }]
    }))))
})

describe("UserPromptSubmit in the loop", () => {
  it.scoped("a block: no model call, the reason in a warning and an error result; the prompt is not in the conversation", () =>
    Effect.gen(function*() {
      const session = yield* Session.make(options)
      const messages = yield* collect(session.submit("deploy to prod"))
      const result = resultOf(messages)
      assert.isTrue(result.is_error)
      assert.strictEqual(result.terminal_reason, "hook_stopped")
      assert.include(result.result!, "frozen until Monday")
      assert.isTrue(messages.some((m) => m.type === "system" && m.subtype === "informational"))
      assert.strictEqual((yield* Effect.flatMap(TestModel.TestModel, (m) => m.requests)).length, 0)
      const state = yield* session.state
      assert.strictEqual((yield* state.messages.get).length, 0)
    }).pipe(Effect.provide(layer([], { UserPromptSubmit: [{ hooks: [hook({ decision: "block", reason: "frozen until Monday" })] }] }))))

  it.scoped("context joins the prompt; SessionStart's only on the session's first turn", () =>
    Effect.gen(function*() {
      const session = yield* Session.make(options)
      yield* collect(session.submit("first"))
      const first = textOf(((yield* lastRequest).messages[0] as Message.UserMessage).content)
      assert.include(first, "first")
      assert.include(first, "From a SessionStart hook:\nbranch main")
      assert.include(first, "From a UserPromptSubmit hook:\nit is Friday")
      yield* collect(session.submit("second"))
      const second = textOf(((yield* lastRequest).messages.at(-1) as Message.UserMessage).content)
      assert.notInclude(second, "branch main")
      assert.include(second, "it is Friday")
    }).pipe(Effect.provide(layer([TestModel.text("one"), TestModel.text("two")], {
      SessionStart: [{ matcher: "startup", hooks: [hook({ hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: "branch main" } })] }],
      UserPromptSubmit: [{ hooks: [hook({ hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: "it is Friday" } })] }]
    }))))
})

describe("Stop in the loop", () => {
  it.scoped("a block makes the turn go on once with the reason; stop_hook_active on the re-entry", () => {
    const seen: Array<HookEvent.HookInput> = []
    return Effect.gen(function*() {
      const session = yield* Session.make(options)
      const messages = yield* collect(session.submit("work"))
      assert.strictEqual(resultOf(messages).result, "really done")
      const requests = yield* Effect.flatMap(TestModel.TestModel, (m) => m.requests)
      assert.strictEqual(requests.length, 2)
      assert.include(textOf((requests[1]!.messages.at(-1) as Message.UserMessage).content), "write the tests too")
      assert.deepStrictEqual(seen.map((i) => [(i as any).stop_hook_active, (i as any).last_assistant_message]), [
        [false, "done"],
        [true, "really done"]
      ])
    }).pipe(Effect.provide(layer([TestModel.text("done"), TestModel.text("really done")], {
      Stop: [{
        hooks: [{
          name: "once",
          run: (input) =>
            Effect.sync(() => {
              seen.push(input)
              return { _tag: "Exited", exitCode: (input as any).stop_hook_active ? 0 : 2, stdout: "", stderr: "write the tests too" }
            })
        }]
      }]
    })))
  })

  it.scoped("a hook that always blocks gets a bounded number of continuations", () =>
    Effect.gen(function*() {
      const session = yield* Session.make(options)
      const result = resultOf(yield* collect(session.submit("work")))
      assert.strictEqual(result.subtype, "success")
      const requests = yield* Effect.flatMap(TestModel.TestModel, (m) => m.requests)
      assert.strictEqual(requests.length, 1 + 5)
    }).pipe(Effect.provide(layer(Array.from({ length: 6 }, (_, i) => TestModel.text(`answer ${i}`)), {
      Stop: [{ hooks: [hook({ decision: "block", reason: "never good enough" })] }]
    }))))
})

describe("SessionEnd", () => {
  it.effect("fires when the session's scope closes", () => {
    const seen: Array<HookEvent.HookInput> = []
    return Effect.gen(function*() {
      const scope = yield* Scope.make()
      yield* Session.make(options).pipe(Scope.extend(scope))
      assert.strictEqual(seen.length, 0)
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(seen, [{ hook_event_name: "SessionEnd", session_id: "s-1", cwd: "/work", reason: "other", transcript_path: "" }])
    }).pipe(Effect.provide(layer([], { SessionEnd: [{ hooks: [hook({}, seen)] }] })))
  })
})

// Keep the SDK message type in use for readers of this file.
export type _Messages = SdkMessage.SdkMessage

describe("PreCompact", () => {
  const recording = (seen: Array<HookEvent.HookInput>): Hooks.Config => ({ PreCompact: [{ hooks: [hook({}, seen)] }] })

  it.scoped("manual: /compact fires it with the user's instructions before compacting", () => {
    const seen: Array<HookEvent.HookInput> = []
    const compactor = Layer.succeed(Compactor.Compactor, {
      ...Compactor.none,
      available: true,
      manual: (messages) => Effect.succeed({ messages, report: "compacted" })
    })
    return Effect.gen(function*() {
      const session = yield* Session.make(options)
      yield* collect(session.submit("hello"))
      yield* collect(session.submit("/compact keep the API notes"))
      assert.deepStrictEqual(seen.map((i) => [(i as any).trigger, (i as any).custom_instructions]), [["manual", "keep the API notes"]])
    }).pipe(Effect.provide(Testing.layer([TestModel.text("hi")], {
      hooks: Hooks.layer(recording(seen)),
      context: Layer.merge(Pipeline.layerEmpty, compactor)
    })))
  })

  it.scoped("auto: a stage that announces compacting fires it first", () => {
    const seen: Array<HookEvent.HookInput> = []
    const stage: Stage.Stage = {
      id: Stage.id("test-compact"),
      announce: () => "compacting",
      run: (messages) => Effect.succeed({ messages })
    }
    return Effect.gen(function*() {
      const session = yield* Session.make(options)
      yield* collect(session.submit("hello"))
      assert.deepStrictEqual(seen.map((i) => [(i as any).trigger, (i as any).custom_instructions]), [["auto", null]])
    }).pipe(Effect.provide(Testing.layer([TestModel.text("hi")], {
      hooks: Hooks.layer(recording(seen)),
      context: Layer.merge(Pipeline.layer([stage]), Compactor.layerNone)
    })))
  })
})
