/**
 * End to end: `query()`, the embedding facade in the Claude Agent SDK's shape, in this process
 * against the loopback fake Messages API (the real `@anthropic-ai/sdk` over HTTP): one prompt,
 * streaming input, the permission callback, interrupt and abort, leaving the loop early (MCP servers
 * closed, the request aborted), errors before a turn, the `env` option, and `examples/query.ts`;
 * then streaming input through the session runtime: messages queued as the host yields them, their
 * `priority`, `interrupt()`'s receipt, an abort that drops what waits, and a full queue.
 * Every run gets its configuration through `options.env` (with `KEEL_HOME` in a temporary folder).
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Admission } from "@keel/core"
import { type Query, query, QueryError } from "@keel/cli"
import { alive } from "../packages/tools/test/support/Processes.js"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { demo } from "./support/fake-api-cli.js"
import { closeServers, fake, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const TIMEOUT = 60_000

const root = path.resolve(import.meta.dirname, "..")
const testServer = path.join(root, "test", "support", "mcp-test-server.mjs")

/** The environment of a run against `server`, with sessions saved inside `dir`. */
const envFor = (server: FakeAnthropic.FakeAnthropic, dir: string): Record<string, string> => ({
  ANTHROPIC_BASE_URL: server.url,
  ANTHROPIC_API_KEY: "test-key",
  KEEL_HOME: path.join(dir, ".keel-home")
})

/** Every message of `q`, to the end. */
const collect = async (q: AsyncIterable<Query.SDKMessage>): Promise<Array<Query.SDKMessage>> => {
  const out: Array<Query.SDKMessage> = []
  for await (const m of q) out.push(m)
  return out
}

/** Waits (real time, bounded) until `check` holds. */
const until = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 400; i++) {
    if (check()) return
    await new Promise((r) => setTimeout(r, 25))
  }
  assert.fail(`timed out waiting for ${what}`)
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** A streamed user message, as the Agent SDK's streaming input has them. */
const user = (content: Query.SDKUserMessage["message"]["content"]): Query.SDKUserMessage => ({
  type: "user",
  message: { role: "user", content },
  parent_tool_use_id: null
})

/** The kinds of messages, `type` or `type/subtype`, without the informational notes (e.g. the unknown price of the fake model). */
/**
 * The kinds of messages, in order, without informational notes and `tool_progress` (sent while a tool
 * runs past the progress interval: whether a Read gets one depends on the machine's load).
 */
const kinds = (messages: ReadonlyArray<Query.SDKMessage>) =>
  messages.filter((m) => !(m.type === "system" && m.subtype === "informational") && m.type !== "tool_progress").map((m) =>
    m.type === "system" ? `system/${m.subtype}` : m.type
  )

const resultsOf = (messages: ReadonlyArray<Query.SDKMessage>) =>
  messages.filter((m): m is Extract<Query.SDKMessage, { type: "result" }> => m.type === "result")

/** The rejection of `promise` (fails when it resolves). */
const rejection = async (promise: Promise<unknown>): Promise<unknown> => {
  try {
    await promise
  } catch (error) {
    return error
  }
  return assert.fail("expected a rejection")
}

