/**
 * End to end: `keel export` on a session the real `keel -p` recorded in two runs (the second with
 * `--resume`) against the loopback fake API: a Write, then an Edit of the same file and a Bash call
 * a deny rule refuses, with usage on a priced model. Each export is checked for what it claims: the
 * review's calls, decisions and diffs; the handoff's answers, files and cost (the session's own
 * `total_cost_usd`); the replay case's envelopes and requests, which must be what the API received.
 * Bad input (an unknown session, an unknown format, a corrupt transcript) fails with a line on
 * stderr and writes nothing.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { Message, ReplayCase, SessionStore } from "@keel/core"
import { Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, lines, run, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const sonnet = { model: "claude-sonnet-4-6", usage: { input_tokens: 1_000, output_tokens: 100 } } as const
const rules = ["--allowedTools", "Write", "Edit", "--disallowedTools", "Bash(rm:*)"]

/** Messages as JSON without the prompt-cache breakpoints, string contents as one text block. */
const bare = (value: unknown): any =>
  JSON.parse(JSON.stringify(value, function(this: any, k, v) {
    if (k === "cache_control") return undefined
    if (k === "content" && typeof v === "string" && this?.role !== undefined) return [{ type: "text", text: v }]
    return v
  }))

/** Two runs of `keel -p` in a fresh folder (the second resuming the first), and what they recorded. */
const recordSession = async () => {
  const dir = fs.realpathSync(workdir())
  const home = path.join(dir, ".keel-home")
  const keel = async (script: ReadonlyArray<FakeAnthropic.ScriptItem>, args: ReadonlyArray<string>, prompt: string) => {
    const server = await fake(script)
    const r = await run(["-p", prompt, "--output-format", "stream-json", ...rules, ...args], {
      env: { ...envFor(server), KEEL_HOME: home },
      cwd: dir
    })
    assert.strictEqual(r.code, 0, r.stderr)
    return { ...r, server, messages: lines(r.stdout) }
  }
  const notes = path.join(dir, "notes.md")
  const first = await keel([
    FakeAnthropic.toolUseReply([{ name: "Write", input: { file_path: notes, content: "# Notes\n\n- alpha\n- beta\n" }, id: "toolu_write" }], sonnet),
    FakeAnthropic.textReply("Wrote notes.md.", sonnet)
  ], [], "write the notes")
  const sessionId = first.messages[0].session_id as string
  const second = await keel([
    FakeAnthropic.toolUseReply([
      { name: "Edit", input: { file_path: notes, old_string: "- beta", new_string: "- gamma" }, id: "toolu_edit" },
      { name: "Bash", input: { command: "rm -rf build" }, id: "toolu_rm" }
    ], sonnet),
    FakeAnthropic.textReply("Fixed the second item; the cleanup was denied.", sonnet)
  ], ["--resume", sessionId], "fix the second item and clean up")
  assert.strictEqual(fs.readFileSync(notes, "utf8"), "# Notes\n\n- alpha\n- gamma\n")
  const exportIt = (args: ReadonlyArray<string>) => run(["export", ...args], { env: { KEEL_HOME: home }, cwd: dir })
  const file = path.join(home, "projects", SessionStore.slug(dir), `${sessionId}.jsonl`)
  return { dir, exportIt, file, first, notes, second, sessionId }
}

