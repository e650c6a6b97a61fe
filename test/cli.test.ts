/**
 * End to end: the real `keel` binary (built, linked into node_modules/.bin by npm) and the real
 * `@anthropic-ai/sdk`, against the loopback fake of the Messages API.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Runtime } from "@keel/cli"
import * as Cause from "effect/Cause"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { demo, rangeAsked } from "./support/fake-api-cli.js"
import { unusedPort } from "./support/Ports.js"
import { closeServers, envFor, fake, lines, run, start, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

/** The Read round trip: the model asks for README.md, then answers from the tool result it got. */
const readRoundTrip = (): Array<FakeAnthropic.ScriptItem> => [
  FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "README.md" }, id: "toolu_read" }], {
    model: "claude-sonnet-4-6",
    usage: { input_tokens: 100, output_tokens: 20 }
  }),
  (body) => {
    const result = body.messages.at(-1).content[0]
    const firstLine = String(result.content).split("\n")[0]!.replace(/^\s*\d+\t/, "")
    return FakeAnthropic.textReply(`Summary: ${firstLine}`, {
      model: "claude-sonnet-4-6",
      usage: { input_tokens: 200, output_tokens: 10 }
    })
  }
]

describe("keel -p", () => {
  it("makes a Read round trip and prints the answer (text output)", async () => {
    const server = await fake(readRoundTrip())
    const dir = workdir()
    const r = await run(["-p", "read README.md and summarise it"], { env: envFor(server), cwd: dir })
    assert.strictEqual(r.stderr, "")
    assert.strictEqual(r.stdout, "Summary: # Demo project\n")
    assert.strictEqual(r.code, 0)
    assert.strictEqual(server.requests.length, 2)
    const first = server.requests[0]!.body
    assert.strictEqual(first.model, "claude-sonnet-4-6")
    assert.strictEqual(first.stream, true)
    assert.deepStrictEqual(first.tools.map((t: any) => t.name), [
      "Read",
      "Write",
      "Edit",
      "Bash",
      "Glob",
      "Grep",
      "TodoWrite",
      "Task",
      "AskUserQuestion",
      "update_goal"
    ])
    // The prompt as a cached text block (prompt caching sends string content as the block it stands for).
    assert.deepStrictEqual(first.messages, [{
      role: "user",
      content: [{ type: "text", text: "read README.md and summarise it", cache_control: { type: "ephemeral" } }]
    }])
    assert.include(first.system.at(-1).text, `Working directory: ${fs.realpathSync(dir)}`)
    const second = server.requests[1]!.body
    assert.deepStrictEqual(second.messages.map((m: any) => m.role), ["user", "assistant", "user"])
    assert.deepStrictEqual(second.messages[2].content, [{
      type: "tool_result",
      tool_use_id: "toolu_read",
      content: "     1\t# Demo project\n     2\t\n     3\tIt counts sheep.\n     4\tThree lines.",
      cache_control: { type: "ephemeral" }
    }])
  })

  it("the README's first command on a README too large to read at once: the demo reads the range the refusal names", async () => {
    // What `npm run fake-api` serves: a README over Read's limits is read in the range Read suggests.
    const server = await fake([], { fallback: demo })
    const dir = workdir()
    const line = `${"lorem ipsum ".repeat(12)}\n`
    fs.writeFileSync(path.join(dir, "README.md"), `# Big project\n${line.repeat(3_000)}`)
    const r = await run(["-p", "read README.md and summarise it"], { env: envFor(server), cwd: dir })
    assert.strictEqual(r.code, 0)
    assert.strictEqual(server.requests.length, 3)
    const refused = server.requests[1]!.body.messages.at(-1).content[0]
    assert.strictEqual(refused.is_error, true)
    const read = server.requests[2]!.body.messages.at(-2).content.find((b: any) => b.type === "tool_use")
    assert.deepStrictEqual(read.input, { file_path: "README.md", ...rangeAsked(refused) })
    assert.match(r.stdout, /^README\.md summary: # Big project \(\d+ lines read\)\n$/)
  })

  it("stream-json prints init, assistant, user, assistant and one result, in Claude Code's shape", async () => {
    const server = await fake(readRoundTrip())
    const dir = workdir()
    const r = await run(["-p", "summarise", "--output-format", "stream-json"], { env: envFor(server), cwd: dir })
    assert.strictEqual(r.code, 0)
    const messages = lines(r.stdout)
    assert.deepStrictEqual(messages.map((m) => m.subtype ? `${m.type}/${m.subtype}` : m.type), [
      "system/init",
      "assistant",
      "user",
      "assistant",
      "result/success"
    ])
    const sessionId = messages[0].session_id
    assert.match(sessionId, /^[0-9a-f-]{36}$/)
    for (const m of messages) {
      assert.strictEqual(m.session_id, sessionId)
      assert.match(m.uuid, /^[0-9a-f-]{36}$/)
    }
    const init = messages[0]
    assert.strictEqual(init.cwd, fs.realpathSync(dir))
    assert.strictEqual(init.model, "claude-sonnet-4-6")
    assert.deepStrictEqual(init.tools, ["Read", "Write", "Edit", "Bash", "Glob", "Grep", "TodoWrite", "Task", "AskUserQuestion", "update_goal"])
    assert.strictEqual(init.permissionMode, "default")
    assert.strictEqual(messages[1].message.content[0].type, "tool_use")
    assert.strictEqual(messages[1].parent_tool_use_id, null)
    assert.strictEqual(messages[2].message.content[0].tool_use_id, "toolu_read")
    const result = messages[4]
    assert.strictEqual(result.is_error, false)
    assert.strictEqual(result.result, "Summary: # Demo project")
    assert.strictEqual(result.num_turns, 2)
    assert.strictEqual(result.stop_reason, "end_turn")
    assert.strictEqual(result.terminal_reason, "completed")
    assert.deepStrictEqual(result.permission_denials, [])
    assert.strictEqual(result.usage.input_tokens, 300)
    assert.strictEqual(result.usage.output_tokens, 30)
    assert.closeTo(result.total_cost_usd, (300 * 3 + 30 * 15) / 1e6, 1e-12)
    assert.strictEqual(result.modelUsage["claude-sonnet-4-6"].inputTokens, 300)
    assert.isAtLeast(result.duration_ms, result.duration_api_ms)
    assert.isNumber(result.duration_api_ms)
  })

  it("--include-partial-messages adds stream_event lines with the raw events", async () => {
    const server = await fake([FakeAnthropic.textReply("hi", { chunkSize: 1 })])
    const r = await run(["-p", "x", "--output-format", "stream-json", "--include-partial-messages"], {
      env: envFor(server)
    })
    const events = lines(r.stdout).filter((m) => m.type === "stream_event").map((m) => m.event.type)
    assert.deepStrictEqual(events, [
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop"
    ])
  })

  it("json prints the result object; with --verbose, every message", async () => {
    // Priced answers: an unpriced model would add its one-time warning to the messages.
    const sonnet = { model: "claude-sonnet-4-6" }
    const server = await fake([FakeAnthropic.textReply("one", sonnet), FakeAnthropic.textReply("two", sonnet)])
    const plain = await run(["-p", "x", "--output-format", "json"], { env: envFor(server) })
    const result = JSON.parse(plain.stdout)
    assert.strictEqual(result.type, "result")
    assert.strictEqual(result.result, "one")
    const verbose = await run(["-p", "x", "--output-format", "json", "--verbose"], { env: envFor(server) })
    const all = JSON.parse(verbose.stdout)
    assert.deepStrictEqual(all.map((m: any) => m.type), ["system", "assistant", "result"])
  })

  it("reads the prompt from stdin when none is given, and honours --model and --system-prompt", async () => {
    const server = await fake([FakeAnthropic.textReply("ok")])
    const r = await run(["-p", "--model", "claude-opus-4-5", "--system-prompt", "Be brief."], {
      env: envFor(server),
      stdin: "from stdin\n"
    })
    assert.strictEqual(r.code, 0)
    const body = server.requests[0]!.body
    assert.strictEqual(body.model, "claude-opus-4-5")
    // --system-prompt replaces the whole prompt (no instructions, git or environment), sent as one cached block.
    assert.deepStrictEqual(body.system, [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }])
    assert.deepStrictEqual(body.messages, [{
      role: "user",
      content: [{ type: "text", text: "from stdin\n", cache_control: { type: "ephemeral" } }]
    }])
  })

  it("an API error ends with is_error and exit code 1, saying what failed", async () => {
    const server = await fake([FakeAnthropic.errorReply(529, "overloaded_error", "Overloaded")])
    const text = await run(["-p", "x"], { env: { ...envFor(server), KEEL_MAX_RETRIES: "0" } })
    assert.strictEqual(text.code, 1)
    assert.strictEqual(text.stdout, "")
    assert.strictEqual(text.stderr, "API Error: Overloaded (HTTP 529): Overloaded [request req_1]\n")
  })

  it("an API error in json output is success + is_error with api_error_status", async () => {
    const server = await fake([FakeAnthropic.errorReply(529, "overloaded_error", "Overloaded")])
    const r = await run(["-p", "x", "--output-format", "json"], { env: { ...envFor(server), KEEL_MAX_RETRIES: "0" } })
    assert.strictEqual(r.code, 1)
    const result = JSON.parse(r.stdout)
    assert.deepStrictEqual([result.subtype, result.is_error, result.api_error_status], ["success", true, 529])
  })

  it("--max-turns ends with error_max_turns and exit code 1", async () => {
    const again = () => FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "README.md" } }])
    const server = await fake([again, again, again])
    const r = await run(["-p", "loop", "--max-turns", "2", "--output-format", "json"], { env: envFor(server) })
    assert.strictEqual(r.code, 1)
    const result = JSON.parse(r.stdout)
    assert.strictEqual(result.subtype, "error_max_turns")
    assert.strictEqual(result.num_turns, 2)
    assert.deepStrictEqual(result.errors, ["Reached max turns (2)"])
    assert.strictEqual(server.requests.length, 2)
  })

  it("an unreachable ANTHROPIC_BASE_URL (connection refused) fails within seconds: two quick retries, one clear line, exit 1", async () => {
    const port = await unusedPort()
    const url = `http://127.0.0.1:${port}`
    const started = Date.now()
    const r = await run(["-p", "x"], { env: { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: "k" } })
    assert.isBelow(Date.now() - started, 10_000)
    assert.strictEqual(r.code, 1)
    assert.strictEqual(r.stdout, "")
    const stderr = r.stderr.trimEnd().split("\n")
    // The two retries are announced (text mode's progress lines), then the error result: one line.
    assert.match(stderr[0]!, new RegExp(`^keel: Could not reach the API at ${url} \\(ECONNREFUSED: connection refused\\); retrying in 0\\.\\d s \\(retry 1/2\\)$`))
    assert.match(stderr[1]!, /\(retry 2\/2\)$/)
    assert.deepStrictEqual(stderr.slice(2), [
      `API Error: Could not reach the API at ${url} (ECONNREFUSED: connection refused) after 3 attempts. ` +
      "Check ANTHROPIC_BASE_URL and your network connection."
    ])
    assert.notInclude(r.stderr, "    at ")
  })

  it("an ANTHROPIC_BASE_URL whose host does not exist fails within seconds, naming the URL; stream-json says so in the result", async () => {
    const url = "http://keel-test-no-such-host.invalid"
    const started = Date.now()
    const r = await run(["-p", "x", "--output-format", "stream-json"], { env: { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: "k" } })
    assert.isBelow(Date.now() - started, 15_000)
    assert.strictEqual(r.code, 1)
    const messages = lines(r.stdout)
    const retries = messages.filter((m) => m.subtype === "api_retry")
    assert.deepStrictEqual(retries.map((m) => [m.attempt, m.max_retries, m.error_status]), [[1, 2, null], [2, 2, null]])
    const result = messages.at(-1)
    assert.deepStrictEqual([result.subtype, result.is_error, result.api_error_status], ["success", true, null])
    // ENOTFOUND, or EAI_AGAIN where no name server answers at all.
    assert.match(
      result.result,
      new RegExp(`^API Error: Could not reach the API at ${url} \\((ENOTFOUND: no such host|EAI_AGAIN: host name lookup failed)\\) after 3 attempts\\. Check ANTHROPIC_BASE_URL`)
    )
  })

  it("SIGINT during a stalled stream ends the turn with a result and exit code 130", async () => {
    const server = await fake([{ ...FakeAnthropic.textReply("never finishes"), stallAfter: 3 }])
    const { child, done } = start(["-p", "x", "--output-format", "stream-json"], { env: envFor(server) })
    let out = ""
    child.stdout!.on("data", (d) => (out += d))
    // Wait (bounded) until the request is in flight, then interrupt.
    for (let i = 0; i < 200 && server.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 25))
    assert.strictEqual(server.requests.length, 1)
    child.kill("SIGINT")
    const r = await done
    assert.strictEqual(r.code, 130)
    const result = lines(out).at(-1)
    assert.strictEqual(result.type, "result")
    assert.strictEqual(result.subtype, "error_during_execution")
    assert.strictEqual(result.terminal_reason, "aborted_streaming")
  })
})

