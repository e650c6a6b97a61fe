/**
 * SubagentStop: the Task tool's subagent runs its event's hooks when it ends its turn; a block makes
 * it go on with the reason (bounded like Stop), the input naming the subagent.
 */
import { assert, describe, it } from "@effect/vitest"
import { type HookEvent, Hooks, type HookOutput, Message, TestModel } from "@keel/core"
import { Task } from "@keel/tools"
import { Effect } from "effect"
import { callServices } from "./support/Calls.js"

describe("Task and SubagentStop", () => {
  it.effect("a SubagentStop block makes the subagent go on once; its final answer is the result", () => {
    const seen: Array<HookEvent.HookInput> = []
    const hook: Hooks.Hook = {
      name: "cb",
      run: (input) =>
        Effect.sync(() => {
          seen.push(input)
          const active = (input as { stop_hook_active: boolean }).stop_hook_active
          return { _tag: "Answered", output: active ? {} : { decision: "block", reason: "cite the file" } } as HookOutput.Raw
        })
    }
    return Effect.gen(function*() {
      const outcome = yield* Task.tool.call({ description: "find", prompt: "Where is the parser?" }, { toolUseId: "toolu_task", cwd: "/work" })
      assert.strictEqual(outcome, "src/parse.ts, line 1")
      const requests = yield* Effect.flatMap(TestModel.TestModel, (m) => m.requests)
      assert.strictEqual(requests.length, 2)
      const last = requests[1]!.messages.at(-1) as Message.UserMessage
      assert.include(typeof last.content === "string" ? last.content : "", "cite the file")
      assert.deepStrictEqual(seen.map((i) => [i.hook_event_name, (i as any).agent_type, (i as any).stop_hook_active]), [
        ["SubagentStop", "general-purpose", false],
        ["SubagentStop", "general-purpose", true]
      ])
      assert.strictEqual(seen[0]!.session_id, "parent")
    }).pipe(
      Effect.provide(Hooks.layer({ SubagentStop: [{ hooks: [hook] }] })),
      Effect.provide(callServices({
        script: [TestModel.text("src/parse.ts"), TestModel.text("src/parse.ts, line 1")],
        sessionId: "parent"
      }))
    )
  })
})
