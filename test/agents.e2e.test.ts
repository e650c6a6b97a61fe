/**
 * End to end: custom subagents through the real `keel` binary against the loopback fake API, and
 * through the real Claude Agent SDK's `query()` running `keel` as its CLI. A Markdown agent in
 * `.claude/agents/`, an `--agents` definition and the SDK's `agents` option are each offered
 * through `Task`'s `subagent_type`: the subagent's request carries the agent's prompt as its system
 * prompt, only its tools and its model. `--agent` (the SDK's `agent`) runs the main thread as the
 * agent. Keel's own in-process `query()` takes the same `agents`. What Keel cannot honour is refused with exit 2 before any request; a broken agent file is
 * skipped with a warning and the rest runs.
 */
import { query } from "@anthropic-ai/claude-agent-sdk"
import { query as keelQuery, QueryError } from "@keel/cli"
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, keel, lines, run, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const TIMEOUT = 60_000
const PROMPT = "REVIEWER-PROMPT: you review code and report problems."
const REVIEWER_MD = `---\nname: reviewer\ndescription: Reviews code for bugs\ntools: Read, Grep\nmodel: haiku\n---\n${PROMPT}\n`

/** The system prompt's text (a string, or text blocks). */
const systemText = (body: any): string =>
  typeof body.system === "string" ? body.system : (body.system ?? []).map((b: any) => b.text).join("\n")
const isReviewer = (body: any) => systemText(body).startsWith("REVIEWER-PROMPT")
const afterTools = (body: any) => {
  const last = body.messages.at(-1)
  return Array.isArray(last.content) && last.content.some((b: any) => b.type === "tool_result")
}
const toolNames = (body: any): Array<string> => (body.tools ?? []).map((t: any) => t.name)

/** The main thread calls Task with the reviewer; the reviewer reads README.md and reports; the main thread answers. */
const route: FakeAnthropic.ScriptFunction = (body) => {
  if (isReviewer(body)) {
    return afterTools(body)
      ? FakeAnthropic.textReply("No bugs: it counts sheep.", { model: body.model })
      : FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "README.md" }, id: "toolu_sub_read" }], { model: body.model })
  }
  return afterTools(body)
    ? FakeAnthropic.textReply("The reviewer found no bugs.", { model: body.model })
    : FakeAnthropic.toolUseReply([{
      name: "Task",
      input: { description: "Review the readme", prompt: "Review README.md", subagent_type: "reviewer" },
      id: "toolu_task"
    }], { model: body.model })
}

/** A project with `files`, and a fresh home folder (`HOME`, `KEEL_HOME`) so no real user agent is read. */
const project = (files: Record<string, string> = {}) => {
  const dir = workdir()
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true })
    fs.writeFileSync(path.join(dir, file), text)
  }
  const home = path.join(dir, ".home")
  fs.mkdirSync(home)
  return { dir, env: { HOME: home, KEEL_HOME: path.join(dir, ".keel-home") } }
}

const keelRun = async (files: Record<string, string>, args: ReadonlyArray<string>) => {
  const server = await fake(Array.from({ length: 6 }, () => route))
  const { dir, env } = project(files)
  const r = await run(["-p", "review the readme", "--output-format", "stream-json", "--verbose", ...args], {
    env: { ...envFor(server), ...env },
    cwd: dir
  })
  return { ...r, server, dir, bodies: server.requests.map((q) => q.body) }
}

/** What the reviewer's requests show: its prompt as system prompt, only its tools, its model. */
const assertReviewerRan = (bodies: Array<any>, model: string) => {
  const sub = bodies.filter(isReviewer)
  assert.strictEqual(sub.length, 2)
  assert.isTrue(systemText(sub[0]).startsWith(PROMPT))
  assert.deepStrictEqual(toolNames(sub[0]), ["Read", "Grep"])
  assert.strictEqual(sub[0].model, model)
  assert.include(JSON.stringify(sub[0].messages[0].content), "Review README.md")
  const main = bodies.filter((b) => !isReviewer(b))
  assert.include(main[0].tools.find((t: any) => t.name === "Task").description, "- reviewer: Reviews code for bugs (Tools: Read, Grep)")
  assert.include(JSON.stringify(main[1].messages.at(-1).content), "No bugs: it counts sheep.")
}

