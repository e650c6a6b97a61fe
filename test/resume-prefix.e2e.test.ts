/**
 * End to end: the turn input envelope and a resume that keeps the prompt cache, with the real
 * `keel` binary against the loopback fake API in a git repository. A first `-p` run, a commit that
 * changes what git says, then `--resume`: the resumed run's first request has the first run's
 * system blocks and tools byte for byte, and its messages start with the first run's last request's
 * messages byte for byte (the cached prefix still matches). The transcript holds an envelope per
 * turn and the system prompt once; a transcript written before envelopes still resumes (it
 * assembles the context as it is now).
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { SessionStore, TurnEnvelope } from "@keel/core"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, gitRepository, lines, run } from "./support/KeelProcess.js"

afterEach(() => closeServers())

/** A git repository on `main` with its README committed and an untracked KEEL.md; `KEEL_HOME` outside it. */
const repository = () => {
  const { dir, git } = gitRepository()
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "keel-home-"))
  fs.writeFileSync(path.join(dir, "KEEL.md"), "Count every sheep twice.\n")
  return { dir, home, git }
}

type Place = ReturnType<typeof repository>

/** `keel -p <prompt> --output-format stream-json ...args` in the repository, against a fake playing `script`. */
const keel = async (at: Place, script: ReadonlyArray<FakeAnthropic.ScriptItem>, prompt: string, args: ReadonlyArray<string> = []) => {
  const server = await fake(script)
  const r = await run(["-p", prompt, "--output-format", "stream-json", ...args], {
    env: { ...envFor(server), KEEL_HOME: at.home },
    cwd: at.dir
  })
  assert.strictEqual(r.code, 0, r.stderr)
  const messages = lines(r.stdout)
  return { ...r, requests: server.requests, sessionId: messages[0].session_id as string }
}

const fileOf = (at: Place, id: string) => path.join(at.home, "projects", SessionStore.slug(at.dir), `${id}.jsonl`)

const entries = (at: Place, id: string): Array<any> =>
  fs.readFileSync(fileOf(at, id), "utf8").split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l))

/** A message as the API got it, without the prompt-cache breakpoint (which moves to the newest message). */
const unmarked = (message: unknown): string =>
  JSON.stringify(message, (k, v) => (k === "cache_control" ? undefined : v))

const model = "claude-sonnet-4-6"
const readme = FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "README.md" }, id: "toolu_read" }], { model })
const text = (value: string) => FakeAnthropic.textReply(value, { model })