describe("keel usage errors", () => {
  it("--version prints the version", async () => {
    const r = await run(["--version"])
    assert.deepStrictEqual([r.code, r.stdout], [0, "0.1.0\n"])
  })

  it("an unknown flag is exit code 2 with a one-line reason and a pointer to --help", async () => {
    const r = await run(["-p", "x", "--frobnicate"])
    assert.strictEqual(r.code, 2)
    assert.strictEqual(r.stderr, "keel: unknown option '--frobnicate'\nRun keel --help for usage.\n")
  })

  it("a bad --max-turns or --output-format is exit code 2", async () => {
    const turns = await run(["-p", "x", "--max-turns", "0"])
    assert.strictEqual(turns.code, 2)
    assert.include(turns.stderr, "--max-turns must be a positive whole number, got \"0\"")
    const format = await run(["-p", "x", "--output-format", "yaml"])
    assert.strictEqual(format.code, 2)
    assert.include(format.stderr, "Allowed choices are text, json, stream-json")
  })

  it("no prompt at all is exit code 2", async () => {
    const r = await run(["-p"])
    assert.strictEqual(r.code, 2)
    assert.include(r.stderr, "keel: no prompt.")
  })

  it("a missing API key is exit code 1 with how to set it, and no stack trace", async () => {
    const r = await run(["-p", "x"])
    assert.strictEqual(r.code, 1)
    assert.strictEqual(
      r.stderr,
      "keel: ANTHROPIC_API_KEY is not set. Set it to your Anthropic API key (export ANTHROPIC_API_KEY=sk-ant-...), " +
        "or set ANTHROPIC_AUTH_TOKEN, and ANTHROPIC_BASE_URL for a server other than api.anthropic.com.\n"
    )
  })

  it("--resume with --continue is exit 2, one line saying why and a pointer to --help", async () => {
    const r = await run(["-p", "x", "--resume", "abc", "--continue"])
    assert.strictEqual(r.code, 2)
    assert.strictEqual(
      r.stderr,
      "keel: --resume and --continue cannot be used together: --resume <id> picks a session, --continue the latest one of this folder.\n" +
        "Run keel --help for usage.\n"
    )
  })

  it("an unreadable --mcp-config (no such file, not JSON) is exit 2 naming the file and what to give", async () => {
    const dir = workdir()
    const missing = await run(["-p", "x", "--mcp-config", path.join(dir, "nope.json")], { env: { ANTHROPIC_API_KEY: "k" }, cwd: dir })
    assert.strictEqual(missing.code, 2)
    assert.strictEqual(
      missing.stderr,
      `keel: --mcp-config ${path.join(dir, "nope.json")}: no such file; give the path of a JSON file or the JSON itself\n`
    )
    fs.writeFileSync(path.join(dir, "bad.json"), "{bad")
    const bad = await run(["-p", "x", "--mcp-config", "bad.json"], { env: { ANTHROPIC_API_KEY: "k" }, cwd: dir })
    assert.strictEqual(bad.code, 2)
    assert.strictEqual(bad.stderr.split("\n").length, 2, "one line")
    assert.match(bad.stderr, /^keel: .*bad\.json is not valid JSON \(.*\); fix it to read like \{"mcpServers"/)
  })

  it("--input-format stream-json needs --output-format stream-json and no prompt argument (exit 2, as Claude Code)", async () => {
    const text = await run(["-p", "--input-format", "stream-json"])
    assert.strictEqual(text.code, 2)
    assert.strictEqual(
      text.stderr,
      "keel: --input-format stream-json requires --output-format stream-json (each turn's messages and result are JSON lines).\n" +
        "Run keel --help for usage.\n"
    )
    const prompt = await run(["-p", "hello", "--input-format", "stream-json", "--output-format", "stream-json"])
    assert.strictEqual(prompt.code, 2)
    assert.include(prompt.stderr, "the prompts come on stdin as user messages, one JSON line each; drop the prompt argument.")
    const format = await run(["-p", "x", "--input-format", "yaml"])
    assert.strictEqual(format.code, 2)
    assert.include(format.stderr, "Allowed choices are text, stream-json")
  })

  it("an internal error is one line without --debug, and the stack trace with it", () => {
    const cause = Cause.die(new Error("boom"))
    const plain = Runtime.describeFailure(cause, false)
    assert.deepStrictEqual(plain, { code: 1, lines: ["internal error: boom (run with --debug for the stack trace)"] })
    const debug = Runtime.describeFailure(cause, true)
    assert.strictEqual(debug.code, 1)
    assert.match(debug.lines.join("\n"), /internal error: Error: boom\n\s+at /)
  })
})

/** The modules a `keel` run loads, as URLs (traced by support/trace-loads.mjs). */
const loadedBy = async (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const trace = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "keel-trace-")), "loads.txt")
  const r = await run(args, {
    env: {
      ...env,
      KEEL_TRACE_LOADS: trace,
      NODE_OPTIONS: `--import ${path.join(import.meta.dirname, "support", "trace-loads.mjs")}`
    }
  })
  const urls = fs.existsSync(trace) ? fs.readFileSync(trace, "utf8").trim().split("\n") : []
  return { ...r, urls, bundle: urls.filter((u) => u.includes("/packages/cli/bundle/")) }
}

