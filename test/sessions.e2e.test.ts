/**
 * End to end: sessions of the real `keel` binary against the loopback fake API. Transcripts under
 * `KEEL_HOME`; `--resume`, `--continue`, `--fork-session`, `--session-id`, `--no-session-persistence`;
 * a `keel` process killed with SIGKILL mid-turn (while a tool runs, while the API stalls), then
 * resumed; resume after a compaction; `/clear`; files that cannot be used; concurrent sessions in one
 * folder; and the flags that do not go together.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Autocompact, Invariants, Message, Session, SessionStore, SummaryPrompt, Transcript } from "@keel/core"
import { Either } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, lines, run, start, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

/** A project folder (its real path: what `process.cwd()` reports) and the `KEEL_HOME` its runs use. */
interface Place {
  readonly dir: string
  readonly home: string
}

const place = (home?: string): Place => {
  const dir = fs.realpathSync(workdir())
  return { dir, home: home ?? path.join(dir, ".keel-home") }
}

/** Runs `keel -p <prompt> --output-format stream-json ...args` in `at` against a fake playing `script`. */
const keel = async (
  at: Place,
  script: ReadonlyArray<FakeAnthropic.ScriptItem>,
  args: ReadonlyArray<string> = [],
  prompt = "go",
  env: Record<string, string> = {}
) => {
  const server = await fake(script)
  const r = await run(["-p", prompt, "--output-format", "stream-json", ...args], {
    env: { ...envFor(server), KEEL_HOME: at.home, ...env },
    cwd: at.dir
  })
  const messages = r.stdout.trim() === "" ? [] : lines(r.stdout)
  return { ...r, server, messages, requests: server.requests.map((q) => q.body), sessionId: messages[0]?.session_id as string }
}

const fileOf = (at: Place, id: string) => path.join(at.home, "projects", SessionStore.slug(at.dir), `${id}.jsonl`)

/** The transcript replayed, as the kernel replays it (failing the test when it does not replay). */
const transcript = (at: Place, id: string): Transcript.Loaded => {
  const file = fileOf(at, id)
  const parsed = Transcript.parse(fs.readFileSync(file), { file, sessionId: id })
  if (Either.isLeft(parsed)) assert.fail(parsed.left.message)
  return parsed.right
}

/** The transcript's entries, as JSON. */
const entries = (at: Place, id: string): Array<any> =>
  fs.readFileSync(fileOf(at, id), "utf8").split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l))

/**
 * Messages as JSON without what moves with the conversation's end: the prompt-cache breakpoints, and
 * the text blocks a plain string content becomes to carry one.
 */
const bare = (value: unknown): any =>
  JSON.parse(JSON.stringify(value, function(this: any, k, v) {
    if (k === "cache_control") return undefined
    if (k === "content" && typeof v === "string" && this?.role !== undefined) return [{ type: "text", text: v }]
    return v
  }))

const blocksOf = (message: any): Array<any> =>
  typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content

/**
 * Asserts the API would accept these messages: a user message first, roles alternating, every
 * `tool_use` answered in the next message and every `tool_result` answering the message before.
 */
const assertValid = (messages: ReadonlyArray<any>) => {
  assert.strictEqual(messages[0]?.role, "user")
  const uses = (m: any) => (m?.role === "assistant" ? blocksOf(m).filter((b) => b.type === "tool_use").map((b) => b.id) : [])
  const results = (m: any) =>
    m?.role === "user" ? blocksOf(m).filter((b) => b.type === "tool_result").map((b) => b.tool_use_id) : []
  messages.forEach((m, i) => {
    if (i > 0) assert.notStrictEqual(m.role, messages[i - 1].role, `roles at ${i}`)
    if (m.role === "assistant") assert.deepStrictEqual(results(messages[i + 1]), uses(m), `the results of message ${i}`)
    else if (results(m).length > 0) assert.deepStrictEqual(results(m), uses(messages[i - 1]), `the calls of message ${i}`)
  })
}

