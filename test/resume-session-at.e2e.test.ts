/**
 * End to end, `keel --resume <id> --resume-session-at <uuid> --fork-session` against the loopback
 * fake API: the uuids of stream-json `assistant` and `user` messages are the uuids of their lines in
 * the session's .jsonl (as in Claude Code), so a message's uuid taken from the output names where
 * a fork's history ends. The fork's request holds exactly the history up to that message and the
 * new prompt (an answer's tool calls answered as interrupted, as Claude Code does); the fork is a
 * new session in a new file, the source's file is unchanged byte for byte, and a recorded source's
 * journal is carried over. A uuid that is no message of the session,
 * or the flag without `--fork-session`, is a clear error, exit non-zero, and no file is written.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { query, type Query } from "@keel/cli"
import { Journal, SessionStore } from "@keel/core"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, lines, run, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

/** A folder with a notes file, `KEEL_HOME` inside it. */
const place = () => {
  const dir = workdir()
  fs.writeFileSync(path.join(dir, "notes.md"), "The answer is 42.\n")
  return { dir, home: path.join(dir, ".keel-home") }
}

type Place = ReturnType<typeof place>

/** `keel args` in the place against a fake playing `script`: the run and the requests the fake got. */
const keel = async (at: Place, script: ReadonlyArray<FakeAnthropic.ScriptItem>, args: ReadonlyArray<string>) => {
  const server = await fake(script)
  const r = await run(args, { env: { ...envFor(server), KEEL_HOME: at.home }, cwd: at.dir })
  return { ...r, requests: server.requests }
}

const folderOf = (at: Place) => path.join(at.home, "projects", SessionStore.slug(fs.realpathSync(at.dir)))
const fileOf = (at: Place, id: string) => path.join(folderOf(at), `${id}.jsonl`)
const entries = (at: Place, id: string): Array<any> =>
  fs.readFileSync(fileOf(at, id), "utf8").split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l))

/** A message of a request as role and texts (tool calls and results by their ids). */
const shape = (m: any) => ({
  role: m.role,
  content: (typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content).map((b: any) =>
    b.type === "text" ? b.text : b.type === "tool_use" ? `tool_use ${b.id}` : b.type === "tool_result" ? `tool_result ${b.tool_use_id}` : b.type
  )
})

const streamJson = ["--output-format", "stream-json", "--verbose", "--allowedTools", "Read"]

/** A recorded session of two turns: "what is the answer?" (a Read, then "It is 42.") and "and then?" ("Nothing more."). */
const twoTurns = async () => {
  const at = place()
  const first = await keel(at, [
    FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "notes.md" }, id: "toolu_read" }]),
    FakeAnthropic.textReply("It is 42.")
  ], ["-p", "what is the answer?", ...streamJson, "--record"])
  assert.strictEqual(first.code, 0, first.stderr)
  const output = lines(first.stdout)
  const sessionId = output[0].session_id as string
  const second = await keel(at, [FakeAnthropic.textReply("Nothing more.")], [
    "--resume",
    sessionId,
    "-p",
    "and then?",
    ...streamJson,
    "--record"
  ])
  assert.strictEqual(second.code, 0, second.stderr)
  return { at, sessionId, output: [...output, ...lines(second.stdout)], firstRequests: first.requests }
}

