/**
 * End to end, durable turns: a recorded `keel` (`--record`) killed with SIGKILL at five points of a
 * turn, then `keel --resume <id>` (without `--record`: a recorded session stays recorded) against a
 * fresh fake of the Messages API. The turn completes; each tool call that finished ran exactly once
 * (counted by what it appended to `count.txt`); a call cut short runs again only if it is
 * idempotent (read-only Bash), else it is answered as cut short; the transcript the resumed
 * requests carry is valid (every `tool_use` answered, roles alternating).
 *
 * The five points: during the request (sent, no answer yet), mid-stream (part of the answer
 * read), with one of two tool calls finished, during a compaction (its summary request sent), and
 * between turns (a stream-json session waiting for its next prompt). A compaction writes its
 * rewrite of the conversation in one transcript line when it is done, so a crash inside it leaves
 * the conversation as it was, and the resumed turn compacts again.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Autocompact, Journal, RecordedResults, Session, SessionStore, SummaryPrompt } from "@keel/core"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, live, run, start, userLine, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

/** Waits (real time, at most 20 s) until `check` holds. */
const until = async (check: () => boolean, what: string) => {
  for (const started = Date.now(); !check(); await new Promise((r) => setTimeout(r, 20))) {
    if (Date.now() - started > 20_000) throw new Error(`timed out waiting for ${what}`)
  }
}

const blocksOf = (message: any): Array<any> =>
  typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content

/** The API would accept these messages: user first, roles alternating, every `tool_use` answered next. */
const assertValid = (messages: ReadonlyArray<any>) => {
  assert.strictEqual(messages[0]?.role, "user")
  for (let i = 0; i < messages.length; i++) {
    if (i > 0) assert.notStrictEqual(messages[i].role, messages[i - 1].role, `roles at ${i}`)
    if (messages[i].role !== "assistant") continue
    const uses = blocksOf(messages[i]).filter((b) => b.type === "tool_use").map((b) => b.id)
    const next = messages[i + 1]
    const results = next === undefined ? [] : blocksOf(next).filter((b) => b.type === "tool_result").map((b) => b.tool_use_id)
    assert.deepStrictEqual(results, uses, `the results of message ${i}`)
  }
}

/** The messages of a request as the model reads them: without prompt-caching marks. */
const withoutCache = (messages: ReadonlyArray<any>) =>
  JSON.parse(JSON.stringify(messages, (k, v) => (k === "cache_control" ? undefined : v)))

/** The lines of `count.txt` in `dir` (each finished counting call appended one). */
const counted = (dir: string): Array<string> => {
  const file = path.join(dir, "count.txt")
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter((l) => l !== "") : []
}

const COUNT = { name: "Bash", input: { command: "echo ran >> count.txt && echo counted" }, id: "toolu_count" }

/**
 * Starts `keel -p <prompt> --record` against `script` in a fresh folder, waits until `ready` holds
 * of its journal's text (and the fake), then kills it with SIGKILL.
 */
const killed = async (
  script: ReadonlyArray<FakeAnthropic.ScriptItem>,
  ready: (journal: string, server: FakeAnthropic.FakeAnthropic) => boolean,
  options: {
    readonly env?: Record<string, string>
    readonly prompt?: string
    readonly fallback?: FakeAnthropic.ScriptFunction
    readonly setup?: (dir: string) => void
  } = {}
) => {
  const dir = workdir()
  options.setup?.(dir)
  const home = path.join(dir, ".keel-home")
  const server = await fake(script, options.fallback !== undefined ? { fallback: options.fallback } : {})
  const env = { KEEL_HOME: home, ...options.env }
  const { child, done } = start(
    ["-p", options.prompt ?? "count", "--record", "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash", "--max-turns", "100"],
    { env: { ...envFor(server), ...env }, cwd: dir }
  )
  let out = ""
  child.stdout!.on("data", (d) => (out += d))
  await until(() => out.includes("\n"), "the init message")
  const sessionId = JSON.parse(out.split("\n")[0]!).session_id as string
  const transcript = path.join(home, "projects", SessionStore.slug(fs.realpathSync(dir)), `${sessionId}.jsonl`)
  const journal = Journal.fileOf(transcript)
  const journaled = () => (fs.existsSync(journal) ? fs.readFileSync(journal, "utf8") : "")
  await until(() => ready(journaled(), server), "the point to kill at")
  child.kill("SIGKILL")
  assert.strictEqual((await done).code, null)
  return { dir, home, env, server, sessionId, transcript, journal, journaled }
}