/** Whether any of these module URLs holds the kernel (the session's Context tag is in it). */
const loadsKernel = (urls: ReadonlyArray<string>) =>
  urls.some((u) => u.startsWith("file:") && fs.readFileSync(new URL(u), "utf8").includes("@keel/core/Session"))

describe("keel start-up", () => {
  it("--version and --help answer from the flag parser alone: the kernel is never loaded (a -p run loads it)", async () => {
    const version = await loadedBy(["--version"])
    assert.deepStrictEqual([version.code, version.stdout], [0, "0.1.0\n"])
    const help = await loadedBy(["--help"])
    assert.strictEqual(help.code, 0)
    assert.include(help.stdout, "--input-format <format>")
    for (const r of [version, help]) {
      assert.include(r.bundle.map((u) => path.basename(u)), "main.cjs")
      assert.isFalse(loadsKernel(r.urls), `loaded:\n${r.urls.join("\n")}`)
      assert.isFalse(r.urls.some((u) => /\/(Headless|Repl|Query)-[^/]*\.c?js$/.test(u)))
    }
    // The trace sees the kernel when a run needs it (here one that stops at the missing API key).
    const headless = await loadedBy(["-p", "x"])
    assert.strictEqual(headless.code, 1)
    assert.isTrue(loadsKernel(headless.urls))
  })

  it("a -p run without MCP servers never loads the MCP SDK (nor zod, nor ajv); one with a server does", async () => {
    const server = await fake([FakeAnthropic.textReply("one"), FakeAnthropic.textReply("two")])
    const plain = await loadedBy(["-p", "hi"], envFor(server))
    assert.deepStrictEqual([plain.code, plain.stdout], [0, "one\n"], plain.stderr)
    assert.deepStrictEqual(plain.urls.filter(loadsMcpStack), [], `loaded:\n${plain.urls.join("\n")}`)
    // A server whose command does not exist: it fails to start (and is reported), the run goes on.
    const config = JSON.stringify({ mcpServers: { gone: { command: "/nonexistent/keel-test-mcp-server" } } })
    const withServer = await loadedBy(["-p", "hi", "--mcp-config", config], envFor(server))
    assert.deepStrictEqual([withServer.code, withServer.stdout], [0, "two\n"], withServer.stderr)
    assert.isNotEmpty(withServer.urls.filter(loadsMcpStack))
  })
})

