import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { CommandHook, Hooks, type HookEvent, type HookOutput } from "@keel/core"
import { Duration, Effect, Fiber, TestClock } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const where = { session_id: "s", cwd: os.tmpdir() }
const preToolUse = (toolName = "Bash"): HookEvent.Fired => ({
  hook_event_name: "PreToolUse",
  ...where,
  tool_name: toolName,
  tool_input: { command: "ls" },
  tool_use_id: "t1"
})

const answering = (name: string, output: unknown, seen?: Array<HookEvent.HookInput>): Hooks.Hook => ({
  name,
  run: (input) =>
    Effect.sync(() => {
      seen?.push(input)
      return { _tag: "Answered", output } as HookOutput.Raw
    })
})

describe("Hooks", () => {
  it.effect("runs only the matching hooks, fills transcript_path in, and merges in configured order", () =>
    Effect.gen(function*() {
      const seen: Array<HookEvent.HookInput> = []
      const hooks = Hooks.make({
        PreToolUse: [
          { matcher: "Edit", hooks: [answering("edit", { decision: "block", reason: "edit" }, seen)] },
          { matcher: "Bash", hooks: [answering("bash", { systemMessage: "bash hook ran" }, seen)] },
          { hooks: [answering("all", { hookSpecificOutput: { hookEventName: "PreToolUse", additionalContext: "ctx" } }, seen)] }
        ]
      }, { transcriptPath: (cwd, id) => `${cwd}/${id}.jsonl` })
      const outcome = yield* hooks.run(preToolUse())
      assert.deepStrictEqual(outcome.notices, ["bash hook ran"])
      assert.deepStrictEqual(outcome.context, ["ctx"])
      assert.isUndefined(outcome.permission)
      assert.strictEqual(seen.length, 2)
      assert.strictEqual(seen[0]!.transcript_path, `${os.tmpdir()}/s.jsonl`)
      assert.deepStrictEqual([...hooks.events], ["PreToolUse"])
      // No hook for the event: nothing runs.
      assert.deepStrictEqual(yield* hooks.run({ hook_event_name: "Stop", ...where, stop_hook_active: false }), {
        permission: undefined,
        updatedInput: undefined,
        blocked: undefined,
        stopped: undefined,
        context: [],
        notices: []
      })
    }))

  it.effect("a hook past its timeout is stopped exactly then and reported; the lifecycle says cancelled", () =>
    Effect.gen(function*() {
      const events: Array<Hooks.Lifecycle> = []
      const hooks = Hooks.make({
        PreToolUse: [{ hooks: [{ name: "slow", timeout: Duration.seconds(5), run: () => Effect.never }] }]
      }, { observe: (e) => Effect.sync(() => void events.push(e)), uuid: () => "id-1" })
      const fiber = yield* Effect.fork(hooks.run(preToolUse()))
      yield* TestClock.adjust(Duration.millis(4999))
      assert.isNull(fiber.unsafePoll())
      yield* TestClock.adjust(Duration.millis(1))
      const outcome = yield* Fiber.join(fiber)
      assert.deepStrictEqual(outcome.notices, ["The hook slow timed out after 5s and was stopped"])
      assert.deepStrictEqual(events.map((e) => e._tag), ["Started", "Responded"])
      assert.deepInclude(events[1]!, { id: "id-1", name: "PreToolUse:Bash", outcome: "cancelled", exitCode: undefined })
    }))

  it.effect("the default timeout is 60 s, as Claude Code's", () =>
    Effect.gen(function*() {
      const hooks = Hooks.make({ Stop: [{ hooks: [{ name: "slow", run: () => Effect.never }] }] })
      const fiber = yield* Effect.fork(hooks.run({ hook_event_name: "Stop", ...where, stop_hook_active: false }))
      yield* TestClock.adjust(Duration.seconds(59))
      assert.isNull(fiber.unsafePoll())
      yield* TestClock.adjust(Duration.seconds(1))
      assert.include((yield* Fiber.join(fiber)).notices[0]!, "timed out after 1m")
    }))

  it.effect("a failed callback with onFailure block blocks; with continue it is reported", () =>
    Effect.gen(function*() {
      const failing = (onFailure: "block" | "continue"): Hooks.Hook => ({
        name: "cb",
        onFailure,
        run: () => Effect.succeed({ _tag: "Failed", message: "the host answered with an error: nope" })
      })
      const blocked = yield* Hooks.make({ PreToolUse: [{ hooks: [failing("block")] }] }).run(preToolUse())
      assert.strictEqual(blocked.permission?.decision, "deny")
      const reported = yield* Hooks.make({ PreToolUse: [{ hooks: [failing("continue")] }] }).run(preToolUse())
      assert.isUndefined(reported.permission)
      assert.deepStrictEqual(reported.notices, ["The hook cb failed: the host answered with an error: nope"])
    }))
})

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "keel-hook-"))

describe("CommandHook", () => {
  const runCommand = (command: string, input: HookEvent.HookInput) =>
    Effect.flatMap(CommandHook.make({ command }), (run) => run(input)).pipe(Effect.provide(NodeContext.layer))
  const input = (cwd: string): HookEvent.HookInput => ({ ...preToolUse(), cwd, transcript_path: "/t.jsonl" } as HookEvent.HookInput)

  it.live("the event's JSON on stdin, the project dir in the environment, exit code and output back", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const raw = yield* runCommand(`cat > got.json; echo "dir=$CLAUDE_PROJECT_DIR"; echo err >&2; exit 0`, input(dir))
      assert.deepStrictEqual(raw, { _tag: "Exited", exitCode: 0, stdout: `dir=${dir}\n`, stderr: "err\n" })
      assert.deepStrictEqual(JSON.parse(fs.readFileSync(path.join(dir, "got.json"), "utf8")), input(dir))
    }))

  it.live("exit 2 and other codes come back as they are", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      assert.deepInclude(yield* runCommand("echo blocked >&2; exit 2", input(dir)), { exitCode: 2, stderr: "blocked\n" })
      assert.deepInclude(yield* runCommand("exit 7", input(dir)), { exitCode: 7 })
    }))

  it.live("a command past its timeout is killed (a real 1 s limit over a 30 s sleep)", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const pidFile = path.join(dir, "pid")
      const hook: Hooks.Hook = {
        name: "sleeper",
        timeout: Duration.seconds(1),
        run: yield* CommandHook.make({ command: `echo $$ > ${pidFile}; exec sleep 30` }).pipe(Effect.provide(NodeContext.layer))
      }
      const outcome = yield* Hooks.make({ PreToolUse: [{ hooks: [hook] }] }).run({ ...preToolUse(), cwd: dir })
      assert.deepStrictEqual(outcome.notices, ["The hook sleeper timed out after 1s and was stopped"])
      const pid = Number(fs.readFileSync(pidFile, "utf8"))
      assert.throws(() => process.kill(pid, 0))
    }))
})