/** `keel --resume <id> -p [prompt] --output-format json` against `script`; its result and the fake. */
const resumed = async (
  at: { readonly dir: string; readonly env: Record<string, string>; readonly sessionId: string },
  script: ReadonlyArray<FakeAnthropic.ScriptItem>,
  prompt?: string,
  fallback?: FakeAnthropic.ScriptFunction
) => {
  const server = await fake(script, fallback !== undefined ? { fallback } : {})
  const r = await run(
    ["--resume", at.sessionId, "-p", ...(prompt === undefined ? [] : [prompt]), "--output-format", "json", "--allowedTools", "Bash", "--max-turns", "100"],
    { env: { ...envFor(server), ...at.env }, cwd: at.dir }
  )
  return { ...r, server, result: r.code === 0 || r.code === 1 ? JSON.parse(r.stdout) : undefined }
}

describe("a recorded turn killed with SIGKILL, then --resume", () => {
  it("during the request: the request is sent again, as it was; the finished call before it ran once", async () => {
    const first = await killed(
      [FakeAnthropic.toolUseReply([COUNT]), { ...FakeAnthropic.textReply("Counted."), stallAfter: 0 }],
      (_, server) => server.requests.length === 2
    )
    assert.deepStrictEqual(counted(first.dir), ["ran"])
    const again = await resumed(first, [FakeAnthropic.textReply("Counted once.")])
    assert.strictEqual(again.code, 0, again.stderr)
    assert.strictEqual(again.result.result, "Counted once.")
    assert.strictEqual(again.server.requests.length, 1)
    // The same conversation as the request the kill cut: the prompt, the call and its result.
    const sent = again.server.requests[0]!.body.messages
    assert.deepStrictEqual(withoutCache(sent), withoutCache(first.server.requests[1]!.body.messages))
    assertValid(sent)
    assert.deepStrictEqual(counted(first.dir), ["ran"])
    // The journal goes on (no --record this time): the run on is a turn with no prompt, and it ended.
    assert.match(first.journaled(), /"type":"turn_start","turn":1,"at":\d+,"prompt":null/)
  }, 60_000)

  it("mid-stream: the cut answer is dropped and the request sent again; nothing of it reaches the transcript", async () => {
    const first = await killed(
      [FakeAnthropic.toolUseReply([COUNT]), { ...FakeAnthropic.textReply("A long answer that never ends"), stallAfter: 3 }],
      (journal) => /"type":"chunk","call":2/.test(journal)
    )
    assert.notInclude(fs.readFileSync(first.transcript, "utf8"), "never ends")
    const again = await resumed(first, [FakeAnthropic.textReply("A whole answer.")])
    assert.strictEqual(again.code, 0, again.stderr)
    assert.strictEqual(again.result.result, "A whole answer.")
    const sent = again.server.requests[0]!.body.messages
    assert.deepStrictEqual(withoutCache(sent), withoutCache(first.server.requests[1]!.body.messages))
    assertValid(sent)
    assert.deepStrictEqual(counted(first.dir), ["ran"])
    const transcript = fs.readFileSync(first.transcript, "utf8")
    assert.notInclude(transcript, "never ends")
    assert.include(transcript, "A whole answer.")
  }, 60_000)

  it("with one of two calls finished and the other not idempotent: the finished one keeps its result, the other is answered cut short; a call that never started runs", async () => {
    const first = await killed(
      [FakeAnthropic.toolUseReply([
        COUNT,
        { name: "Bash", input: { command: "sleep 30 && echo napped >> nap.txt" }, id: "toolu_nap" },
        { name: "Bash", input: { command: "cat count.txt" }, id: "toolu_look" }
      ])],
      (journal) => journal.includes("\"type\":\"tool_start\",\"id\":\"toolu_nap\"")
    )
    assert.include(first.journaled(), "\"type\":\"tool_end\",\"id\":\"toolu_count\"")
    assert.notInclude(first.journaled(), "\"type\":\"tool_start\",\"id\":\"toolu_look\"")
    // No prompt: the open turn runs on alone.
    const again = await resumed(first, [FakeAnthropic.textReply("Counted once; the nap was cut short.")])
    assert.strictEqual(again.code, 0, again.stderr)
    assert.strictEqual(again.result.result, "Counted once; the nap was cut short.")
    const sent = again.server.requests[0]!.body.messages
    assertValid(sent)
    const results = blocksOf(sent.at(-1)).filter((b) => b.type === "tool_result")
    assert.deepStrictEqual(results.map((b) => [b.tool_use_id, b.is_error === true, b.content]), [
      ["toolu_count", false, "counted"],
      ["toolu_nap", true, `<tool_use_error>${RecordedResults.CUT_SHORT}</tool_use_error>`],
      ["toolu_look", false, "ran"]
    ])
    // The count ran once (in the first process), the nap never finished, the look ran once (now).
    assert.deepStrictEqual(counted(first.dir), ["ran"])
    assert.isFalse(fs.existsSync(path.join(first.dir, "nap.txt")))
    assert.strictEqual(first.journaled().split("\"type\":\"tool_start\",\"id\":\"toolu_count\"").length - 1, 1)
    assert.strictEqual(first.journaled().split("\"type\":\"tool_start\",\"id\":\"toolu_look\"").length - 1, 1)
  }, 60_000)

  it("with a read-only call cut short: it runs again (it is idempotent), the finished one does not", async () => {
    const first = await killed(
      [FakeAnthropic.toolUseReply([
        COUNT,
        { name: "Bash", input: { command: "sleep 5 && cat count.txt" }, id: "toolu_slow_look" }
      ])],
      (journal) => journal.includes("\"type\":\"tool_start\",\"id\":\"toolu_slow_look\"")
    )
    const again = await resumed(first, [FakeAnthropic.textReply("Looked again.")])
    assert.strictEqual(again.code, 0, again.stderr)
    const results = blocksOf(again.server.requests[0]!.body.messages.at(-1)).filter((b) => b.type === "tool_result")
    assert.deepStrictEqual(results.map((b) => [b.tool_use_id, b.is_error === true, b.content]), [
      ["toolu_count", false, "counted"],
      ["toolu_slow_look", false, "ran"]
    ])
    assert.deepStrictEqual(counted(first.dir), ["ran"])
    // Started twice: once cut short, once to the end.
    assert.strictEqual(first.journaled().split("\"type\":\"tool_start\",\"id\":\"toolu_slow_look\"").length - 1, 2)
    assert.include(first.journaled(), "\"type\":\"tool_end\",\"id\":\"toolu_slow_look\"")
  }, 90_000)

  it("during a compaction: the turn resumes from before it, compacts once, and completes", async () => {
    const window = 70_000
    assert.isAbove(Autocompact.threshold(window, Session.DEFAULT_MAX_TOKENS), 0)
    const isSummary = (body: any): boolean => JSON.stringify(body.messages.at(-1)).includes(SummaryPrompt.HEADING)
    const tokensOf = (body: any): number => Math.ceil(JSON.stringify([body.system, body.tools, body.messages]).length / 4)
    const usage = (body: any) => ({ usage: { input_tokens: tokensOf(body), output_tokens: 40 } })
    // Files of ~6,000 tokens each: a few reads take the conversation over the threshold.
    const files = Array.from({ length: 10 }, (_, i) => `f${i}.txt`)
    let served = 0
    const first = await killed([], (_, server) => server.requests.some((r) => isSummary(r.body)), {
      env: { KEEL_AUTO_COMPACT_WINDOW: String(window) },
      prompt: "read the files",
      setup: (dir) => {
        for (const name of files) {
          const text = Array.from({ length: 240 }, (_, i) => `${name} line ${i + 1}: `.padEnd(99, "lorem ipsum dolor sit amet ") + "\n")
          fs.writeFileSync(path.join(dir, name), text.join(""))
        }
      },
      // Each request before the summary reads the next file (the counting call appends its name).
      fallback: (body) => {
        if (isSummary(body)) return { ...FakeAnthropic.textReply("never"), stallAfter: 0 }
        const name = files[served++]!
        return FakeAnthropic.toolUseReply([
          { name: "Bash", input: { command: `echo ${name} >> count.txt && cat ${name}` }, id: `toolu_${name.replace(".", "_")}` }
        ], usage(body))
      }
    })
    const read = counted(first.dir)
    assert.isAbove(read.length, 1)
    assert.deepStrictEqual(read, files.slice(0, read.length))
    const compactions = () => fs.readFileSync(first.transcript, "utf8").split("\"compaction\":{\"trigger\":\"auto\"").length - 1
    assert.strictEqual(compactions(), 0)
    const again = await resumed(first, [], undefined, (body) =>
      isSummary(body)
        ? FakeAnthropic.textReply("<summary>The files were read.</summary>", usage(body))
        : FakeAnthropic.textReply("Read them all.", usage(body)))
    assert.strictEqual(again.code, 0, again.stderr)
    assert.strictEqual(again.result.result, "Read them all.")
    const bodies = again.server.requests.map((r) => r.body)
    assert.deepStrictEqual(bodies.map(isSummary), [true, false])
    assertValid(bodies[1].messages)
    assert.include(JSON.stringify(bodies[1].messages), "The files were read.")
    // Each read ran once; the transcript has one compaction.
    assert.deepStrictEqual(counted(first.dir), read)
    assert.strictEqual(compactions(), 1)
  }, 90_000)

  it("between turns: nothing runs on; the next prompt carries the whole first turn, whose call ran once", async () => {
    const dir = workdir()
    const home = path.join(dir, ".keel-home")
    const server = await fake([FakeAnthropic.toolUseReply([COUNT]), FakeAnthropic.textReply("Counted.")])
    const session = live(
      ["-p", "--record", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash"],
      { env: { ...envFor(server), KEEL_HOME: home }, cwd: dir }
    )
    session.send(userLine("count"))
    const messages = await session.waitFor((ms) => ms.some((m) => m.type === "result"))
    const sessionId = messages[0].session_id as string
    session.child.kill("SIGKILL")
    assert.strictEqual((await session.done).code, null)
    const at = { dir, env: { KEEL_HOME: home }, sessionId }
    // Nothing was left open: with no prompt there is nothing to do (exit 2, saying so).
    const idle = await resumed(at, [])
    assert.strictEqual(idle.code, 2)
    assert.include(idle.stderr, `session ${sessionId} has no turn left open to run on`)
    assert.strictEqual(idle.server.requests.length, 0)
    const next = await resumed(at, [FakeAnthropic.textReply("Still once.")], "how many?")
    assert.strictEqual(next.code, 0, next.stderr)
    const sent = next.server.requests[0]!.body.messages
    assertValid(sent)
    assert.deepStrictEqual(withoutCache(sent.slice(0, 3)), withoutCache(server.requests[1]!.body.messages))
    assert.strictEqual(blocksOf(sent.at(-2)).at(-1).text, "Counted.")
    assert.deepStrictEqual(counted(dir), ["ran"])
  }, 60_000)
})