describe("query()", () => {
  it("one prompt: init, assistant, user (a real Read in cwd), assistant, result; nothing runs before the first next()", async () => {
    const dir = workdir()
    const server = await fake([
      FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "README.md" }, id: "toolu_read" }]),
      FakeAnthropic.textReply("It counts sheep.")
    ])
    const q = query({ prompt: "What does the project do?", options: { cwd: dir, env: envFor(server, dir) } })
    await sleep(200)
    assert.strictEqual(server.requests.length, 0, "lazy: no request before the first next()")
    const messages = await collect(q)
    assert.deepStrictEqual(kinds(messages), ["system/init", "assistant", "user", "assistant", "result"])
    const [init, call, toolResult, answer] = messages.filter((m) =>
      (m.type !== "system" || m.subtype !== "informational") && m.type !== "tool_progress"
    )
    assert.strictEqual(init!.type === "system" && init!.subtype === "init" && init!.cwd, dir)
    assert.deepStrictEqual(call!.type === "assistant" && call!.message.content, [
      { type: "tool_use", id: "toolu_read", name: "Read", input: { file_path: "README.md" } }
    ])
    const block = toolResult!.type === "user" && Array.isArray(toolResult!.message.content)
      ? toolResult!.message.content[0] as any
      : undefined
    assert.strictEqual(block?.tool_use_id, "toolu_read")
    assert.include(JSON.stringify(block?.content), "It counts sheep.")
    assert.strictEqual(answer!.type, "assistant")
    const result = messages.at(-1)!
    assert.isTrue(result.type === "result" && result.subtype === "success" && !result.is_error)
    assert.strictEqual(result.type === "result" && result.result, "It counts sheep.")
    assert.strictEqual(new Set(messages.map((m) => m.session_id)).size, 1)
    assert.strictEqual(server.requests.length, 2)
    assert.include(JSON.stringify(server.requests[1]!.body.messages.at(-1)), "It counts sheep.")
    assert.deepStrictEqual(await q.next(), { done: true, value: undefined }, "a finished query stays done")
  }, TIMEOUT)

  it("streaming input: one turn per message, in one session (the second yielded after the first result)", async () => {
    const dir = workdir()
    const server = await fake([FakeAnthropic.textReply("first answer"), FakeAnthropic.textReply("second answer")])
    let firstResult!: () => void
    const gotFirst = new Promise<void>((resolve) => (firstResult = resolve))
    let done = false
    async function* input() {
      yield user("first question")
      await gotFirst
      yield user([{ type: "text", text: "second question" }])
      done = true
    }
    const messages: Array<Query.SDKMessage> = []
    for await (const m of query({ prompt: input(), options: { cwd: dir, env: envFor(server, dir) } })) {
      messages.push(m)
      if (m.type === "result") firstResult()
    }
    assert.isTrue(done)
    assert.deepStrictEqual(kinds(messages), ["system/init", "assistant", "result", "assistant", "result"])
    const results = resultsOf(messages)
    assert.deepStrictEqual(results.map((r) => r.result), ["first answer", "second answer"])
    assert.strictEqual(results[0]!.session_id, results[1]!.session_id)
    assert.strictEqual(new Set(messages.map((m) => m.session_id)).size, 1)
    const second = server.requests[1]!.body.messages
    assert.deepStrictEqual(second.map((m: any) => m.role), ["user", "assistant", "user"])
    assert.include(JSON.stringify(second[0]), "first question")
    assert.include(JSON.stringify(second[2]), "second question")
  }, TIMEOUT)

  it("streaming input that throws: the turns before it run, then next() rejects with its error as it was", async () => {
    const dir = workdir()
    const server = await fake([FakeAnthropic.textReply("first answer")])
    const broken = new Error("the input broke")
    async function* input() {
      yield user("first question")
      throw broken
    }
    const q = query({ prompt: input(), options: { cwd: dir, env: envFor(server, dir) } })
    const messages: Array<Query.SDKMessage> = []
    const error = await rejection((async () => {
      for await (const m of q) messages.push(m)
    })())
    assert.strictEqual(error, broken)
    assert.deepStrictEqual(resultsOf(messages).map((r) => r.result), ["first answer"])
  }, TIMEOUT)

  it("canUseTool: asked for Write and Bash calls with the SDK's arguments; allow runs the call, deny's message reaches the model", async () => {
    const dir = workdir()
    const out = path.join(dir, "out.txt")
    const server = await fake([
      FakeAnthropic.toolUseReply([
        { name: "Write", input: { file_path: out, content: "written" }, id: "toolu_write" },
        { name: "Bash", input: { command: "touch bash-ran" }, id: "toolu_bash" }
      ]),
      FakeAnthropic.textReply("done")
    ])
    const asked: Array<{ tool: string; input: unknown; toolUseID: string; reason: unknown; signal: boolean }> = []
    const messages = await collect(query({
      prompt: "write and run",
      options: {
        cwd: dir,
        env: envFor(server, dir),
        canUseTool: async (tool, input, { decisionReason, signal, toolUseID }) => {
          asked.push({ tool, input, toolUseID, reason: decisionReason, signal: signal instanceof AbortSignal })
          return tool === "Write"
            ? { behavior: "allow", updatedInput: input }
            : { behavior: "deny", message: "no shell today" }
        }
      }
    }))
    assert.deepStrictEqual(asked.map((a) => [a.tool, a.toolUseID, a.signal]), [["Write", "toolu_write", true], [
      "Bash",
      "toolu_bash",
      true
    ]])
    assert.deepStrictEqual(asked[0]!.input, { file_path: out, content: "written" })
    assert.isString(asked[0]!.reason)
    assert.strictEqual(fs.readFileSync(out, "utf8"), "written")
    assert.isFalse(fs.existsSync(path.join(dir, "bash-ran")))
    const results = server.requests[1]!.body.messages.at(-1).content
    const bash = results.find((b: any) => b.tool_use_id === "toolu_bash")
    assert.isTrue(bash.is_error)
    assert.include(JSON.stringify(bash.content), "no shell today")
    const result = resultsOf(messages)[0]!
    assert.deepStrictEqual(result.permission_denials.map((d) => d.tool_name), ["Bash"])
  }, TIMEOUT)

  it("canUseTool answering deny with interrupt: true stops the turn", async () => {
    const dir = workdir()
    const server = await fake([
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "echo hi" }, id: "toolu_bash" }]),
      FakeAnthropic.textReply("should not be asked for")
    ])
    const messages = await collect(query({
      prompt: "run it",
      options: {
        cwd: dir,
        env: envFor(server, dir),
        canUseTool: async () => ({ behavior: "deny", message: "stop everything", interrupt: true })
      }
    }))
    const result = resultsOf(messages)[0]!
    assert.strictEqual(result.subtype, "error_during_execution")
    assert.strictEqual(server.requests.length, 1)
  }, TIMEOUT)

  it("interrupt() mid-turn: the turn ends with an error result, its request is aborted, and the next message runs on a valid conversation", async () => {
    const dir = workdir()
    const server = await fake([
      { ...FakeAnthropic.textReply("this answer never finishes"), stallAfter: 3 },
      FakeAnthropic.textReply("after the interrupt")
    ])
    let firstResult!: () => void
    const gotFirst = new Promise<void>((resolve) => (firstResult = resolve))
    async function* input() {
      yield user("first")
      await gotFirst
      yield user("second")
    }
    const q = query({ prompt: input(), options: { cwd: dir, env: envFor(server, dir), includePartialMessages: true } })
    const messages: Array<Query.SDKMessage> = []
    let interrupted = false
    for await (const m of q) {
      messages.push(m)
      if (m.type === "stream_event" && !interrupted) {
        interrupted = true
        assert.deepStrictEqual(await q.interrupt(), { still_queued: [] }, "nothing waits: the second message comes after the result")
      }
      if (m.type === "result") firstResult()
    }
    const results = resultsOf(messages)
    assert.deepStrictEqual(results.map((r) => [r.subtype, r.is_error]), [["error_during_execution", true], ["success", false]])
    await until(() => server.aborted === 1, "the stalled request to be aborted")
    // The interrupted turn left no answer: its prompt, the note that the user interrupted it, and the
    // next prompt go as one user message.
    const second = server.requests[1]!.body.messages
    assert.deepStrictEqual(second.map((m: any) => m.role), ["user"])
    assert.deepStrictEqual(second[0].content.map((b: any) => b.text), ["first", "[Request interrupted by user]", "second"])
  }, TIMEOUT)

  it("abortController: aborting interrupts the turn, its result is still yielded, and the query ends though its input has not", async () => {
    const dir = workdir()
    const server = await fake([{ ...FakeAnthropic.textReply("this answer never finishes"), stallAfter: 3 }])
    const abortController = new AbortController()
    async function* input() {
      yield user("first")
      await new Promise(() => {}) // input that never comes
    }
    const messages: Array<Query.SDKMessage> = []
    for await (
      const m of query({ prompt: input(), options: { cwd: dir, env: envFor(server, dir), includePartialMessages: true, abortController } })
    ) {
      messages.push(m)
      if (m.type === "stream_event") abortController.abort()
    }
    const results = resultsOf(messages)
    assert.deepStrictEqual(results.map((r) => r.subtype), ["error_during_execution"])
    assert.strictEqual(messages.at(-1)!.type, "result")
    await until(() => server.aborted === 1, "the stalled request to be aborted")
  }, TIMEOUT)

  it("leaving the loop early stops the turn, aborts its request and closes the MCP servers (env reaches their config)", async () => {
    const dir = workdir()
    const pidFile = path.join(dir, "server.pid")
    const server = await fake([{ ...FakeAnthropic.textReply("this answer never finishes"), stallAfter: 3 }])
    const q = query({
      prompt: "go",
      options: {
        cwd: dir,
        env: { ...envFor(server, dir), QUERY_TEST_PID_FILE: pidFile },
        includePartialMessages: true,
        mcpServers: { flaky: { command: process.execPath, args: [testServer], env: { MCP_TEST_PID_FILE: "${QUERY_TEST_PID_FILE}" } } }
      }
    })
    let init: Query.SDKMessage | undefined
    let pid = 0
    for await (const m of q) {
      if (m.type === "system" && m.subtype === "init") init = m
      if (m.type === "stream_event") {
        pid = Number(fs.readFileSync(pidFile, "utf8"))
        assert.isTrue(alive(pid), "the MCP server runs while the query does")
        break
      }
    }
    assert.deepStrictEqual(init?.type === "system" && init.subtype === "init" && init.mcp_servers, [{ name: "flaky", status: "connected" }])
    assert.isFalse(alive(pid), "the MCP server is closed once the loop is left")
    await until(() => server.aborted === 1, "the stalled request to be aborted")
    assert.deepStrictEqual(await q.next(), { done: true, value: undefined })
  }, TIMEOUT)

  it("close() while next() waits: the waiting next() ends the iteration and the request is aborted", async () => {
    const dir = workdir()
    const server = await fake([{ ...FakeAnthropic.textReply("this answer never finishes"), stallAfter: 3 }])
    const q = query({ prompt: "go", options: { cwd: dir, env: envFor(server, dir) } })
    const first = await q.next()
    assert.isTrue(first.done === false && first.value.type === "system" && first.value.subtype === "init")
    let waiting: IteratorResult<Query.SDKMessage, void> | undefined
    const pending = q.next().then((r) => (waiting = r))
    await until(() => server.requests.length === 1, "the request")
    await sleep(100)
    assert.isUndefined(waiting, "no assistant message while the answer stalls")
    q.close()
    assert.deepStrictEqual(await pending, { done: true, value: undefined })
    await until(() => server.aborted === 1, "the stalled request to be aborted")
    assert.deepStrictEqual(await q.next(), { done: true, value: undefined })
  }, TIMEOUT)

  it("errors before a turn reject next() with a QueryError carrying keel's message: no API key, unsupported options, a bad MCP config", async () => {
    const dir = workdir()
    const noKey = query({
      prompt: "hi",
      options: { cwd: dir, env: { ANTHROPIC_API_KEY: undefined, ANTHROPIC_AUTH_TOKEN: undefined, KEEL_HOME: path.join(dir, ".keel-home") } }
    })
    const missing = await rejection(noKey.next())
    assert.instanceOf(missing, QueryError)
    assert.strictEqual((missing as QueryError).code, 1)
    assert.match((missing as QueryError).message, /^ANTHROPIC_API_KEY is not set\. Set it to your Anthropic API key/)
    assert.notInclude((missing as QueryError).message, "\n    at ", "no stack trace")
    assert.deepStrictEqual(await noKey.next(), { done: true, value: undefined }, "rejected once, then done")

    const env = { ANTHROPIC_API_KEY: "test-key", KEEL_HOME: path.join(dir, ".keel-home") }
    const unsupported = await rejection(
      query({ prompt: "hi", options: { cwd: dir, env, sandbox: {}, plugins: [] } as Query.Options }).next()
    )
    assert.instanceOf(unsupported, QueryError)
    assert.strictEqual((unsupported as QueryError).code, 2)
    assert.include((unsupported as QueryError).message, "Keel does not support the options sandbox, plugins")

    const auto = await rejection(
      query({ prompt: "hi", options: { cwd: dir, env, permissionMode: "auto" } as unknown as Query.Options }).next()
    )
    assert.include((auto as Error).message, `permissionMode "auto" is not one of Keel's modes`)

    const bypass = await rejection(query({ prompt: "hi", options: { cwd: dir, env, permissionMode: "bypassPermissions" } }).next())
    assert.include((bypass as Error).message, "allowDangerouslySkipPermissions: true")

    const badMcp = await rejection(
      query({ prompt: "hi", options: { cwd: dir, env, mcpServers: { remote: { type: "http", url: "ftp://example.com" } } } }).next()
    )
    assert.instanceOf(badMcp, QueryError)
    assert.strictEqual((badMcp as QueryError).code, 2)
    assert.include((badMcp as QueryError).message, `mcpServers.remote has "url": "ftp://example.com"`)
  }, TIMEOUT)

  it("env: the API URL, key and model given only in options.env reach the server, and process.env is left as it was", async () => {
    const dir = workdir()
    const server = await fake([FakeAnthropic.textReply("hello")])
    const saved = { ...process.env }
    // What process.env says would fail: a closed port, a wrong key, no retries.
    process.env.ANTHROPIC_BASE_URL = "http://127.0.0.1:9"
    process.env.ANTHROPIC_API_KEY = "from-process-env"
    process.env.KEEL_MAX_RETRIES = "0"
    try {
      const messages = await collect(query({
        prompt: "hi",
        options: {
          cwd: dir,
          env: {
            ANTHROPIC_BASE_URL: server.url,
            ANTHROPIC_API_KEY: "from-options",
            ANTHROPIC_MODEL: "claude-from-options-env",
            KEEL_HOME: path.join(dir, ".keel-home")
          }
        }
      }))
      assert.strictEqual(resultsOf(messages)[0]?.result, "hello")
      assert.strictEqual(server.requests.length, 1)
      const headers = JSON.stringify(server.requests[0]!.headers)
      assert.include(headers, "from-options")
      assert.notInclude(headers, "from-process-env")
      assert.strictEqual(server.requests[0]!.body.model, "claude-from-options-env")
      assert.strictEqual(process.env.ANTHROPIC_BASE_URL, "http://127.0.0.1:9")
      assert.isUndefined(process.env.ANTHROPIC_MODEL)
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k]
      Object.assign(process.env, saved)
    }
  }, TIMEOUT)

  it("env reaches Bash commands too (over this process's environment), and process.env is left as it was", async () => {
    const dir = workdir()
    const server = await fake([
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "echo \"[$QUERY_BASH_VAR]\"" }, id: "toolu_env" }]),
      FakeAnthropic.textReply("done")
    ])
    await collect(query({
      prompt: "show the variable",
      options: { cwd: dir, env: { ...envFor(server, dir), QUERY_BASH_VAR: "from options.env" }, allowedTools: ["Bash"] }
    }))
    const result = server.requests[1]!.body.messages.at(-1).content.find((b: any) => b.tool_use_id === "toolu_env")
    assert.notStrictEqual(result.is_error, true)
    assert.include(JSON.stringify(result.content), "[from options.env]")
    assert.isUndefined(process.env.QUERY_BASH_VAR)
  }, TIMEOUT)

  it("setModel(): later turns use the new model; without one, back to the first", async () => {
    const dir = workdir()
    const server = await fake([FakeAnthropic.textReply("1"), FakeAnthropic.textReply("2"), FakeAnthropic.textReply("3")])
    const results: Array<() => void> = []
    const gates = [0, 1].map(() => new Promise<void>((resolve) => results.push(resolve)))
    async function* input() {
      yield user("one")
      await gates[0]
      yield user("two")
      await gates[1]
      yield user("three")
    }
    const q = query({ prompt: input(), options: { cwd: dir, env: envFor(server, dir), model: "claude-first" } })
    let n = 0
    for await (const m of q) {
      if (m.type !== "result") continue
      if (n === 0) await q.setModel("claude-second")
      if (n === 1) await q.setModel()
      results[n++]?.()
    }
    assert.deepStrictEqual(server.requests.map((r) => r.body.model), ["claude-first", "claude-second", "claude-first"])
  }, TIMEOUT)

  it("examples/query.ts runs against the fake API and prints the tool call and the answer", async () => {
    const dir = workdir()
    const server = await FakeAnthropic.start([], { fallback: demo })
    try {
      const child = spawn(
        path.join(root, "node_modules", ".bin", "tsx"),
        [path.join(root, "examples", "query.ts"), "What does README.md say?"],
        {
          cwd: dir,
          env: { ...process.env, ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test-key", KEEL_HOME: path.join(dir, ".keel-home") },
          stdio: ["ignore", "pipe", "pipe"]
        }
      )
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (d) => (stdout += d))
      child.stderr.on("data", (d) => (stderr += d))
      const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
      assert.strictEqual(code, 0, stderr)
      assert.include(stdout, "I'll read README.md first.")
      assert.include(stdout, `[tool] Read {"file_path":"README.md"}`)
      assert.include(stdout, "README.md summary: # Demo project (4 lines read)")
      assert.match(stdout, /\[result\] success after 2 model calls/)
      assert.strictEqual(server.requests.length, 2)
    } finally {
      await server.close()
    }
  }, TIMEOUT)
})