/** Waits (polling) until `check` holds. */
const until = async (check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> => {
  const started = Date.now()
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

const model = "claude-sonnet-4-6"
const readme = (id = "toolu_read") => FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "README.md" }, id }], { model })
const text = (value: string, usage = { input_tokens: 100, output_tokens: 10 }) => FakeAnthropic.textReply(value, { model, usage })

// Several runs of keel per test, each a few seconds on a busy machine.
describe("keel sessions", { timeout: 90_000 }, () => {
  it("--resume continues a session: the next request carries the first run's messages, and the totals go on", async () => {
    const at = place()
    const first = await keel(at, [readme(), text("It counts sheep.")], ["--model", "claude-haiku-4-5"], "what does it count?")
    assert.strictEqual(first.code, 0)
    const id = first.sessionId
    assert.strictEqual(first.messages.at(-1).session_id, id)
    const size = fs.statSync(fileOf(at, id)).size

    const second = await keel(at, [text("Nothing else.")], ["--resume", id], "and then?")
    assert.strictEqual(second.code, 0, second.stderr)
    assert.strictEqual(second.stderr, "")
    assert.strictEqual(second.sessionId, id)
    // The answer as the first run printed it: what its session held, and what the second run restored.
    const answer = first.messages.filter((m: any) => m.type === "assistant").at(-1).message
    assert.deepStrictEqual(answer.content.map((b: any) => b.text), ["It counts sheep."])
    assert.deepStrictEqual(bare(second.requests[0].messages), bare([
      ...first.requests[1].messages,
      { role: "assistant", content: answer.content },
      { role: "user", content: "and then?" }
    ]))
    // The model of the first run (--model) is the resumed session's (not the default, claude-sonnet-4-6).
    assert.strictEqual(first.requests[0].model, "claude-haiku-4-5")
    assert.strictEqual(second.requests[0].model, "claude-haiku-4-5")
    assert.strictEqual(second.messages[0].model, "claude-haiku-4-5")
    const usage = second.messages.at(-1).modelUsage[model]
    // The first run's two answers (10 + 100 input tokens) and this one's (100).
    assert.deepStrictEqual([usage.inputTokens, usage.outputTokens, usage.costUSD > 0], [210, 25, true])
    assert.isAbove(second.messages.at(-1).total_cost_usd, first.messages.at(-1).total_cost_usd)
    // The same file, grown; it replays to the whole conversation.
    assert.isAbove(fs.statSync(fileOf(at, id)).size, size)
    const loaded = transcript(at, id)
    assert.deepStrictEqual(loaded.messages.map((m) => m.role), ["user", "assistant", "user", "assistant", "user", "assistant"])
    assert.deepStrictEqual(fs.readdirSync(path.dirname(fileOf(at, id))), [`${id}.jsonl`])
  })

  it("--continue picks the latest session of this folder, not another folder's", async () => {
    const at = place()
    const alpha = await keel(at, [text("A.")], [], "alpha")
    const beta = await keel(at, [text("B.")], [], "beta")
    const elsewhere = place(at.home)
    await keel(elsewhere, [text("C.")], [], "gamma")
    const continued = await keel(at, [text("B again.")], ["--continue"], "more")
    assert.strictEqual(continued.code, 0)
    assert.strictEqual(continued.sessionId, beta.sessionId)
    assert.notStrictEqual(continued.sessionId, alpha.sessionId)
    assert.deepStrictEqual(continued.requests[0].messages.map((m: any) => blocksOf(m)[0].text), ["beta", "B.", "more"])

    const empty = place(at.home)
    const none = await keel(empty, [text("never")], ["--continue"])
    assert.strictEqual(none.code, 1)
    assert.strictEqual(none.requests.length, 0)
    assert.match(none.stderr, /^keel: no session to continue in .*: this folder has no saved sessions \(they would be in .*\)\n$/)
  })

  it("--fork-session: a new id and a new file carrying the history; the original file is left as it was", async () => {
    const at = place()
    const first = await keel(at, [text("One.")], [], "first")
    const original = fs.readFileSync(fileOf(at, first.sessionId))
    const fork = await keel(at, [text("Two.")], ["--resume", first.sessionId, "--fork-session"], "second")
    assert.strictEqual(fork.code, 0)
    assert.notStrictEqual(fork.sessionId, first.sessionId)
    assert.deepStrictEqual(fork.requests[0].messages.map((m: any) => blocksOf(m)[0].text), ["first", "One.", "second"])
    assert.deepStrictEqual(fs.readFileSync(fileOf(at, first.sessionId)), original)
    const forked = transcript(at, fork.sessionId)
    assert.deepStrictEqual(forked.origin, { source: "fork", from: first.sessionId })
    assert.strictEqual(forked.messages.length, 4)

    const id = "5b0c4a52-7a43-4a63-9d7b-7e4b8a3b2c10"
    const named = await keel(at, [text("Three.")], ["--continue", "--fork-session", "--session-id", id], "third")
    assert.strictEqual(named.sessionId, id)
    assert.strictEqual(transcript(at, id).messages.length, 6)
    const taken = await keel(at, [text("never")], ["--session-id", id])
    assert.strictEqual(taken.code, 1)
    assert.strictEqual(taken.stderr, `keel: session ${id} already exists (${fileOf(at, id)}); resume it with --resume ${id}, or pick another id\n`)
    assert.strictEqual(transcript(at, id).messages.length, 6)
  })

  it("--no-session-persistence writes nothing; with --resume it reads the session and leaves its file as it was", async () => {
    const at = place()
    const quiet = await keel(at, [text("One.")], ["--no-session-persistence"], "first")
    assert.strictEqual(quiet.code, 0)
    assert.isFalse(fs.existsSync(path.join(at.home, "projects")))
    const saved = await keel(at, [text("Two.")], [], "second")
    const before = fs.readFileSync(fileOf(at, saved.sessionId))
    const resumed = await keel(at, [text("Three.")], ["--resume", saved.sessionId, "--no-session-persistence"], "third")
    assert.strictEqual(resumed.requests[0].messages.length, 3)
    assert.deepStrictEqual(fs.readFileSync(fileOf(at, saved.sessionId)), before)
  })

  it("kill -9 while a slow Bash call runs, then --resume: the transcript is valid, the call answered as interrupted", async () => {
    const at = place()
    const server = await fake([
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "sleep 10" }, id: "toolu_sleep" }], { model })
    ])
    const { child, done } = start(
      ["-p", "nap", "--output-format", "stream-json", "--allowedTools", "Bash(sleep:*)"],
      { env: { ...envFor(server), KEEL_HOME: at.home }, cwd: at.dir }
    )
    let out = ""
    child.stdout!.on("data", (d) => (out += d))
    // The answer that made the call is printed once it is in the transcript.
    await until(() => out.includes("\"tool_use\"") && out.includes("\"type\":\"assistant\""), "the assistant's tool call")
    const id = JSON.parse(out.split("\n")[0]!).session_id as string
    child.kill("SIGKILL")
    const killed = await done
    assert.strictEqual(killed.code, null)
    assert.notInclude(out, "\"type\":\"result\"")

    const crashed = transcript(at, id)
    assert.deepStrictEqual(crashed.messages.map((m) => m.role), ["user", "assistant"])
    assert.deepStrictEqual(crashed.warnings, [])

    const resumed = await keel(at, [text("Slept badly.")], ["--resume", id], "go on")
    assert.strictEqual(resumed.code, 0, resumed.stderr)
    const request = bare(resumed.requests[0].messages)
    assertValid(request)
    assert.deepStrictEqual(request, bare([
      { role: "user", content: "nap" },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_sleep", name: "Bash", input: { command: "sleep 10" } }] },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_sleep", content: "<tool_use_error>Interrupted by user</tool_use_error>", is_error: true },
          { type: "text", text: "go on" }
        ]
      }
    ]))
    assert.deepStrictEqual(blocksOf(request[1]).map((b) => [b.type, b.id]), [["tool_use", "toolu_sleep"]])
    const after = transcript(at, id)
    assert.deepStrictEqual(Invariants.violations(after.messages), [])
    assert.strictEqual(after.messages.length, 5)
  })

  it("kill -9 while the API stalls mid-answer, then --resume: the finished tool round is kept, the next request is valid", async () => {
    const at = place()
    const server = await fake([
      readme(),
      FakeAnthropic.textReply("This answer never finishes", { model, chunkSize: 4, stallAfter: 4 })
    ])
    const { child, done } = start(["-p", "what is in the readme?", "--output-format", "stream-json"], {
      env: { ...envFor(server), KEEL_HOME: at.home },
      cwd: at.dir
    })
    await until(() => server.requests.length === 2, "the second request")
    child.kill("SIGKILL")
    await done
    const seen = bare(server.requests[1]!.body.messages)
    const id = fs.readdirSync(path.join(at.home, "projects", SessionStore.slug(at.dir)))[0]!.replace(".jsonl", "")
    // Everything final before the kill is in the transcript: the prompt, the call and its result.
    assert.strictEqual(transcript(at, id).messages.length, 3)

    const resumed = await keel(at, [text("It counts sheep.")], ["--resume", id], "go on")
    assert.strictEqual(resumed.code, 0)
    const request = bare(resumed.requests[0].messages)
    assertValid(request)
    assert.deepStrictEqual(request.slice(0, 2), seen.slice(0, 2))
    assert.deepStrictEqual(request[2], bare({ role: "user", content: [...blocksOf(seen[2]), { type: "text", text: "go on" }] }))
    assert.include(JSON.stringify(request[2]), "It counts sheep.")
  })

  it("kill -9 deep in a long tool loop: every round before the kill is on disk, whole lines only; --resume goes on from there", async () => {
    const at = place()
    const ROUNDS = 30
    for (let i = 0; i < ROUNDS; i++) fs.writeFileSync(path.join(at.dir, `f${i}.txt`), `file ${i}\n`)
    // ROUNDS tool rounds, each reading a file of its own; the answer after them stalls mid-stream.
    const server = await fake([
      ...Array.from({ length: ROUNDS }, (_, i) =>
        FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: `f${i}.txt` }, id: `toolu_${i}` }], { model })),
      FakeAnthropic.textReply("This answer never finishes", { model, chunkSize: 4, stallAfter: 4 })
    ])
    const { child, done } = start(["-p", "read them all", "--output-format", "stream-json", "--max-turns", "100"], {
      env: { ...envFor(server), KEEL_HOME: at.home },
      cwd: at.dir
    })
    await until(() => server.requests.length === ROUNDS + 1, "the request after the last tool round")
    child.kill("SIGKILL")
    assert.strictEqual((await done).code, null)
    const seen = bare(server.requests[ROUNDS]!.body.messages)
    assert.strictEqual(seen.length, 2 * ROUNDS + 1)
    const id = fs.readdirSync(path.join(at.home, "projects", SessionStore.slug(at.dir)))
      .find((f) => f.endsWith(".jsonl"))!.replace(".jsonl", "")
    // Every line whole (each parses), and the file replays, without warnings, to what the last request carried.
    const written = entries(at, id)
    assert.isAbove(written.length, 2 * ROUNDS + 1)
    assert.isTrue(fs.readFileSync(fileOf(at, id), "utf8").endsWith("\n"))
    const crashed = transcript(at, id)
    assert.deepStrictEqual(crashed.warnings, [])
    assert.deepStrictEqual(Invariants.violations(crashed.messages), [])
    assert.deepStrictEqual(bare(Message.toParams(crashed.messages)), seen)

    const resumed = await keel(at, [text("All read.")], ["--resume", id], "go on")
    assert.strictEqual(resumed.code, 0, resumed.stderr)
    const request = bare(resumed.requests[0].messages)
    assertValid(request)
    assert.deepStrictEqual(request.slice(0, 2 * ROUNDS), seen.slice(0, 2 * ROUNDS))
    assert.deepStrictEqual(request[2 * ROUNDS], bare({ role: "user", content: [...blocksOf(seen[2 * ROUNDS]), { type: "text", text: "go on" }] }))
    assert.strictEqual(transcript(at, id).messages.length, 2 * ROUNDS + 3)
  })

  it("resume after a compaction sends exactly the compacted context", async () => {
    const WINDOW = 70_000
    const at = place()
    const files = ["a.txt", "b.txt", "c.txt", "d.txt"]
    for (const name of files) {
      fs.writeFileSync(
        path.join(at.dir, name),
        Array.from({ length: 300 }, (_, i) => `${name} line ${i + 1}: `.padEnd(99, "lorem ipsum dolor sit amet ") + "\n").join("")
      )
    }
    const isSummary = (body: any) => JSON.stringify(body.messages.at(-1)).includes(SummaryPrompt.HEADING)
    const tokensOf = (body: any) => Math.ceil(JSON.stringify([body.system, body.tools, body.messages]).length / 4)
    let calls = 0
    const server = await FakeAnthropic.start([], {
      fallback: (body) => {
        if (isSummary(body)) return FakeAnthropic.textReply("SUMMARY: the user had four files read.")
        const usage = { input_tokens: tokensOf(body), output_tokens: 40 }
        const file = files[calls++]
        return file !== undefined
          ? FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: file } }], { usage })
          : FakeAnthropic.textReply("Done.", { usage })
      }
    })
    // A window the four reads (~8k tokens each, after ~7.5k of system prompt and tools) fill once.
    const env = { ...envFor(server), KEEL_HOME: at.home, KEEL_AUTO_COMPACT_WINDOW: String(WINDOW) }
    const first = await run(["-p", "read the four files", "--output-format", "stream-json", "--max-turns", "100"], { env, cwd: at.dir })
    await server.close()
    assert.strictEqual(first.code, 0, first.stderr)
    const out = lines(first.stdout)
    assert.isDefined(out.find((m) => m.subtype === "compact_boundary"))
    const bodies = server.requests.map((q) => q.body)
    assert.isTrue(bodies.some(isSummary))
    const last = bodies.at(-1)
    assert.isFalse(isSummary(last))
    assert.isBelow(tokensOf(last), Autocompact.threshold(WINDOW, Session.DEFAULT_MAX_TOKENS))
    const id = out[0].session_id
    const rewrites = entries(at, id).filter((e) => e.type === "rewrite")
    assert.deepStrictEqual(rewrites.map((e) => [e.trigger, e.compaction?.trigger]), [["autocompact", "auto"]])

    const second = await keel(at, [text("All four were read.")], ["--resume", id], "and now?", { KEEL_AUTO_COMPACT_WINDOW: String(WINDOW) })
    assert.strictEqual(second.code, 0, second.stderr)
    const done = out.filter((m: any) => m.type === "assistant").at(-1).message
    assert.deepStrictEqual(done.content.map((b: any) => b.text), ["Done."])
    assert.deepStrictEqual(bare(second.requests[0].messages), bare([
      ...last.messages,
      { role: "assistant", content: done.content },
      { role: "user", content: "and now?" }
    ]))
  })

  it("/clear answers without the model and starts a new session; the old file stays; --continue goes on in the new one", async () => {
    const at = place()
    const first = await keel(at, [text("One.")], [], "first")
    const old = fs.readFileSync(fileOf(at, first.sessionId))
    const cleared = await keel(at, [], ["--resume", first.sessionId], "/clear")
    assert.strictEqual(cleared.code, 0, cleared.stderr)
    assert.strictEqual(cleared.requests.length, 0)
    assert.deepStrictEqual(cleared.messages.map((m) => `${m.type}/${m.subtype}`), ["system/init", "result/success"])
    const fresh = cleared.messages[1].session_id
    assert.notStrictEqual(fresh, first.sessionId)
    assert.strictEqual(cleared.messages[0].session_id, fresh)
    assert.include(cleared.messages[1].result, `Started a new session, ${fresh}`)
    assert.deepStrictEqual(fs.readFileSync(fileOf(at, first.sessionId)), old)
    assert.deepStrictEqual(transcript(at, fresh).origin, { source: "clear", from: first.sessionId })

    const next = await keel(at, [text("Fresh.")], ["--continue"], "hello again")
    assert.strictEqual(next.sessionId, fresh)
    assert.deepStrictEqual(bare(next.requests[0].messages), bare([{ role: "user", content: "hello again" }]))
  })

  it("a resumed session may edit a file read before it was stopped (the file read state is restored)", async () => {
    const at = place()
    const first = await keel(at, [readme(), text("Read it.")], [], "read the readme")
    const edit = () => [
      FakeAnthropic.toolUseReply([{
        name: "Edit",
        input: { file_path: path.join(at.dir, "README.md"), old_string: "sheep", new_string: "goats" },
        id: "toolu_edit"
      }], { model }),
      text("Edited.")
    ]
    const args = ["--permission-mode", "acceptEdits"]
    // A new session has not read it: the edit is refused.
    const fresh = await keel(at, edit(), args, "edit it")
    assert.include(JSON.stringify(fresh.requests[1].messages.at(-1)), "File has not been read yet")
    const resumed = await keel(at, edit(), ["--resume", first.sessionId, ...args], "edit it")
    assert.strictEqual(resumed.code, 0)
    assert.include(JSON.stringify(resumed.requests[1].messages.at(-1)), "has been updated")
    assert.include(fs.readFileSync(path.join(at.dir, "README.md"), "utf8"), "It counts goats.")
  })

  it("an unknown id, a corrupt file, a foreign file: exit 1 with one line naming what is wrong; no file is touched", async () => {
    const at = place()
    const first = await keel(at, [text("One.")], [], "first")
    const unknown = await keel(at, [text("never")], ["--resume", "00000000-0000-4000-8000-000000000000"])
    assert.strictEqual(unknown.code, 1)
    assert.strictEqual(unknown.requests.length, 0)
    assert.strictEqual(
      unknown.stderr,
      `keel: no session 00000000-0000-4000-8000-000000000000 in ${at.dir}; its sessions, newest first: ${first.sessionId} ` +
        `(the .jsonl files in ${path.dirname(fileOf(at, first.sessionId))})\n`
    )

    const file = fileOf(at, first.sessionId)
    const text2 = fs.readFileSync(file, "utf8").split("\n")
    // A first line that is not JSON (a bad middle line resumes: see session-lock.e2e.test.ts).
    text2[0] = "{\"type\":\"user\",\"broken"
    fs.writeFileSync(file, text2.join("\n"))
    const corruptBytes = fs.readFileSync(file)
    const corrupt = await keel(at, [text("never")], ["--resume", first.sessionId])
    assert.strictEqual(corrupt.code, 1)
    assert.strictEqual(corrupt.requests.length, 0)
    assert.match(corrupt.stderr, new RegExp(`^keel: ${file.replace(/[.]/g, "\\.")}:1: not a Keel transcript of this session: it is not JSON .*; it was left as it is\\n$`))
    assert.deepStrictEqual(fs.readFileSync(file), corruptBytes)
    // --continue finds the same file and says the same.
    const continued = await keel(at, [text("never")], ["--continue"])
    assert.strictEqual(continued.code, 1)
    assert.strictEqual(continued.stderr, corrupt.stderr)

    const foreignId = "c1a0de00-0000-4000-8000-000000000000"
    fs.writeFileSync(
      fileOf(at, foreignId),
      JSON.stringify({ parentUuid: null, type: "user", message: { role: "user", content: "hi" }, uuid: "u", sessionId: foreignId, version: "2.1.87" }) + "\n"
    )
    const foreign = await keel(at, [text("never")], ["--resume", foreignId])
    assert.strictEqual(foreign.code, 1)
    assert.match(foreign.stderr, /^keel: .*:1: not a Keel transcript of this session: its entries carry version "2\.1\.87", another program's/)
  })

  it("a truncated last line is skipped with a warning; the session goes on and its file replays", async () => {
    const at = place()
    const first = await keel(at, [text("One.")], [], "first")
    fs.appendFileSync(fileOf(at, first.sessionId), "{\"type\":\"user\",\"uuid\":\"half")
    const server = await fake([text("Two.")])
    const r = await run(["-p", "second", "--resume", first.sessionId], { env: { ...envFor(server), KEEL_HOME: at.home }, cwd: at.dir })
    assert.strictEqual(r.code, 0)
    assert.strictEqual(r.stdout, "Two.\n")
    // user, system_prompt, envelope, model, assistant, usage: the cut line is the seventh.
    assert.match(r.stderr, /^keel: .*\.jsonl:7: the last line is incomplete \(the process stopped while writing it\); it was skipped\n$/)
    const loaded = transcript(at, first.sessionId)
    assert.deepStrictEqual(loaded.warnings, [])
    assert.strictEqual(loaded.messages.length, 4)
  })

  it("concurrent sessions in one folder each write their own valid file", async () => {
    const at = place()
    const runs = await Promise.all(["one", "two", "three"].map((name) => keel(at, [readme(`toolu_${name}`), text(`Done ${name}.`)], [], name)))
    assert.deepStrictEqual(runs.map((r) => r.code), [0, 0, 0])
    const ids = runs.map((r) => r.sessionId)
    assert.strictEqual(new Set(ids).size, 3)
    assert.deepStrictEqual(fs.readdirSync(path.dirname(fileOf(at, ids[0]!))).sort(), ids.map((id) => `${id}.jsonl`).sort())
    runs.forEach((r, i) => {
      const loaded = transcript(at, r.sessionId)
      assert.strictEqual(loaded.firstPrompt, ["one", "two", "three"][i])
      assert.strictEqual(loaded.messages.length, 4)
    })
  })

  it("a subagent (Task) is part of its session's transcript, not a session of the folder", async () => {
    const at = place()
    const isSubagent = (body: any) => JSON.stringify(body.system ?? "").includes("You are a Keel subagent")
    const t = await keel(at, [
      FakeAnthropic.toolUseReply([{
        name: "Task",
        input: { description: "Look around", prompt: "What is in README.md?", subagent_type: "Explore" },
        id: "toolu_task"
      }], { model }),
      (body) => (isSubagent(body) ? text("It counts sheep.") : text("wrong order")),
      text("The subagent says it counts sheep.")
    ], [], "ask a subagent")
    assert.strictEqual(t.code, 0, t.stderr)
    assert.isTrue(isSubagent(t.requests[1]))
    assert.deepStrictEqual(fs.readdirSync(path.dirname(fileOf(at, t.sessionId))), [`${t.sessionId}.jsonl`])
    const loaded = transcript(at, t.sessionId)
    assert.strictEqual(loaded.messages.length, 4)
    assert.include(JSON.stringify(loaded.messages[2]), "It counts sheep.")
  })

  it("flags that do not go together are a usage error (exit 2, one line and the pointer to --help)", async () => {
    const at = place()
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [["--resume", "abc", "--continue"], "keel: --resume and --continue cannot be used together: --resume <id> picks a session, --continue the latest one of this folder."],
      [["--fork-session"], "keel: --fork-session needs --resume <id> or --continue: it forks the session they pick."],
      [["--session-id", "not-a-uuid"], "keel: --session-id must be a UUID (like 123e4567-e89b-12d3-a456-426614174000), got \"not-a-uuid\"."],
      [["--continue", "--session-id", "5b0c4a52-7a43-4a63-9d7b-7e4b8a3b2c10"], "keel: --session-id with --resume or --continue needs --fork-session: a resumed session keeps its id, a fork takes the new one."],
      [["--resume", "../../etc/passwd"], "keel: --resume needs a session id (letters, digits, '.', '_' and '-'), got \"../../etc/passwd\"."]
    ]
    for (const [args, line] of cases) {
      const r = await keel(at, [text("never")], args)
      assert.strictEqual(r.code, 2, args.join(" "))
      assert.strictEqual(r.stderr, `${line}\nRun keel --help for usage.\n`)
      assert.strictEqual(r.requests.length, 0)
    }
  })
})