describe("keel --resume-session-at", { timeout: 120_000 }, () => {
  it("stream-json assistant and user messages carry their .jsonl entries' uuids", async () => {
    const { at, output, sessionId } = await twoTurns()
    const file = entries(at, sessionId)
    const messages = output.filter((m) => m.type === "assistant" || m.type === "user")
    // The call, its result, the answer; then the second answer.
    assert.deepStrictEqual(messages.map((m) => m.type), ["assistant", "user", "assistant", "assistant"])
    for (const m of messages) {
      const entry = file.find((e) => e.uuid === m.uuid)
      assert.isDefined(entry, `${m.type} ${m.uuid} is no entry of the .jsonl`)
      assert.strictEqual(entry.type, m.type)
    }
  })

  it("forks at the first turn's answer: the request has the history up to it and the new prompt; the source is untouched", async () => {
    const { at, firstRequests, output, sessionId } = await twoTurns()
    const source = fileOf(at, sessionId)
    const sourceBytes = fs.readFileSync(source)
    const sourceJournal = fs.readFileSync(Journal.fileOf(source), "utf8")
    const answer = output.filter((m) => m.type === "assistant")[1]
    assert.strictEqual(answer.message.content[0].text, "It is 42.")

    const fork = await keel(at, [FakeAnthropic.textReply("On it.")], [
      "--resume",
      sessionId,
      "--resume-session-at",
      answer.uuid,
      "--fork-session",
      "-p",
      "next",
      "--output-format",
      "json"
    ])
    assert.strictEqual(fork.code, 0, fork.stderr)
    const result = JSON.parse(fork.stdout)
    assert.strictEqual(result.result, "On it.")
    assert.notStrictEqual(result.session_id, sessionId)
    assert.strictEqual(fork.requests.length, 1)
    // The first turn's last request, its answer, then "next": nothing of the second turn.
    const sent = fork.requests[0]!.body.messages.map(shape)
    assert.deepStrictEqual(sent, [
      ...firstRequests.at(-1)!.body.messages.map(shape),
      { role: "assistant", content: ["It is 42."] },
      { role: "user", content: ["next"] }
    ])
    assert.deepStrictEqual(sent.map((m: any) => m.role), ["user", "assistant", "user", "assistant", "user"])
    assert.notInclude(JSON.stringify(fork.requests[0]!.body.messages), "and then?")

    assert.deepStrictEqual(fs.readFileSync(source), sourceBytes)
    const forkEntries = entries(at, result.session_id)
    assert.deepStrictEqual(forkEntries[0], { ...forkEntries[0], type: "origin", source: "fork", from: sessionId })
    // The source's journal, carried over whole; the fork goes on being recorded after it (a
    // recorded session stays recorded), its own run under a header of its own.
    const forkJournal = fs.readFileSync(Journal.fileOf(fileOf(at, result.session_id)), "utf8")
    assert.isTrue(forkJournal.startsWith(sourceJournal))
    const after = forkJournal.slice(sourceJournal.length).split("\n").filter((l) => l !== "").map((l) => JSON.parse(l))
    assert.deepStrictEqual(after.map((e) => e.type).filter((t) => t === "journal" || t === "turn_start" || t === "turn_end"), [
      "journal",
      "turn_start",
      "turn_end"
    ])
    assert.strictEqual(after.find((e) => e.type === "turn_start").prompt, "next")
  })

  it("forks at an answer with a tool call: the call is answered as interrupted, not with its recorded result", async () => {
    const { at, output, sessionId } = await twoTurns()
    const calling = output.find((m) => m.type === "assistant")
    assert.strictEqual(calling.message.content[0].type, "tool_use")
    const fork = await keel(at, [FakeAnthropic.textReply("On it.")], [
      "--resume",
      sessionId,
      "--resume-session-at",
      calling.uuid,
      "--fork-session",
      "-p",
      "next",
      "--output-format",
      "json"
    ])
    assert.strictEqual(fork.code, 0, fork.stderr)
    const messages = fork.requests[0]!.body.messages
    assert.deepStrictEqual(messages.map(shape), [
      { role: "user", content: ["what is the answer?"] },
      { role: "assistant", content: ["tool_use toolu_read"] },
      // The answer and the prompt in one user message, as Claude Code sends them.
      { role: "user", content: ["tool_result toolu_read", "next"] }
    ])
    const result = messages[2].content[0]
    assert.strictEqual(result.is_error, true)
    assert.include(JSON.stringify(result.content), "Interrupted by user")
    assert.notInclude(JSON.stringify(messages), "The answer is 42.")
  })

  it("a uuid that is no message of the session, or no --fork-session: a clear error, non-zero exit, no file written", async () => {
    const { at, sessionId } = await twoTurns()
    const listing = fs.readdirSync(folderOf(at)).sort()
    const bogus = "00000000-0000-4000-8000-000000000000"
    const missing = await keel(at, [FakeAnthropic.textReply("never")], [
      "--resume",
      sessionId,
      "--resume-session-at",
      bogus,
      "--fork-session",
      "-p",
      "next",
      "--output-format",
      "json"
    ])
    assert.strictEqual(missing.code, 1, missing.stderr)
    assert.include(missing.stderr, `session ${sessionId} has no user or assistant message ${bogus}`)
    assert.strictEqual(missing.requests.length, 0)

    const answer = entries(at, sessionId).find((e) => e.type === "assistant")
    const unforked = await keel(at, [FakeAnthropic.textReply("never")], [
      "--resume",
      sessionId,
      "--resume-session-at",
      answer.uuid,
      "-p",
      "next"
    ])
    assert.strictEqual(unforked.code, 2, unforked.stderr)
    assert.include(unforked.stderr, "--resume-session-at needs --fork-session")
    assert.strictEqual(unforked.requests.length, 0)
    assert.deepStrictEqual(fs.readdirSync(folderOf(at)).sort(), listing)
  })

  it("query(): resumeSessionAt with forkSession forks at that message; without forkSession it is refused", async () => {
    const at = place()
    const server = await fake([FakeAnthropic.textReply("one"), FakeAnthropic.textReply("two"), FakeAnthropic.textReply("three")])
    const env = { ...envFor(server), KEEL_HOME: at.home }
    const collect = async (q: AsyncIterable<Query.SDKMessage>) => {
      const out: Array<Query.SDKMessage> = []
      for await (const m of q) out.push(m)
      return out
    }
    const first = await collect(query({ prompt: "first", options: { cwd: at.dir, env } }))
    const sessionId = first[0]!.session_id
    await collect(query({ prompt: "second", options: { cwd: at.dir, env, resume: sessionId } }))
    const answer = first.find((m) => m.type === "assistant")!
    const forked = await collect(query({
      prompt: "next",
      options: { cwd: at.dir, env, resume: sessionId, forkSession: true, resumeSessionAt: answer.uuid }
    }))
    assert.notStrictEqual(forked[0]!.session_id, sessionId)
    assert.deepStrictEqual(server.requests.at(-1)!.body.messages.map(shape), [
      { role: "user", content: ["first"] },
      { role: "assistant", content: ["one"] },
      { role: "user", content: ["next"] }
    ])
    let refused: unknown
    await collect(query({ prompt: "next", options: { cwd: at.dir, env, resume: sessionId, resumeSessionAt: answer.uuid } }))
      .catch((e) => (refused = e))
    assert.include(String((refused as Error | undefined)?.message), "resumeSessionAt needs forkSession")
    assert.strictEqual(server.requests.length, 3)
  })
})
