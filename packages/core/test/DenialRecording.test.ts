/**
 * The denial-recording decorator: decisions pass through unchanged; inside a session, every one
 * that is not "allow" lands in the permission denials of the session the check runs in, with the
 * tool's input.
 */
import { assert, describe, it } from "@effect/vitest"
import { DenialRecording, Permissions, SessionState } from "@keel/core"
import { Effect, Ref } from "effect"

const request = (toolName: string, input: unknown, toolUseId: string): Permissions.Request => ({
  toolName,
  input,
  isReadOnly: false,
  toolUseId,
  cwd: "/work/project"
})

const policy = Permissions.make(Permissions.config({ allow: ["Bash(ls:*)"], deny: ["Bash(rm:*)"] }).config)

describe("DenialRecording", () => {
  it.effect("records each deny in the session's denials and passes every decision through unchanged", () =>
    Effect.gen(function*() {
      const state = yield* SessionState.make("s")
      const recording = DenialRecording.recordingDenials(policy)
      const decisions = yield* Effect.forEach([
        request("Bash", { command: "ls -la" }, "t1"),
        request("Bash", { command: "rm -rf x" }, "t2"),
        request("Bash", { command: "npm test" }, "t3")
      ], (r) => Effect.map(recording(r), (d) => d._tag)).pipe(Effect.provideService(SessionState.SessionState, state))
      assert.deepStrictEqual(decisions, ["Allow", "Deny", "Deny"])
      assert.deepStrictEqual(yield* Ref.get(state.permissionDenials), [
        { tool_name: "Bash", tool_use_id: "t2", tool_input: { command: "rm -rf x" } },
        { tool_name: "Bash", tool_use_id: "t3", tool_input: { command: "npm test" } }
      ])
    }))

  it.effect("a denial is recorded in the session the check runs in (the session is a requirement of the check)", () =>
    Effect.gen(function*() {
      const state = yield* SessionState.make("s")
      const check = DenialRecording.recordingDenials(policy)
      const decision = yield* check(request("Bash", { command: "rm x" }, "t1")).pipe(
        Effect.provideService(SessionState.SessionState, state)
      )
      assert.strictEqual(decision._tag, "Deny")
      assert.strictEqual((yield* Ref.get(state.permissionDenials)).length, 1)
    }))
})
