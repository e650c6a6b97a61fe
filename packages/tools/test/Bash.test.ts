/**
 * Bash against real processes: output and exit codes, the working directory carried over in a
 * session, the output cap, timeouts and interruption killing the whole process group.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, beforeAll, describe, it } from "@effect/vitest"
import { BashGrammar, Message, Permissions, SessionState, ToolOutputDir, ToolRegistry, ToolRuntime } from "@keel/core"
import { Bash, BashReadOnly } from "@keel/tools"
import { Chunk, Effect, Fiber, Layer, Stream } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { err, ok } from "./support/Outcome.js"
import { callServices } from "./support/Calls.js"
import { alive } from "./support/Processes.js"

const tempDir = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "keel-bash-")))

const bash = (input: typeof Bash.Input.Type, cwd: string, toolUseId = "t1") =>
  Effect.flatMap(Bash.make, (tool) => tool.call(input, { toolUseId, cwd })).pipe(Effect.either)


const session = Layer.merge(NodeContext.layer, Layer.effect(SessionState.SessionState, SessionState.make("s")))


/** Waits (real time, bounded) for a file to hold a pid. */
const pidFrom = (file: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200 && !(fs.existsSync(file) && fs.readFileSync(file, "utf8").trim() !== ""); i++) {
      yield* Effect.sleep("10 millis")
    }
    return Number(fs.readFileSync(file, "utf8").trim())
  })

// Read-only commands are judged on the bash grammar, loaded once per process.
beforeAll(() => Effect.runPromise(BashGrammar.ready))

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
      assert.include(out, "[... 10,000 characters cut from the middle of the output; the full output (40,000 bytes, 0 lines) is in ")
      const spill = /is in (\S+): read it with Read/.exec(out)![1]!
      assert.strictEqual(fs.readFileSync(spill, "utf8"), "a".repeat(20_000) + "z".repeat(20_000))
    }).pipe(Effect.provide(session)))

  it.live("20 MB of output: head and tail kept, the whole of it spilled to a file Read may read, memory bounded", () =>
    Effect.gen(function*() {
      const before = process.memoryUsage().rss
      const out = ok(yield* bash({ command: "seq 1 2500000; echo oops >&2" }, tempDir(), "big"))
      const grew = process.memoryUsage().rss - before
      assert.isTrue(out.startsWith("1\n2\n3\n"))
      assert.isTrue(out.endsWith("2499999\n2500000\noops"), out.slice(-100))
      assert.isBelow(out.length, Bash.MAX_OUTPUT_CHARS + 400)
      const spill = /is in (\S+): read it with Read/.exec(out)![1]!
      assert.strictEqual(path.dirname(spill), fs.realpathSync(ToolOutputDir.directory))
      const expected = spawnSync("seq", ["1", "2500000"], { maxBuffer: 100_000_000 }).stdout
      assert.isTrue(fs.readFileSync(spill).equals(expected))
      assert.include(out, `the full output (${expected.length.toLocaleString("en-US")} bytes, 2,500,000 lines)`)
      // Read is allowed there without a rule, as inside the working directory; nowhere else outside it.
      const config: Permissions.Config = { mode: "default", allow: [], deny: [], ask: [] }
      assert.isTrue(Permissions.insideWorkspace(config, { toolName: "Read", input: { file_path: spill }, cwd: tempDir() }))
      assert.isFalse(Permissions.insideWorkspace(config, { toolName: "Write", input: { file_path: spill }, cwd: tempDir() }))
      assert.isFalse(
        Permissions.insideWorkspace(config, { toolName: "Read", input: { file_path: ToolOutputDir.directory + "-x/a" }, cwd: tempDir() })
      )
      // 20 MB printed; far less held (the old code held it all, twice, as strings).
      assert.isBelow(grew, 60_000_000)
    }).pipe(Effect.provide(session)), 60_000)

  it.live("a short stderr after a long stdout keeps its place and its text", () =>
    Effect.gen(function*() {
      const out = ok(yield* bash({ command: "head -c 100000 /dev/zero | tr '\\0' a; echo; echo 'E: failed here' >&2" }, tempDir()))
      assert.isTrue(out.endsWith("a\nE: failed here"), out.slice(-60))
      assert.isBelow(out.length, Bash.MAX_OUTPUT_CHARS + 400)
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

describe("Bash read-only commands", () => {
  const cases: ReadonlyArray<readonly [string, boolean]> = [
    ["ls -la", true],
    ["git status -s && git diff HEAD", true],
    ["cat a.txt | grep foo | wc -l", true],
    ["find . -name '*.ts'", true],
    ["sleep 1", true],
    ["echo 'a; rm -rf x'", true],
    ["find . -delete", false],
    ["find . -exec rm {} ;", false],
    ["git commit -m x", false],
    ["git push", false],
    ["sort -o out.txt in.txt", false],
    ["ls > listing.txt", false],
    ["cat $(echo a)", false],
    ["cd sub", false],
    ["rm -rf build", false],
    ["npm test", false],
    ["ls; rm x", false],
    ["", false],
    ["ls *.ts", true],
    ["find * -name x", false],
    ["cat $'a\\x27; rm x'", true],
    ["cat a #'\nrm x", false],
    ["ls >&1listing", false],
    ["ls >/dev/nullx", false]
  ]
  for (const [command, expected] of cases) {
    it(`${JSON.stringify(command)} ${expected ? "only reads" : "may write"}`, () => {
      assert.strictEqual(BashReadOnly.isReadOnly(command), expected)
    })
  }
})

describe("Bash in the tool runtime", () => {
  it.live("read-only commands run in parallel; a failing one cancels its siblings and kills their processes", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const marker = `${Math.floor(Math.random() * 1000) + 100}.${process.pid}`
      const tool = yield* Bash.make
      // No permission checks (every call runs): the explicit allow-all policy.
      const runtime = ToolRuntime.make(ToolRegistry.make([tool]), yield* Permissions.Permissions, { maxConcurrency: 10 })
      const call = (id: string, command: string) => ({ block: new Message.ToolUseBlock({ id, name: "Bash", input: { command } }) })
      const events = yield* runtime.run([
        call("slow", `sleep ${marker}`),
        call("broken", "sleep 0.3; ls /definitely/not/here"),
        call("after", "touch after.txt")
      ], dir).pipe(Stream.runCollect, Effect.map(Chunk.toReadonlyArray))
      const results = events.flatMap((e) => (e._tag === "Result" ? [[e.result.tool_use_id, e.result.content]] : []))
      const cancelled = "<tool_use_error>Cancelled: parallel tool call Bash(sleep 0.3; ls /definitely/not/here) errored</tool_use_error>"
      assert.deepStrictEqual(results.map(([id]) => id), ["slow", "broken", "after"])
      assert.strictEqual(results[0]![1], cancelled)
      assert.match(String(results[1]![1]), /^<tool_use_error>Exit code 2\n.*No such file or directory/)
      // The write queued behind them never ran.
      assert.strictEqual(results[2]![1], cancelled)
      assert.isFalse(fs.existsSync(path.join(dir, "after.txt")))
      // The cancelled sleep's process is gone (its group was killed), within the kill grace period.
      let survivors = ""
      for (let i = 0; i < 40; i++) {
        survivors = spawnSync("pgrep", ["-f", `sleep ${marker}`], { encoding: "utf8" }).stdout.trim()
        if (survivors === "") break
        yield* Effect.sleep("100 millis")
      }
      assert.strictEqual(survivors, "")
    }).pipe(Effect.provide(Layer.merge(NodeContext.layer, callServices()))))
})