/** The text blocks of the last message of a request body (string content as one block). */
const lastTexts = (body: any): ReadonlyArray<string> => {
  const content = body.messages.at(-1).content
  return typeof content === "string" ? [content] : content.flatMap((b: any) => (b.type === "text" ? [b.text] : []))
}

/** A reply naming the prompt it answers (the last text of the request's last message). */
const echo: FakeAnthropic.ScriptFunction = (body) =>
  FakeAnthropic.textReply(`answer: ${lastTexts(body).at(-1)}`)

/** A promise and its resolve. */
const deferred = <A = void>() => {
  let resolve!: (value: A) => void
  const promise = new Promise<A>((r) => (resolve = r))
  return { promise, resolve }
}

/** Options whose permission asks wait for `released`, then deny: a turn that calls a tool holds until then. */
const heldUntil = (released: Promise<void>, server: FakeAnthropic.FakeAnthropic, dir: string): Query.Options => ({
  cwd: dir,
  env: envFor(server, dir),
  canUseTool: async () => {
    await released
    return { behavior: "deny", message: "not now" }
  }
})

/** The results of `messages` as `[subtype, result text]`. */
const outcomes = (messages: ReadonlyArray<Query.SDKMessage>) =>
  resultsOf(messages).map((r) => [r.subtype, r.subtype === "success" ? r.result : r.terminal_reason])

