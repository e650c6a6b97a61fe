import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Flags from "../src/Flags.js"
import * as HookMessages from "../src/hook/HookMessages.js"
import * as HooksSetting from "../src/hook/HooksSetting.js"
import * as HostHooks from "../src/hook/HostHooks.js"

describe("HooksSetting.problems", () => {
  it("accepts Claude Code's shape", () => {
    assert.deepStrictEqual(
      HooksSetting.problems({ PreToolUse: [{ matcher: "Bash|Edit", hooks: [{ type: "command", command: "x", timeout: 60 }] }] }),
      []
    )
  })
  it("names each key Keel cannot honour", () => {
    assert.deepStrictEqual(
      HooksSetting.problems({
        PostCompact: [],
        Nonsense: [],
        Stop: [{ matcher: "(", hooks: [{ type: "agent" }, { type: "command" }, { type: "command", command: "x", timeout: 0 }] }]
      }),
      [
        "hooks.PostCompact: Keel does not fire PostCompact hooks yet (it fires PreToolUse, PostToolUse, Notification, UserPromptSubmit, SessionStart, SessionEnd, Stop, SubagentStop, PreCompact)",
        "hooks.Nonsense: not a hook event (Keel fires PreToolUse, PostToolUse, Notification, UserPromptSubmit, SessionStart, SessionEnd, Stop, SubagentStop, PreCompact)",
        `hooks.Stop[0].matcher "(": not a valid regular expression (Invalid regular expression: /(/: Unterminated group)`,
        `hooks.Stop[0].hooks[0].type "agent": Keel runs only "command" hooks`,
        "hooks.Stop[0].hooks[1].command: a command hook needs a command",
        "hooks.Stop[0].hooks[2].timeout 0: not a positive number of seconds"
      ]
    )
  })
})

describe("HostHooks", () => {
  const input = {
    hook_event_name: "PreToolUse" as const,
    session_id: "s",
    transcript_path: "/t",
    cwd: "/w",
    tool_name: "Bash",
    tool_input: {},
    tool_use_id: "t1"
  }

  it.effect("a callback is a hook_callback control request; the host's response is its answer", () =>
    Effect.gen(function*() {
      const lines: Array<any> = []
      const bridge = HostHooks.make((m) => lines.push(m), () => "req-1")
      assert.deepStrictEqual(bridge.register({ PreToolUse: [{ matcher: "Bash", hookCallbackIds: ["hook_0"], timeout: 5 }] }), [])
      const hook = bridge.config().PreToolUse![0]!.hooks[0]!
      const fiber = yield* Effect.fork(hook.run(input, "t1"))
      yield* Effect.yieldNow()
      assert.deepStrictEqual(lines, [{
        type: "control_request",
        request_id: "req-1",
        request: { subtype: "hook_callback", callback_id: "hook_0", input, tool_use_id: "t1" }
      }])
      assert.isFalse(yield* bridge.take({ _tag: "Answer", requestId: "other", answer: {} }))
      assert.isTrue(yield* bridge.take({ _tag: "Answer", requestId: "req-1", answer: { decision: "block" } }))
      assert.deepStrictEqual(yield* fiber, { _tag: "Answered", output: { decision: "block" } })
    }))

  it.effect("a callback interrupted (its timeout) is cancelled with the host", () =>
    Effect.gen(function*() {
      const lines: Array<any> = []
      const bridge = HostHooks.make((m) => lines.push(m), () => "req-2")
      bridge.register({ Stop: [{ hookCallbackIds: ["hook_1"], onFailure: "block" }] })
      const hook = bridge.config().Stop![0]!.hooks[0]!
      // onFailure is ignored on Stop, as the SDK documents.
      assert.isUndefined(hook.onFailure)
      const fiber = yield* Effect.fork(hook.run({ ...input, hook_event_name: "Stop", stop_hook_active: false } as any, undefined))
      yield* Effect.yieldNow()
      yield* fiber.interruptAsFork(fiber.id())
      yield* Effect.exit(fiber.await)
      assert.deepStrictEqual(lines.at(-1), { type: "control_cancel_request", request_id: "req-2" })
      assert.isFalse(yield* bridge.take({ _tag: "Answer", requestId: "req-2", answer: {} }))
    }))

  it("registration refuses what Keel cannot run, by key, and keeps nothing of it", () => {
    const bridge = HostHooks.make(() => {}, () => "x")
    assert.deepStrictEqual(bridge.register({ TaskCompleted: [], PreToolUse: [{ matcher: "[", hookCallbackIds: ["a"] }] }), [
      "hooks.TaskCompleted: Keel does not fire TaskCompleted hooks (it fires PreToolUse, PostToolUse, Notification, UserPromptSubmit, SessionStart, SessionEnd, Stop, SubagentStop, PreCompact)",
      `hooks.PreToolUse[0].matcher "[": not a valid regular expression (Invalid regular expression: /[/: Unterminated character class)`
    ])
    assert.deepStrictEqual(bridge.config(), {})
  })
})

describe("HookMessages", () => {
  it("hook_started and hook_response in Claude Code's shape", () => {
    const uuid = () => "u"
    assert.deepStrictEqual(
      HookMessages.messageOf({ _tag: "Started", id: "h", name: "PreToolUse:Bash", event: "PreToolUse", sessionId: "s" }, uuid),
      { type: "system", subtype: "hook_started", hook_id: "h", hook_name: "PreToolUse:Bash", hook_event: "PreToolUse", uuid: "u", session_id: "s" }
    )
    assert.deepStrictEqual(
      HookMessages.messageOf({
        _tag: "Responded",
        id: "h",
        name: "Stop",
        event: "Stop",
        sessionId: "s",
        stdout: "a",
        stderr: "b",
        exitCode: 2,
        outcome: "error"
      }, uuid),
      {
        type: "system",
        subtype: "hook_response",
        hook_id: "h",
        hook_name: "Stop",
        hook_event: "Stop",
        output: "ab",
        stdout: "a",
        stderr: "b",
        exit_code: 2,
        outcome: "error",
        uuid: "u",
        session_id: "s"
      }
    )
  })
})

describe("--include-hook-events", () => {
  it("is honoured with stream-json output, refused otherwise", () => {
    const ok = Flags.parse(["-p", "x", "--output-format", "stream-json", "--verbose", "--include-hook-events"], "0.0.0")
    assert.strictEqual(ok._tag, "Run")
    assert.isTrue(ok._tag === "Run" && ok.flags.includeHookEvents)
    const refused = Flags.parse(["-p", "x", "--include-hook-events"], "0.0.0")
    assert.strictEqual(refused._tag, "Exit")
  })
})
