/**
 * End to end: MCP servers with the real `keel` binary against the loopback fake API. Servers from
 * `--mcp-config` and `.mcp.json` (the real server-everything, and the test server of test/support),
 * `system`/`init`'s `mcp_servers` with a failed server, MCP calls under the permission rules, a
 * server that crashes mid-session, configs that cannot be used, and no server process left behind
 * after the run or Ctrl+C.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { alive } from "../packages/tools/test/support/Processes.js"
import { closeServers, envFor, fake, lines, run, runStreamJson, start, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

/** Each test runs keel (and its MCP servers) up to five times; on a loaded machine a run takes seconds. */
const TIMEOUT = 120_000

const root = path.resolve(import.meta.dirname, "..")
const everything = path.join(root, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
const testServer = path.join(root, "test", "support", "mcp-test-server.mjs")


/** Waits (real time, bounded) until `check` holds. */
const until = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 400; i++) {
    if (check()) return
    await new Promise((r) => setTimeout(r, 25))
  }
  assert.fail(`timed out waiting for ${what}`)
}

/** An MCP config with server-everything, the test server (writing its pid to `pidFile`), and a server that cannot start. */
const config = (pidFile: string, extra: Record<string, unknown> = {}) => ({
  mcpServers: {
    everything: { command: process.execPath, args: [everything, "stdio"] },
    flaky: { command: process.execPath, args: [testServer], env: { MCP_TEST_PID_FILE: pidFile } },
    broken: { command: "keel-no-such-mcp-server" },
    ...extra
  }
})

/** Writes `value` as `name` in `dir`; its path. */
const write = (dir: string, name: string, value: unknown) => {
  const file = path.join(dir, name)
  fs.writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value))
  return file
}

const keel = runStreamJson

const resultsOf = (request: { body: any }) => request.body.messages.at(-1).content