describe("query() streaming input through the session runtime", () => {
  it("a message yielded while a turn runs is queued at once (the host does not wait for the result) and runs after it", async () => {
    const dir = workdir()
    const server = await fake([
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "echo hi" }, id: "toolu_bash" }]),
      FakeAnthropic.textReply("first done"),
      echo
    ])
    const messages: Array<Query.SDKMessage> = []
    // The first turn waits in its permission ask until the input has handed over the second message.
    const bothRead = deferred()
    let seenWhenBothRead: ReadonlyArray<string> | undefined
    async function* input() {
      yield user("first")
      await until(() => messages.some((m) => m.type === "assistant"), "the first turn's tool call")
      yield user("second")
      // Resumed once the second message is queued: the first turn still waits for its answer.
      seenWhenBothRead = kinds(messages)
      bothRead.resolve()
    }
    for await (const m of query({ prompt: input(), options: heldUntil(bothRead.promise, server, dir) })) messages.push(m)
    // Both messages were read while the first turn still waited for its tool call's answer.
    assert.deepStrictEqual(seenWhenBothRead, ["system/init", "assistant"])
    assert.deepStrictEqual(kinds(messages), [
      "system/init",
      "assistant",
      "system/permission_denied",
      "user",
      "assistant",
      "result",
      "assistant",
      "result"
    ])
    assert.deepStrictEqual(outcomes(messages), [["success", "first done"], ["success", "answer: second"]])
    assert.deepStrictEqual(server.requests.map((r) => lastTexts(r.body)), [["first"], [], ["second"]])
  }, TIMEOUT)

  it("priority: now stops the running turn and runs next; next runs before later; every turn's messages come whole, in run order", async () => {
    const dir = workdir()
    const server = await fake([{ ...FakeAnthropic.textReply("never finishes"), stallAfter: 3 }, echo, echo, echo])
    async function* input() {
      yield user("first")
      await until(() => server.requests.length === 1, "the first request")
      yield { ...user("later one"), priority: "later" as const }
      yield user("next one")
      yield { ...user("urgent"), priority: "now" as const }
    }
    const messages = await collect(query({ prompt: input(), options: { cwd: dir, env: envFor(server, dir) } }))
    // The interrupted prompt, its note and the urgent prompt go as one user message, as after any interruption.
    assert.deepStrictEqual(server.requests.map((r) => lastTexts(r.body)), [
      ["first"],
      ["first", "[Request interrupted by user]", "urgent"],
      ["next one"],
      ["later one"]
    ])
    assert.deepStrictEqual(kinds(messages), [
      "system/init",
      "user", // the note that the user interrupted the turn
      "result",
      "assistant",
      "result",
      "assistant",
      "result",
      "assistant",
      "result"
    ])
    assert.deepStrictEqual(outcomes(messages), [
      ["error_during_execution", "aborted_streaming"],
      ["success", "answer: urgent"],
      ["success", "answer: next one"],
      ["success", "answer: later one"]
    ])
    assert.strictEqual(new Set(messages.map((m) => m.session_id)).size, 1)
  }, TIMEOUT)

  it("interrupt() stops the running turn and returns the uuids of the waiting messages, in run order; they still run", async () => {
    const dir = workdir()
    const server = await fake([{ ...FakeAnthropic.textReply("never finishes"), stallAfter: 3 }, echo, echo, echo])
    const queued = deferred()
    async function* input() {
      yield { ...user("first"), uuid: "00000000-0000-4000-8000-000000000001" }
      await until(() => server.requests.length === 1, "the first request")
      yield { ...user("second"), priority: "later" as const, uuid: "00000000-0000-4000-8000-000000000002" }
      yield { ...user("third"), uuid: "00000000-0000-4000-8000-000000000003" }
      yield user("fourth, without a uuid")
      queued.resolve()
    }
    const q = query({ prompt: input(), options: { cwd: dir, env: envFor(server, dir) } })
    const receipt = queued.promise.then(() => q.interrupt())
    const messages = await collect(q)
    assert.deepStrictEqual(await receipt, {
      still_queued: ["00000000-0000-4000-8000-000000000003", "00000000-0000-4000-8000-000000000002"]
    })
    assert.deepStrictEqual(outcomes(messages), [
      ["error_during_execution", "aborted_streaming"],
      ["success", "answer: third"],
      ["success", "answer: fourth, without a uuid"],
      ["success", "answer: second"]
    ])
    const init = messages[0]!
    assert.deepStrictEqual(init.type === "system" && init.subtype === "init" && init.capabilities, ["interrupt_receipt_v1"])
    assert.deepStrictEqual(await q.interrupt(), { still_queued: [] }, "a finished query has nothing waiting")
  }, TIMEOUT)

  it("abortController: the running turn stops, what waits never runs, and the session resumes on a valid transcript", async () => {
    const dir = workdir()
    const server = await fake([{ ...FakeAnthropic.textReply("never finishes"), stallAfter: 3 }, echo])
    const abortController = new AbortController()
    async function* input() {
      yield user("first")
      await until(() => server.requests.length === 1, "the first request")
      yield user("second")
      yield { ...user("third"), priority: "later" as const }
      abortController.abort()
      await new Promise(() => {}) // input that never comes
    }
    const messages = await collect(query({ prompt: input(), options: { cwd: dir, env: envFor(server, dir), abortController } }))
    assert.deepStrictEqual(kinds(messages), ["system/init", "user", "result"])
    assert.deepStrictEqual(outcomes(messages), [["error_during_execution", "aborted_streaming"]])
    assert.strictEqual(server.requests.length, 1, "the waiting messages never ran")
    await until(() => server.aborted === 1, "the stalled request to be aborted")

    const resumed = await collect(query({
      prompt: "again",
      options: { cwd: dir, env: envFor(server, dir), resume: messages[0]!.session_id }
    }))
    assert.deepStrictEqual(outcomes(resumed), [["success", "answer: again"]])
    assert.deepStrictEqual(server.requests[1]!.body.messages.map((m: any) => m.role), ["user"])
    assert.deepStrictEqual(lastTexts(server.requests[1]!.body), ["first", "[Request interrupted by user]", "again"])
  }, TIMEOUT)

  it("a full queue: the next message waits, read but not queued, until a turn starts (the receipt lists it); all of them run", async () => {
    const dir = workdir()
    const server = await fake([FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "echo hi" }, id: "toolu_bash" }])])
    const gate = deferred()
    const messages: Array<Query.SDKMessage> = []
    const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`
    let yielded = 0
    async function* input() {
      yield user("first")
      await until(() => messages.some((m) => m.type === "assistant"), "the first turn's tool call")
      for (let n = 1; n <= Admission.MAX_QUEUED + 1; n++) {
        yielded = n
        // A command: answered without the model, so the hundred turns are quick.
        yield { ...user(`/model claude-haiku-4-5-q${n}`), uuid: uuid(n) }
      }
    }
    const q = query({ prompt: input(), options: heldUntil(gate.promise, server, dir) })
    // Asked once the message after the hundred queued ones is read: the first turn still waits.
    const receipt = until(() => yielded === Admission.MAX_QUEUED + 1, "the message after a full queue").then(async () => {
      const answer = await q.interrupt()
      gate.resolve()
      return answer
    })
    for await (const m of q) messages.push(m)
    assert.deepStrictEqual(await receipt, {
      still_queued: Array.from({ length: Admission.MAX_QUEUED + 1 }, (_, i) => uuid(i + 1))
    })
    const results = resultsOf(messages)
    assert.deepStrictEqual(results[0]!.terminal_reason, "aborted_tools")
    assert.deepStrictEqual(
      results.slice(1).map((r) => r.result),
      Array.from({ length: Admission.MAX_QUEUED + 1 }, (_, i) => `Set model to claude-haiku-4-5-q${i + 1}`)
    )
    assert.strictEqual(server.requests.length, 1)
  }, TIMEOUT)

  it("a streamed message with a priority that is not now, next or later rejects the query after the turns before it", async () => {
    const dir = workdir()
    const server = await fake([FakeAnthropic.textReply("first answer")])
    async function* input() {
      yield user("first")
      yield { ...user("second"), priority: "soon" } as unknown as Query.SDKUserMessage
    }
    const messages: Array<Query.SDKMessage> = []
    const error = await rejection((async () => {
      for await (const m of query({ prompt: input(), options: { cwd: dir, env: envFor(server, dir) } })) messages.push(m)
    })())
    assert.instanceOf(error, QueryError)
    assert.strictEqual(
      (error as QueryError).message,
      `query(): a streamed prompt message has priority "soon", not "now", "next" or "later"`
    )
    assert.deepStrictEqual(outcomes(messages), [["success", "first answer"]])
    assert.strictEqual(server.requests.length, 1)
  }, TIMEOUT)
})