describe("query() from the package", () => {
  it("import { query } from \"@keel/cli\" in plain node loads the bundle (not dist's modules one by one), and runs", async () => {
    const server = await fake([FakeAnthropic.textReply("hello from the bundle")])
    const trace = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "keel-trace-")), "loads.txt")
    const env: Record<string, string | undefined> = { ...process.env, ...envFor(server), KEEL_TRACE_LOADS: trace }
    env.NODE_OPTIONS = `--import ${path.join(import.meta.dirname, "support", "trace-loads.mjs")}`
    env.KEEL_HOME = fs.mkdtempSync(path.join(os.tmpdir(), "keel-home-"))
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
      execFile(process.execPath, [path.join(import.meta.dirname, "support", "query-once.mjs"), "hi"], { cwd: workdir(), env }, (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : (error.code as number | null), stdout, stderr }))
    )
    assert.deepStrictEqual([r.code, r.stdout], [0, "hello from the bundle\n"], r.stderr)
    const urls = fs.readFileSync(trace, "utf8").trim().split("\n")
    assert.isTrue(urls.some((u) => u.endsWith("/packages/cli/bundle/index.js")), urls.join("\n"))
    assert.deepStrictEqual(urls.filter((u) => /\/packages\/[a-z]+\/dist\//.test(u)), [])
  })
})

/** Whether this module URL holds the MCP SDK, zod or ajv (the bundle names each source file it holds). */
const loadsMcpStack = (url: string) =>
  url.startsWith("file:") && /\/node_modules\/(@modelcontextprotocol\/sdk|zod|ajv)\//.test(fs.readFileSync(new URL(url), "utf8"))