describe("keel export", () => {
  it("review, handoff and replay of a two-run session hold its calls, decisions, diffs, answers and requests", async () => {
    const { dir, exportIt, file, first, notes, second, sessionId } = await recordSession()

    // The exports, read concurrently (each a process of its own).
    const [reviewed, handoff, handoffJson, replayed, byPath] = await Promise.all([
      exportIt([sessionId, "--format", "review", "--output", "review.json"]),
      exportIt([sessionId, "--format", "handoff"]),
      exportIt([sessionId, "--format", "handoff", "--json"]),
      exportIt([sessionId, "--format", "replay", "-o", "replay.json"]),
      // A transcript's path works as well as the id, from any folder.
      run(["export", file, "--format", "review"], { env: { KEEL_HOME: "/nonexistent" } })
    ])

    // review: to a file, nothing on stdout.
    assert.strictEqual(reviewed.code, 0, reviewed.stderr)
    assert.strictEqual(reviewed.stdout, "")
    const review = JSON.parse(fs.readFileSync(path.join(dir, "review.json"), "utf8"))
    assert.strictEqual(review.kind, "keel/review")
    assert.strictEqual(review.session.sessionId, sessionId)
    assert.deepStrictEqual(review.calls.map((c: any) => [c.id, c.name, c.decision.outcome, c.decision.by, c.decision.rule]), [
      ["toolu_write", "Write", "allowed", "rule", "Write"],
      ["toolu_edit", "Edit", "allowed", "rule", "Edit"],
      ["toolu_rm", "Bash", "denied", "policy", "Bash(rm:*)"]
    ])
    const call = (id: string) => review.calls.find((c: any) => c.id === id)
    assert.include(call("toolu_rm").decision.message, "Permission to use Bash was denied")
    assert.isTrue(call("toolu_rm").isError)
    assert.deepStrictEqual(call("toolu_edit").input, { file_path: notes, old_string: "- beta", new_string: "- gamma" })
    assert.include(call("toolu_edit").output, "has been updated")
    assert.deepStrictEqual(call("toolu_write").edit, {
      file: notes,
      baseline: "created",
      applied: true,
      patch: `--- /dev/null\n+++ ${notes}\n@@ -0,0 +1,4 @@\n+# Notes\n+\n+- alpha\n+- beta\n`
    })
    assert.deepStrictEqual(call("toolu_edit").edit, {
      file: notes,
      baseline: "recorded",
      applied: true,
      patch: `--- ${notes}\n+++ ${notes}\n@@ -1,4 +1,4 @@\n # Notes\n \n - alpha\n-- beta\n+- gamma\n`
    })
    assert.deepStrictEqual(review.files.map((f: any) => [f.file, f.calls, f.created]), [[notes, ["toolu_write", "toolu_edit"], true]])
    assert.include(review.files[0].patch, "+- gamma\n")

    // handoff: Markdown on stdout; with --json, the bundle, whose cost is the session's.
    assert.strictEqual(handoff.code, 0, handoff.stderr)
    assert.include(handoff.stdout, `# Handoff: session ${sessionId}`)
    assert.include(handoff.stdout, `keel --resume ${sessionId}`)
    assert.include(handoff.stdout, "#### Turn 2: fix the second item and clean up\n\nFixed the second item; the cleanup was denied.")
    assert.include(handoff.stdout, `### Edited\n\n- ${notes}`)
    assert.include(handoff.stdout, `### Written\n\n- ${notes}`)
    const bundle = JSON.parse(handoffJson.stdout)
    assert.strictEqual(bundle.kind, "keel/handoff")
    assert.strictEqual(bundle.session.turns, 2)
    assert.closeTo(bundle.session.costUsd, second.messages.at(-1).total_cost_usd, 1e-12)
    assert.isAbove(bundle.session.costUsd, 0)
    assert.deepStrictEqual(bundle.open, { pendingActions: [], queued: [], todos: [] })
    assert.isNull(bundle.goal)

    // replay: the envelopes and system prompts, and each request as the API received it.
    assert.strictEqual(replayed.code, 0, replayed.stderr)
    const replay = Schema.decodeUnknownSync(ReplayCase.ReplayCase)(JSON.parse(fs.readFileSync(path.join(dir, "replay.json"), "utf8")))
    assert.strictEqual(replay.kind, "keel/replay-case")
    assert.isFalse(replay.recorded.modelStreams)
    assert.deepStrictEqual(replay.turns.map((t) => t.prompt), ["write the notes", "fix the second item and clean up"])
    for (const turn of replay.turns) {
      assert.strictEqual(turn.envelope?.routing.model, "claude-sonnet-4-6")
      assert.deepStrictEqual(turn.envelope?.toolPolicy.deny, ["Bash(rm:*)"])
      const prompt = replay.systemPrompts[turn.envelope!.systemPrompt]!
      assert.isAbove(prompt.stable.length + prompt.dynamic.length, 0)
    }
    const received = [...first.server.requests, ...second.server.requests].map((r) => bare(r.body.messages))
    const sent = ReplayCase.conversations(replay).map((messages) => bare(Message.toParams(messages)))
    assert.deepStrictEqual(sent, received)
    assert.deepStrictEqual(replay.turns[1]!.requests[0]!.toolResults.map((r) => [r.tool_use_id, r.is_error === true]), [
      ["toolu_edit", false],
      ["toolu_rm", true]
    ])

    assert.strictEqual(byPath.code, 0, byPath.stderr)
    assert.deepStrictEqual(JSON.parse(byPath.stdout), review)
  }, 120_000)

  it("an unknown session, an unknown format and a corrupt transcript fail with a line on stderr, and write nothing", async () => {
    const { dir, exportIt, file, sessionId } = await recordSession()

    const corrupt = path.join(dir, "corrupt.jsonl")
    const entries = fs.readFileSync(file, "utf8").split("\n")
    entries[2] = "{not json"
    fs.writeFileSync(corrupt, entries.join("\n"))
    const [missing, format, noArgument, broken] = await Promise.all([
      exportIt(["no-such-id", "--output", "out.md"]),
      exportIt([sessionId, "--format", "yaml"]),
      exportIt([]),
      exportIt([corrupt, "--format", "review", "--output", "review.json"])
    ])

    assert.strictEqual(missing.code, 1)
    assert.strictEqual(missing.stdout, "")
    assert.include(missing.stderr, `keel export: no session no-such-id in ${dir}`)
    assert.include(missing.stderr, sessionId, "the folder's sessions are listed")
    assert.isFalse(fs.existsSync(path.join(dir, "out.md")))

    assert.strictEqual(format.code, 2)
    assert.include(format.stderr, "--format must be one of handoff, replay, review")
    assert.strictEqual(format.stdout, "")

    assert.strictEqual(noArgument.code, 2)
    assert.include(noArgument.stderr, "keel export: missing required argument")

    assert.strictEqual(broken.code, 1)
    assert.include(broken.stderr, `${corrupt}:3: the transcript is corrupt`)
    assert.isFalse(fs.existsSync(path.join(dir, "review.json")))
  }, 120_000)
})
