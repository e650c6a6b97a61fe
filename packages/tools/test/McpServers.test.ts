/**
 * MCP servers as scoped resources, against real servers: start-up in parallel, failures reported
 * with their status without stopping the others, the start-up timeout under TestClock, every
 * process ended when the scope closes or the program is interrupted, and a server that crashes
 * mid-session.
 */
import { assert, describe, it } from "@effect/vitest"
import { McpServers } from "@keel/tools"
import { Deferred, Effect, Exit, Fiber, Scope, TestClock } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { alive, eventually, everything, statusOf, stdio, tempDir, testServer, toolOf } from "./support/Mcp.js"
import { callServices } from "./support/Calls.js"

const context = (cwd: string) => ({ toolUseId: "toolu_1", cwd })

describe("McpServers", () => {
  it.live("connects every server; their tools are named mcp__<server>__<tool> and carry the server's JSON Schema", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const service = yield* McpServers.make([stdio("everything", everything, ["stdio"]), stdio("flaky", testServer)], { cwd: dir })
      const all = yield* service.status
      assert.deepStrictEqual(all.map((s) => [s.name, s.status]), [["everything", "connected"], ["flaky", "connected"]])
      const everythingStatus = all[0]!
      assert.strictEqual(everythingStatus.serverInfo?.name, "mcp-servers/everything")
      assert.includeMembers([...everythingStatus.tools], ["mcp__everything__echo", "mcp__everything__get-sum", "mcp__everything__get-tiny-image"])
      assert.deepStrictEqual(all[1]!.tools, [
        "mcp__flaky__echo",
        "mcp__flaky__write",
        "mcp__flaky__crash",
        "mcp__flaky__hang",
        "mcp__flaky__big",
        "mcp__flaky__fail",
        "mcp__flaky__structured",
        "mcp__flaky__weird_name_v2",
        "mcp__flaky__ask"
      ], "a task-only tool is left out; a name with dots and slashes is normalised")
      assert.deepStrictEqual(service.tools.map((t) => t.name), [...everythingStatus.tools, ...all[1]!.tools])
      const echo = toolOf(service, "mcp__everything__echo")
      assert.strictEqual(echo.description, "Echoes back the input string")
      const schema = echo.inputSchema as { type: string; properties: Record<string, { type: string }>; required: Array<string> }
      assert.strictEqual(schema.type, "object")
      assert.strictEqual(schema.properties.message!.type, "string")
      assert.deepStrictEqual(schema.required, ["message"])
      assert.strictEqual(yield* echo.call({ message: "hello" }, context(dir)), "Echo: hello")
      assert.isTrue(alive(everythingStatus.pid!))
    }).pipe(Effect.scoped, Effect.provide(callServices())))

  it.live("a server that cannot start is reported failed, with why, and the others still connect", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const service = yield* McpServers.make([
        { name: "missing", config: { command: "keel-no-such-command" }, source: "test", missingVariables: [] },
        stdio("exits", testServer, [], undefined, { command: process.execPath, args: ["-e", "console.error('TOKEN is not set'); process.exit(3)"] }),
        { name: "unset", config: { command: "x", env: { K: "${API_KEY}" } }, source: "/p/.mcp.json", missingVariables: ["API_KEY"] },
        stdio("good", testServer)
      ], { cwd: dir })
      const all = yield* service.status
      assert.deepStrictEqual(all.map((s) => [s.name, s.status]), [["missing", "failed"], ["exits", "failed"], ["unset", "failed"], ["good", "connected"]])
      assert.strictEqual(all[0]!.error, "cannot run \"keel-no-such-command\": command not found")
      assert.strictEqual(all[1]!.error, "the server exited before it was ready; its stderr ends: TOKEN is not set")
      assert.strictEqual(
        all[2]!.error,
        "the environment variable API_KEY is not set (used in /p/.mcp.json); set it or write ${API_KEY:-default}"
      )
      assert.deepStrictEqual(all.slice(0, 3).map((s) => s.tools), [[], [], []])
      assert.strictEqual(yield* toolOf(service, "mcp__good__echo").call({ text: "still here" }, context(dir)), "still here")
    }).pipe(Effect.scoped, Effect.provide(callServices())))

  it.scoped("a server that does not answer within the start-up timeout fails (under TestClock), and its process is ended", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const pidFile = path.join(dir, "pid")
      const fiber = yield* Effect.fork(
        McpServers.make([stdio("slow", testServer, ["--never-ready"], { MCP_TEST_PID_FILE: pidFile })], {
          cwd: dir,
          startupTimeout: "30 seconds"
        })
      )
      yield* eventually(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, "utf8") !== "", "the server to start")
      yield* TestClock.adjust("29 seconds")
      assert.isNull(fiber.unsafePoll(), "still waiting before the timeout")
      yield* TestClock.adjust("1 second")
      const service = yield* Fiber.join(fiber)
      const slow = yield* statusOf(service, "slow")
      assert.strictEqual(slow.status, "failed")
      assert.strictEqual(slow.error, "did not start within 30s (raise MCP_TIMEOUT if it needs longer)")
      const pid = Number(fs.readFileSync(pidFile, "utf8"))
      assert.strictEqual(slow.pid, pid)
      assert.isFalse(alive(pid), "the server process is gone")
    }))

  it.live("closing the scope ends every server process, even one that ignores SIGTERM", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const scope = yield* Scope.make()
      const service = yield* McpServers.make([
        stdio("everything", everything, ["stdio"]),
        stdio("flaky", testServer),
        stdio("stubborn", testServer, ["--stubborn"])
      ], { cwd: dir }).pipe(Scope.extend(scope))
      const pids = (yield* service.status).map((s) => s.pid!)
      assert.strictEqual(pids.length, 3)
      assert.isTrue(pids.every(alive))
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(pids.map(alive), [false, false, false])
      const after = yield* service.status
      assert.deepStrictEqual(after.map((s) => s.status), ["closed", "closed", "closed"])
    }))

  it.live("interrupting the program that uses the servers ends their processes", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const ready = yield* Deferred.make<ReadonlyArray<number>>()
      const fiber = yield* Effect.fork(Effect.scoped(Effect.gen(function*() {
        const service = yield* McpServers.make([stdio("everything", everything, ["stdio"]), stdio("flaky", testServer)], { cwd: dir })
        yield* Deferred.succeed(ready, (yield* service.status).map((s) => s.pid!))
        // A call that never ends, as a tool call in flight when the user presses Ctrl+C.
        yield* toolOf(service, "mcp__flaky__hang").call({}, context(dir))
      })))
      const pids = yield* Deferred.await(ready)
      assert.isTrue(pids.every(alive))
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(pids.map(alive), [false, false])
    }).pipe(Effect.provide(callServices())))

  it.live("a server that crashes mid-session: its tools fail naming it, it turns failed, the other servers go on", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const service = yield* McpServers.make([stdio("flaky", testServer), stdio("everything", everything, ["stdio"])], { cwd: dir })
      const pid = (yield* statusOf(service, "flaky")).pid!
      const crash = yield* toolOf(service, "mcp__flaky__crash").call({}, context(dir)).pipe(Effect.flip)
      assert.strictEqual(
        crash.message,
        "MCP server flaky is not connected: the server process exited; its stderr ends: crashing on purpose"
      )
      const flaky = yield* statusOf(service, "flaky")
      assert.strictEqual(flaky.status, "failed")
      assert.isFalse(alive(pid))
      const later = yield* toolOf(service, "mcp__flaky__echo").call({ text: "hi" }, context(dir)).pipe(Effect.flip)
      assert.strictEqual(later.message, crash.message)
      assert.strictEqual(yield* toolOf(service, "mcp__everything__echo").call({ message: "on" }, context(dir)), "Echo: on")
    }).pipe(Effect.scoped, Effect.provide(callServices())))

  it.live("a server killed from outside while a call waits: the call fails at once naming the server", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const service = yield* McpServers.make([stdio("flaky", testServer)], { cwd: dir })
      const pid = (yield* statusOf(service, "flaky")).pid!
      const call = yield* Effect.fork(toolOf(service, "mcp__flaky__hang").call({}, context(dir)).pipe(Effect.flip))
      process.kill(pid, "SIGKILL")
      const error = yield* Fiber.join(call)
      assert.strictEqual(error.message, "MCP server flaky is not connected: the server process exited")
    }).pipe(Effect.scoped, Effect.provide(callServices())))
})