describe("keel custom agents (-p)", () => {
  it("a .claude/agents/reviewer.md agent runs through Task with its prompt, tools and model; init lists it", async () => {
    const r = await keelRun({ ".claude/agents/reviewer.md": REVIEWER_MD }, [])
    assert.strictEqual(r.code, 0, r.stderr)
    assertReviewerRan(r.bodies, "claude-haiku-4-5")
    const messages = lines(r.stdout)
    assert.deepStrictEqual(messages[0].agents, ["general-purpose", "Explore", "reviewer"])
    assert.strictEqual(messages.at(-1).result, "The reviewer found no bugs.")
  }, TIMEOUT)

  it("--agents '{...}' defines the same agent, over a file of the same name", async () => {
    const agents = { reviewer: { description: "Reviews code for bugs", prompt: PROMPT, tools: ["Read", "Grep"], model: "opus" } }
    const r = await keelRun(
      { ".keel/agents/reviewer.md": REVIEWER_MD.replace(PROMPT, "FILE PROMPT") },
      ["--agents", JSON.stringify(agents)]
    )
    assert.strictEqual(r.code, 0, r.stderr)
    assertReviewerRan(r.bodies, "claude-opus-4-6")
    assert.notInclude(JSON.stringify(r.bodies), "FILE PROMPT")
  }, TIMEOUT)

  it("--agent reviewer runs the main thread as the agent: its prompt first in the system prompt, its tools, its model", async () => {
    const server = await fake([FakeAnthropic.textReply("reviewed")])
    const { dir, env } = project({ ".claude/agents/reviewer.md": REVIEWER_MD })
    const r = await run(["-p", "review", "--output-format", "stream-json", "--verbose", "--agent", "reviewer"], {
      env: { ...envFor(server), ...env },
      cwd: dir
    })
    assert.strictEqual(r.code, 0, r.stderr)
    const body = server.requests[0]!.body
    assert.isTrue(systemText(body).startsWith(PROMPT))
    assert.notInclude(systemText(body), "You are Keel")
    assert.include(systemText(body), dir, "the environment still follows the agent's prompt")
    assert.deepStrictEqual(toolNames(body), ["Read", "Grep"])
    assert.strictEqual(body.model, "claude-haiku-4-5")
    assert.deepStrictEqual(lines(r.stdout)[0].tools, ["Read", "Grep"])
  }, TIMEOUT)

  it("--model wins over the agent's model", async () => {
    const server = await fake([FakeAnthropic.textReply("reviewed")])
    const { dir, env } = project({ ".claude/agents/reviewer.md": REVIEWER_MD })
    const r = await run(["-p", "review", "--agent", "reviewer", "--model", "claude-sonnet-4-6"], {
      env: { ...envFor(server), ...env },
      cwd: dir
    })
    assert.strictEqual(r.code, 0, r.stderr)
    assert.strictEqual(server.requests[0]!.body.model, "claude-sonnet-4-6")
  }, TIMEOUT)

  it("--agent with an unknown name: exit 2 naming it and the known agents, no request", async () => {
    const r = await keelRun({ ".claude/agents/reviewer.md": REVIEWER_MD }, ["--agent", "nosuch"])
    assert.strictEqual(r.code, 2)
    assert.strictEqual(
      r.stderr,
      "keel: --agent nosuch: no agent has that name; the agents are general-purpose, Explore, reviewer. " +
        "Define it in .claude/agents/nosuch.md or with --agents.\n"
    )
    assert.strictEqual(r.server.requests.length, 0)
  }, TIMEOUT)

  it("--agents with a key Keel cannot honour, or not JSON: exit 2 naming it, no request", async () => {
    const refused = await keelRun({}, ["--agents", JSON.stringify({ r: { description: "d", prompt: "p", mcpServers: ["gh"] } })])
    assert.strictEqual(refused.code, 2)
    assert.include(refused.stderr, "keel: invalid --agents: r: Keel does not support mcpServers in an agent")
    const broken = await keelRun({}, ["--agents", "{not json"])
    assert.strictEqual(broken.code, 2)
    assert.include(broken.stderr, "keel: invalid --agents: not JSON")
    assert.strictEqual(refused.server.requests.length + broken.server.requests.length, 0)
  }, TIMEOUT)

  it("a broken agent file is skipped with a warning naming it; the other agents run", async () => {
    const r = await keelRun({
      ".claude/agents/reviewer.md": REVIEWER_MD,
      ".claude/agents/broken.md": "---\nname: broken\ndescription: [unclosed\n---\nbody"
    }, [])
    assert.strictEqual(r.code, 0, r.stderr)
    assert.include(r.stderr, `keel: skipped agent file ${path.join(r.dir, ".claude", "agents", "broken.md")}: it has frontmatter that is not valid YAML`)
    assertReviewerRan(r.bodies, "claude-haiku-4-5")
    assert.deepStrictEqual(lines(r.stdout)[0].agents, ["general-purpose", "Explore", "reviewer"])
  }, TIMEOUT)
})

