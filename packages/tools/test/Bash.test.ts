/**
 * Bash against real processes: output and exit codes, the working directory carried over in a
 * session, the output cap, timeouts and interruption killing the whole process group.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { SessionState } from "@keel/core"
import { Bash } from "@keel/tools"
import { Effect, Fiber, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { err, ok } from "./support/Outcome.js"

const tempDir = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "keel-bash-")))

const bash = (input: typeof Bash.Input.Type, cwd: string, toolUseId = "t1") =>
  Effect.flatMap(Bash.make, (tool) => tool.call(input, { toolUseId, cwd })).pipe(Effect.either)


const session = Layer.merge(NodeContext.layer, Layer.effect(SessionState.SessionState, SessionState.make("s")))

/** Whether a process is alive. */
const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Waits (real time, bounded) for a file to hold a pid. */
const pidFrom = (file: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200 && !(fs.existsSync(file) && fs.readFileSync(file, "utf8").trim() !== ""); i++) {
      yield* Effect.sleep("10 millis")
    }
    return Number(fs.readFileSync(file, "utf8").trim())
  })

describe("Bash", () => {
  it.live("returns stdout then stderr; a non-zero exit is an error that reports the code", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      assert.strictEqual(ok(yield* bash({ command: "echo out; echo err >&2" }, dir)), "out\nerr")
      assert.strictEqual(err(yield* bash({ command: "echo nope; exit 3" }, dir)), "Exit code 3\nnope")
      assert.strictEqual(ok(yield* bash({ command: "pwd" }, dir)), dir)
    }).pipe(Effect.provide(session)))

  it.live("the working directory carries over between calls of a session", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      fs.mkdirSync(path.join(dir, "sub"))
      ok(yield* bash({ command: "cd sub" }, dir))
      assert.strictEqual(ok(yield* bash({ command: "pwd" }, dir, "t2")), path.join(dir, "sub"))
    }).pipe(Effect.provide(session)))

  it.live("output over 30,000 characters is cut in the middle, with a note", () =>
    Effect.gen(function*() {
      const out = ok(yield* bash({ command: "printf 'a%.0s' $(seq 1 20000); printf 'z%.0s' $(seq 1 20000)" }, tempDir()))
      assert.isTrue(out.startsWith("a".repeat(15_000)))
      assert.isTrue(out.endsWith("z".repeat(15_000)))
      assert.include(out, "[... 10000 characters cut from the middle of the output ...]")
    }).pipe(Effect.provide(session)))

  it.live("a timeout kills the command and its children, and keeps the output so far", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const pidFile = path.join(dir, "child.pid")
      const message = err(yield* bash({ command: `echo started; sleep 30 & echo $! > ${pidFile}; wait`, timeout: 500 }, dir))
      assert.strictEqual(message, "Command timed out after 0.5 s and was killed with its children.\nstarted")
      const child = Number(fs.readFileSync(pidFile, "utf8"))
      for (let i = 0; i < 100 && alive(child); i++) yield* Effect.sleep("20 millis")
      assert.isFalse(alive(child))
    }).pipe(Effect.provide(session)))

  it.live("interrupting the call kills the whole process group", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const pidFile = path.join(dir, "child.pid")
      const fiber = yield* Effect.fork(bash({ command: `sleep 30 & echo $! > ${pidFile}; wait` }, dir))
      const child = yield* pidFrom(pidFile)
      assert.isTrue(alive(child))
      yield* Fiber.interrupt(fiber)
      for (let i = 0; i < 100 && alive(child); i++) yield* Effect.sleep("20 millis")
      assert.isFalse(alive(child))
    }).pipe(Effect.provide(session)))

  it("capMiddle leaves short text alone", () => {
    assert.strictEqual(Bash.capMiddle("short", 10), "short")
  })
})