describe("keel with MCP servers", () => {
  it("--mcp-config: init lists every server with its status; MCP calls run under the permission rules", async () => {
    const dir = workdir()
    const pidFile = path.join(dir, "flaky.pid")
    const file = write(dir, "servers.json", config(pidFile))
    const script = (): ReadonlyArray<FakeAnthropic.ScriptItem> => [
      FakeAnthropic.toolUseReply([
        { name: "mcp__everything__echo", input: { message: "from the model" }, id: "toolu_echo" },
        { name: "mcp__flaky__write", input: { path: path.join(dir, "out.txt"), text: "written by MCP" }, id: "toolu_write" }
      ]),
      FakeAnthropic.textReply("done")
    ]

    // MCP tools need a rule even when their server marks them read-only (echo does), as in Claude Code.
    const denied = await keel(dir, script(), ["--mcp-config", file, "--allowedTools", "mcp__everything"])
    assert.strictEqual(denied.code, 0)
    const init = denied.messages[0]
    assert.strictEqual(init.subtype, "init")
    assert.deepStrictEqual(init.mcp_servers, [
      { name: "everything", status: "connected" },
      { name: "flaky", status: "connected" },
      { name: "broken", status: "failed" }
    ])
    assert.includeMembers(init.tools, ["Read", "mcp__everything__echo", "mcp__everything__get-sum", "mcp__flaky__write"])
    assert.include(denied.stderr, "keel: MCP server broken failed to start: cannot run \"keel-no-such-mcp-server\": command not found\n")
    const definition = denied.server.requests[0]!.body.tools.find((t: any) => t.name === "mcp__everything__echo")
    assert.strictEqual(definition.description, "Echoes back the input string")
    assert.deepStrictEqual(definition.input_schema.required, ["message"])
    const [echo, write_] = resultsOf(denied.server.requests[1]!)
    assert.deepStrictEqual([echo.tool_use_id, echo.is_error, echo.content], ["toolu_echo", undefined, "Echo: from the model"])
    assert.isTrue(write_.is_error)
    assert.include(write_.content, "Permission to use mcp__flaky__write was denied")
    assert.deepStrictEqual(denied.messages.at(-1).permission_denials.map((d: any) => d.tool_name), ["mcp__flaky__write"])
    assert.isFalse(fs.existsSync(path.join(dir, "out.txt")))
    await until(() => !alive(Number(fs.readFileSync(pidFile, "utf8"))), "the server process to end with the run")

    const allowed = await keel(dir, script(), ["--mcp-config", file, "--allowedTools", "mcp__everything", "mcp__flaky__write"])
    assert.deepStrictEqual(allowed.messages.at(-1).permission_denials, [])
    assert.strictEqual(resultsOf(allowed.server.requests[1]!)[1].content, `wrote ${path.join(dir, "out.txt")}`)
    assert.strictEqual(fs.readFileSync(path.join(dir, "out.txt"), "utf8"), "written by MCP")

    const deniedByRule = await keel(dir, script(), ["--mcp-config", file, "--disallowedTools", "mcp__everything"])
    assert.include(resultsOf(deniedByRule.server.requests[1]!)[0].content, "the rule mcp__everything denies it")
    assert.isFalse(alive(Number(fs.readFileSync(pidFile, "utf8"))), "no server process outlives keel")
  }, TIMEOUT)

  it("a server that crashes mid-session: its calls get an error naming it, and the session goes on to its result", async () => {
    const dir = workdir()
    const file = write(dir, "servers.json", config(path.join(dir, "flaky.pid")))
    const t = await keel(dir, [
      FakeAnthropic.toolUseReply([{ name: "mcp__flaky__crash", input: {}, id: "toolu_crash" }]),
      FakeAnthropic.toolUseReply([
        { name: "mcp__flaky__echo", input: { text: "still there?" }, id: "toolu_after" },
        { name: "mcp__everything__echo", input: { message: "still here" }, id: "toolu_other" }
      ]),
      FakeAnthropic.textReply("carried on")
    ], ["--mcp-config", file, "--allowedTools", "mcp__flaky", "mcp__everything"])
    assert.strictEqual(t.code, 0)
    const [crash] = resultsOf(t.server.requests[1]!)
    assert.isTrue(crash.is_error)
    assert.strictEqual(
      crash.content,
      "<tool_use_error>MCP server flaky is not connected: the server process exited; its stderr ends: crashing on purpose</tool_use_error>"
    )
    const [after, other] = resultsOf(t.server.requests[2]!)
    assert.isTrue(after.is_error)
    assert.include(after.content, "MCP server flaky is not connected")
    assert.strictEqual(other.content, "Echo: still here")
    const result = t.messages.at(-1)
    assert.deepStrictEqual([result.subtype, result.is_error, result.result], ["success", false, "carried on"])
  }, TIMEOUT)

  it(".mcp.json in the working directory is loaded by default; --strict-mcp-config uses only --mcp-config's servers", async () => {
    const dir = workdir()
    write(dir, ".mcp.json", { mcpServers: { project: { command: process.execPath, args: [testServer] } } })
    const flagConfig = JSON.stringify({ mcpServers: { inline: { command: process.execPath, args: [testServer] } } })
    const both = await keel(dir, [FakeAnthropic.textReply("ok")], ["--mcp-config", flagConfig])
    assert.deepStrictEqual(both.messages[0].mcp_servers, [{ name: "project", status: "connected" }, { name: "inline", status: "connected" }])
    const strict = await keel(dir, [FakeAnthropic.textReply("ok")], ["--mcp-config", flagConfig, "--strict-mcp-config"])
    assert.deepStrictEqual(strict.messages[0].mcp_servers, [{ name: "inline", status: "connected" }])
    assert.notInclude(strict.messages[0].tools.join(" "), "mcp__project__")
  }, TIMEOUT)

  it("an unreadable or invalid MCP config: exit code 2, one line that says what is wrong and what to do, no API call", async () => {
    const dir = workdir()
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, RegExp]> = [
      [["--mcp-config", "missing.json"], /^keel: --mcp-config \S+missing\.json: no such file; give the path of a JSON file or the JSON itself\n$/],
      [["--mcp-config", write(dir, "bad.json", "{ \"mcpServers\": ")], /^keel: \S+bad\.json is not valid JSON \(.+\); fix it to read like \{"mcpServers".*\n$/],
      [["--mcp-config", write(dir, "shape.json", { mcpServers: { fs: { args: ["x"] } } })], /^keel: \S+shape\.json: mcpServers\.fs has no "command"; a stdio server needs the command to run.*\n$/],
      [["--mcp-config", "{\"mcpServers\": {\"w\": {\"type\": \"ws\", \"url\": \"ws://x\"}}}"], /^keel: --mcp-config: mcpServers\.w has "type": "ws"; Keel runs "stdio", "http" and "sse" servers\n$/]
    ]
    for (const [args, expected] of cases) {
      const r = await keel(dir, [FakeAnthropic.textReply("never")], args)
      assert.strictEqual(r.code, 2, r.stderr)
      assert.match(r.stderr, expected)
      assert.notInclude(r.stderr, "    at ", "no stack trace")
      assert.strictEqual(r.stdout, "")
      assert.strictEqual(r.server.requests.length, 0)
    }
    const swallowed = await run(["-p", "--mcp-config", "servers.json", "what is in the readme"], { cwd: dir })
    assert.strictEqual(swallowed.code, 2)
    assert.match(
      swallowed.stderr,
      /^keel: --mcp-config takes every value after it, so "what is in the readme" was read as an MCP config; put the prompt before --mcp-config/
    )
    write(dir, ".mcp.json", "nope")
    const project = await keel(dir, [FakeAnthropic.textReply("never")], [])
    assert.strictEqual(project.code, 2)
    assert.match(project.stderr, /^keel: \S+\.mcp\.json is not valid JSON .*\n$/)
  }, TIMEOUT)

  it("Ctrl+C during an MCP call: the call is cancelled, keel exits 130, and the server process is gone", async () => {
    const dir = workdir()
    const pidFile = path.join(dir, "flaky.pid")
    const cancelFile = path.join(dir, "cancelled")
    const file = write(dir, "servers.json", {
      mcpServers: { flaky: { command: process.execPath, args: [testServer], env: { MCP_TEST_PID_FILE: pidFile, MCP_TEST_CANCEL_FILE: cancelFile } } }
    })
    const server = await fake([FakeAnthropic.toolUseReply([{ name: "mcp__flaky__hang", input: {}, id: "toolu_hang" }])])
    const { child, done } = start(["-p", "go", "--output-format", "stream-json", "--allowedTools", "mcp__flaky", "--mcp-config", file], {
      env: { ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home") },
      cwd: dir
    })
    await until(() => fs.existsSync(cancelFile), "the call to reach the server")
    const pid = Number(fs.readFileSync(pidFile, "utf8"))
    assert.isTrue(alive(pid))
    child.kill("SIGINT")
    const r = await done
    assert.strictEqual(r.code, 130)
    const result = lines(r.stdout).at(-1)
    assert.strictEqual(result.subtype, "error_during_execution")
    assert.isFalse(alive(pid), "the server was closed before keel exited")
    assert.match(fs.readFileSync(cancelFile, "utf8"), /^started \d+\ncancelled \d+\n$/)
  }, TIMEOUT)

  it("Ctrl+C while servers are still starting: keel exits 130 at once and kills them", async () => {
    const dir = workdir()
    const pidFile = path.join(dir, "slow.pid")
    const file = write(dir, "servers.json", {
      mcpServers: { slow: { command: process.execPath, args: [testServer, "--never-ready", "--stubborn"], env: { MCP_TEST_PID_FILE: pidFile } } }
    })
    const server = await fake([FakeAnthropic.textReply("never")])
    const { child, done } = start(["-p", "go", "--mcp-config", file], { env: envFor(server), cwd: dir })
    await until(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, "utf8") !== "", "the server to start")
    const pid = Number(fs.readFileSync(pidFile, "utf8"))
    child.kill("SIGINT")
    const r = await done
    assert.strictEqual(r.code, 130)
    await until(() => !alive(pid), "the server process to be killed")
    assert.strictEqual(server.requests.length, 0)
  }, TIMEOUT)
})