describe("custom agents under the Claude Agent SDK's query()", () => {
  const sdkQuery = (dir: string, env: Record<string, string>, server: FakeAnthropic.FakeAnthropic, options: object) =>
    query({
      prompt: "review the readme",
      options: { pathToClaudeCodeExecutable: keel, cwd: dir, env: { ...process.env, ...envFor(server), ...env }, ...options }
    })

  it("options.agents: the initialize response lists the agent, and a Task call with it runs", async () => {
    const server = await fake(Array.from({ length: 6 }, () => route))
    const { dir, env } = project()
    const q = sdkQuery(dir, env, server, {
      agents: { reviewer: { description: "Reviews code for bugs", prompt: PROMPT, tools: ["Read", "Grep"], model: "haiku" } }
    })
    const agents = await q.supportedAgents()
    assert.deepStrictEqual(agents.map((a) => a.name), ["general-purpose", "Explore", "reviewer"])
    assert.deepStrictEqual(agents[2], { name: "reviewer", description: "Reviews code for bugs", model: "haiku" })
    const messages: Array<any> = []
    for await (const message of q) messages.push(message)
    assert.deepStrictEqual(messages[0].agents, ["general-purpose", "Explore", "reviewer"])
    assert.strictEqual(messages.find((m) => m.type === "result").result, "The reviewer found no bugs.")
    assertReviewerRan(server.requests.map((q) => q.body), "claude-haiku-4-5")
  }, TIMEOUT)

  it("options.agent runs the main thread as one of options.agents", async () => {
    const server = await fake([FakeAnthropic.textReply("reviewed")])
    const { dir, env } = project()
    const q = sdkQuery(dir, env, server, {
      agent: "reviewer",
      agents: { reviewer: { description: "Reviews code for bugs", prompt: PROMPT, tools: ["Read"] } }
    })
    const messages: Array<any> = []
    for await (const message of q) messages.push(message)
    assert.strictEqual(messages.find((m) => m.type === "result").result, "reviewed")
    const body = server.requests[0]!.body
    assert.isTrue(systemText(body).startsWith(PROMPT))
    assert.deepStrictEqual(toolNames(body), ["Read"])
  }, TIMEOUT)
})

describe("custom agents under Keel's in-process query()", () => {
  it("options.agents: a Task call with the agent runs as through the CLI; a refused key rejects the query", async () => {
    const server = await fake(Array.from({ length: 6 }, () => route))
    const { dir, env } = project()
    const messages: Array<any> = []
    const q = keelQuery({
      prompt: "review the readme",
      options: {
        cwd: dir,
        env: { ...envFor(server), ...env },
        agents: { reviewer: { description: "Reviews code for bugs", prompt: PROMPT, tools: ["Read", "Grep"], model: "haiku" } }
      }
    })
    for await (const message of q) messages.push(message)
    assert.deepStrictEqual((messages[0] as any).agents, ["general-purpose", "Explore", "reviewer"])
    assert.strictEqual(messages.find((m) => m.type === "result").result, "The reviewer found no bugs.")
    assertReviewerRan(server.requests.map((r) => r.body), "claude-haiku-4-5")

    const refused = keelQuery({
      prompt: "go",
      options: { cwd: dir, env: { ...envFor(server), ...env }, agents: { r: { description: "d", prompt: "p", skills: ["x"] } as any } }
    })
    const error = await (async () => {
      try {
        for await (const _ of refused) void _
      } catch (e) {
        return e
      }
    })()
    assert.instanceOf(error, QueryError)
    assert.strictEqual((error as QueryError).code, 2)
    assert.include((error as QueryError).message, "invalid query() option agents: r: Keel does not support skills in an agent")
  }, TIMEOUT)
})
