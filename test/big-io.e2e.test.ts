/**
 * End to end, the real `keel` binary against the loopback fake of the Messages API, on huge inputs
 * and outputs and on reads that never end (issue 16, items 7 and 8):
 *
 * - Read with `limit: 5` of a sparse 600 MB log returns its five lines at once.
 * - Bash printing ~50 MB: the model gets the head and the tail around a note naming the spill file,
 *   which holds the whole output, and a Read of that file (outside the workspace) is allowed.
 * - Read of a named pipe fails at once with a clear message (it used to wait for a writer for ever).
 * - A tool call past its timeout (`KEEL_TOOL_TIMEOUT_MS_<TOOL>`) ends with an error result and the
 *   turn goes on: here an MCP tool that never answers.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, lines, run, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const TIMEOUT = 120_000

/** The tool_result for `id` in a request body's messages. */
const resultIn = (body: any, id: string): any => {
  for (const m of body.messages) {
    if (Array.isArray(m.content)) for (const b of m.content) if (b.type === "tool_result" && b.tool_use_id === id) return b
  }
  return undefined
}

/** `keel -p go` in `dir` (stream-json, Bash allowed, `extra` args and env) against a fake playing `script`. */
const runIn = async (
  dir: string,
  script: ReadonlyArray<FakeAnthropic.ScriptItem>,
  options: { readonly args?: ReadonlyArray<string>; readonly env?: Record<string, string> } = {}
) => {
  const server = await fake(script)
  const started = Date.now()
  const r = await run(["-p", "go", "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash", ...(options.args ?? [])], {
    env: { ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home"), ...options.env },
    cwd: dir
  })
  assert.strictEqual(r.code, 0, r.stderr)
  return { server, messages: lines(r.stdout), seconds: (Date.now() - started) / 1000 }
}

describe("huge files and outputs", () => {
  it("Read with limit 5 of a sparse 600 MB log: five lines", async () => {
    const dir = workdir()
    const log = path.join(dir, "app.log")
    fs.writeFileSync(log, Array.from({ length: 500 }, (_, i) => `event ${i + 1} ${"x".repeat(30)}`).join("\n") + "\n")
    fs.truncateSync(log, 600_000_000)
    const { server } = await runIn(dir, [
      FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "app.log", limit: 5 }, id: "toolu_read" }]),
      FakeAnthropic.textReply("Done.")
    ])
    const read = resultIn(server.requests[1]!.body, "toolu_read")
    assert.notStrictEqual(read.is_error, true, read.content)
    const numbered = String(read.content).split("\n").filter((l) => /^\s+\d+\t/.test(l))
    assert.deepStrictEqual(numbered.map((l) => l.split("\t")[1]!.split(" ").slice(0, 2).join(" ")), [
      "event 1",
      "event 2",
      "event 3",
      "event 4",
      "event 5"
    ])
    fs.rmSync(log)
  }, TIMEOUT)

  it("Bash printing ~50 MB: head and tail with the spill file's path; the file holds it all, and Read may read it", async () => {
    const dir = workdir()
    let spill = ""
    const { server } = await runIn(dir, [
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "seq 1 7000000" }, id: "toolu_bash" }]),
      (body) => {
        const out = String(resultIn(body, "toolu_bash").content)
        spill = /is in (\S+): read it with Read/.exec(out)?.[1] ?? "none"
        return FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: spill, offset: 6999999, limit: 2 }, id: "toolu_spill" }])
      },
      FakeAnthropic.textReply("Done.")
    ])
    const out = String(resultIn(server.requests[1]!.body, "toolu_bash").content)
    assert.isTrue(out.startsWith("1\n2\n3\n"), out.slice(0, 40))
    assert.isTrue(out.endsWith("6999999\n7000000"), out.slice(-40))
    assert.isBelow(out.length, 31_000)
    const expected = execFileSync("seq", ["1", "7000000"], { maxBuffer: 100_000_000 })
    assert.include(out, `the full output (${expected.length.toLocaleString("en-US")} bytes, 7,000,000 lines) is in ${spill}`)
    assert.isTrue(fs.readFileSync(spill).equals(expected), "the spill file holds the whole output")
    const back = resultIn(server.requests[2]!.body, "toolu_spill")
    assert.notStrictEqual(back.is_error, true, back.content)
    assert.include(back.content, "6999999\t6999999\n7000000\t7000000")
    fs.rmSync(spill)
  }, TIMEOUT)
})

describe("reads that never end", () => {
  it("Read of a named pipe fails at once with a clear message, and the turn goes on", async () => {
    const dir = workdir()
    const fifo = path.join(dir, "pipe")
    execFileSync("mkfifo", [fifo])
    const { messages, server, seconds } = await runIn(dir, [
      FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "pipe" }, id: "toolu_fifo" }]),
      FakeAnthropic.textReply("Done.")
    ])
    const read = resultIn(server.requests[1]!.body, "toolu_fifo")
    assert.isTrue(read.is_error)
    assert.include(read.content, `${fs.realpathSync(dir)}/pipe is a named pipe (FIFO), not a regular file`.replace(fs.realpathSync(dir), dir))
    assert.strictEqual(messages.at(-1).subtype, "success")
    assert.isBelow(seconds, 60)
  }, TIMEOUT)

  it("a tool call past its timeout (KEEL_TOOL_TIMEOUT_MS_<TOOL>) ends with an error result and the turn goes on", async () => {
    const dir = workdir()
    const testServer = path.resolve(import.meta.dirname, "support", "mcp-test-server.mjs")
    const config = path.join(dir, "servers.json")
    fs.writeFileSync(config, JSON.stringify({ mcpServers: { flaky: { command: process.execPath, args: [testServer] } } }))
    const { messages, server } = await runIn(dir, [
      FakeAnthropic.toolUseReply([{ name: "mcp__flaky__hang", input: {}, id: "toolu_hang" }]),
      FakeAnthropic.textReply("Done.")
    ], {
      args: ["--allowedTools", "mcp__flaky", "--mcp-config", config],
      env: { KEEL_TOOL_TIMEOUT_MS_MCP__FLAKY__HANG: "1500" }
    })
    const hang = resultIn(server.requests[1]!.body, "toolu_hang")
    assert.isTrue(hang.is_error)
    assert.include(JSON.stringify(hang.content), "mcp__flaky__hang timed out after 1.5 s and was stopped")
    assert.strictEqual(messages.at(-1).subtype, "success")
  }, TIMEOUT)
})