describe("keel --resume keeps the prompt cache", { timeout: 90_000 }, () => {
  it("resume after a git commit sends a byte-identical prefix: system blocks, tools, then the previous messages", async () => {
    const at = repository()
    const first = await keel(at, [readme, text("It counts sheep.")], "what does it count?")
    const last = first.requests.at(-1)!.body
    assert.include(JSON.stringify(last.system), "?? KEEL.md")

    // A commit between the runs: git now says something else (KEEL.md committed, a new last commit).
    at.git("add", "KEEL.md")
    at.git("commit", "-q", "-m", "the rules")

    const second = await keel(at, [text("Nothing else.")], "and then?", ["--resume", first.sessionId])
    assert.strictEqual(second.sessionId, first.sessionId)
    const resumed = second.requests[0]!.body
    // The system blocks and the tools, byte for byte (breakpoints included: they sit where they sat).
    assert.strictEqual(JSON.stringify(resumed.system), JSON.stringify(last.system))
    assert.strictEqual(JSON.stringify(resumed.tools), JSON.stringify(last.tools))
    assert.strictEqual(resumed.model, last.model)
    // The messages start with the last request's, byte for byte but for the tail's breakpoint.
    assert.isAbove(resumed.messages.length, last.messages.length)
    assert.deepStrictEqual(
      resumed.messages.slice(0, last.messages.length).map(unmarked),
      last.messages.map(unmarked)
    )
    assert.deepStrictEqual(resumed.messages.slice(last.messages.length).map((m: any) => m.role), ["assistant", "user"])
    // In the raw body too: the system and tools as the first run sent them.
    assert.include(second.requests[0]!.raw, JSON.stringify(last.system))
    assert.include(second.requests[0]!.raw, JSON.stringify(last.tools))

    // A new session assembles the context as it is now: the commit shows, the untracked file does not.
    const fresh = await keel(at, [text("Hello.")], "hello")
    const freshSystem = JSON.stringify(fresh.requests[0]!.body.system)
    assert.notInclude(freshSystem, "?? KEEL.md")
    assert.include(freshSystem, "the rules")
    assert.notStrictEqual(freshSystem, JSON.stringify(last.system))
  })

  it("the transcript holds an envelope per turn with the fields it claims, and the system prompt once, by hash", async () => {
    const at = repository()
    const first = await keel(at, [readme, text("It counts sheep.")], "what does it count?", ["--fallback-model", "claude-haiku-4-5"])
    at.git("add", "KEEL.md")
    at.git("commit", "-q", "-m", "the rules")
    await keel(at, [text("Nothing else.")], "and then?", ["--resume", first.sessionId])

    const all = entries(at, first.sessionId)
    assert.deepStrictEqual(all.slice(0, 3).map((e) => e.type), ["user", "system_prompt", "envelope"])
    const prompts = all.filter((e) => e.type === "system_prompt")
    const envelopes = all.filter((e) => e.type === "envelope")
    assert.strictEqual(prompts.length, 1)
    assert.strictEqual(envelopes.length, 2)
    const [prompt] = prompts
    assert.strictEqual(prompt.hash, TurnEnvelope.hashOf(prompt))
    // The record is the system prompt the first request sent: a block per section, in order.
    assert.deepStrictEqual(
      [...prompt.stable, ...prompt.dynamic].map((s: any) => s.text),
      first.requests[0]!.body.system.map((b: any) => b.text)
    )
    const [one, two] = envelopes
    assert.strictEqual(one.format, TurnEnvelope.FORMAT)
    assert.match(one.turnId, /^[0-9a-f-]{36}$/)
    assert.notStrictEqual(two.turnId, one.turnId)
    assert.deepStrictEqual([one.systemPrompt, two.systemPrompt], [prompt.hash, prompt.hash])
    // The context as sent: the instruction file by path, the environment, git status as it was.
    assert.strictEqual(one.context.source, "assembled")
    assert.deepStrictEqual(one.context.snapshot.instructions.map((f: any) => [f.path, f.scope]), [[path.join(at.dir, "KEEL.md"), "project"]])
    assert.strictEqual(one.context.snapshot.environment.cwd, at.dir)
    assert.deepStrictEqual([one.context.snapshot.git.branch, one.context.snapshot.git.status], ["main", "?? KEEL.md"])
    assert.deepStrictEqual(two.context, { ...one.context, source: "resumed" })
    // Routing: the model, the fallbacks in force, and why.
    assert.deepStrictEqual(one.routing, { model, fallbacks: ["claude-haiku-4-5"], reason: "default" })
    assert.deepStrictEqual(two.routing, { model, fallbacks: [], reason: "resumed" })
    // Tool policy: the tools the model saw, the mode and rules in force.
    assert.deepStrictEqual(one.toolPolicy.tools, first.requests[0]!.body.tools.map((t: any) => t.name))
    assert.include(one.toolPolicy.tools, "Read")
    assert.deepStrictEqual([one.toolPolicy.permissionMode, one.toolPolicy.allow, one.toolPolicy.deny], ["default", [], []])
    assert.strictEqual(one.toolPolicy.toolsHash.length, 64)
    // The effective user message, and the entry holding it.
    assert.deepStrictEqual([one.user.text, two.user.text], ["what does it count?", "and then?"])
    assert.strictEqual(all.find((e) => e.uuid === one.user.entry).message.content, "what does it count?")
    assert.strictEqual(all.find((e) => e.uuid === two.user.entry).message.content, "and then?")
  })

  it("a transcript written before envelopes still resumes: it assembles the context as it is now", async () => {
    const at = repository()
    const first = await keel(at, [text("It counts sheep.")], "what does it count?")
    // The file as an earlier Keel wrote it: no system_prompt, no envelope (the chain of parents kept).
    const old = entries(at, first.sessionId)
      .filter((e) => e.type !== "system_prompt" && e.type !== "envelope")
      .map((e, i, kept) => ({ ...e, parentUuid: i === 0 ? null : kept[i - 1].uuid }))
    fs.writeFileSync(fileOf(at, first.sessionId), old.map((e) => JSON.stringify(e) + "\n").join(""))
    at.git("add", "KEEL.md")
    at.git("commit", "-q", "-m", "the rules")

    const second = await keel(at, [text("Nothing else.")], "and then?", ["--resume", first.sessionId])
    assert.strictEqual(second.stderr, "")
    const system = JSON.stringify(second.requests[0]!.body.system)
    assert.notInclude(system, "?? KEEL.md")
    assert.include(system, "the rules")
    assert.deepStrictEqual(second.requests[0]!.body.messages.map((m: any) => m.role), ["user", "assistant", "user"])
    const envelopes = entries(at, first.sessionId).filter((e) => e.type === "envelope")
    assert.deepStrictEqual(envelopes.map((e) => e.context.source), ["assembled"])
  })
})
