/**
 * The agent types of a run: agent files read from the four folders (bounded, bad files skipped
 * with a warning naming them), merged by Claude Code's precedence (given definitions > project >
 * user > built-in), the main thread's agent and its tools, and custom agents run through `Task`
 * (their prompt, their tools among the parent's, their model and budget).
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Message, type ModelRequest, SessionState, TestModel, Tool, ToolRegistry } from "@keel/core"
import { Agents, Subagents, Task } from "@keel/tools"
import { Effect, Either, Exit, Ref, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { callServices } from "./support/Calls.js"

/** A temporary folder holding `files` (relative path → text). */
const tree = (files: Record<string, string>): string => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "keel-agents-"))
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
    fs.writeFileSync(path.join(root, file), text)
  }
  return root
}

const agentFile = (name: string, description: string, extra = "") =>
  `---\nname: ${name}\ndescription: ${description}\n${extra}---\nYou are ${name} (${description}).\n`

/** The catalog of a project `cwd`, a Keel home and a user home laid out in one temporary tree. */
const catalog = (files: Record<string, string>, options: Partial<Agents.Options> = {}) => {
  const root = tree(files)
  return Agents.make({
    cwd: path.join(root, "project"),
    home: path.join(root, "keel-home"),
    userHome: path.join(root, "home"),
    ...options
  }).pipe(Effect.provide(NodeContext.layer), Effect.map((service) => ({ service, root })))
}

describe("Agents", () => {
  it.effect("files of the four folders, subfolders included, merge by name: given > project (.keel > .claude) > user > built-in", () =>
    Effect.gen(function*() {
      const { service } = yield* catalog({
        "home/.claude/agents/a.md": agentFile("shared", "from ~/.claude"),
        "home/.claude/agents/only-user.md": agentFile("only-user", "user only"),
        "keel-home/agents/a.md": agentFile("shared", "from KEEL_HOME"),
        "project/.claude/agents/deep/nested/b.md": agentFile("shared", "from .claude/agents"),
        "project/.claude/agents/notes.txt": agentFile("not-an-agent", "not markdown"),
        "project/.keel/agents/c.md": agentFile("shared", "from .keel/agents"),
        "project/.keel/agents/explore.md": agentFile("Explore", "the project's Explore"),
        "project/.keel/agents/given.md": agentFile("given", "from a file")
      }, { agents: { given: { description: "from --agents", prompt: "p" } } })
      assert.deepStrictEqual(service.definitions.map((d) => [d.agentType, d.whenToUse]), [
        ["general-purpose", Subagents.generalPurpose.whenToUse],
        ["Explore", "the project's Explore"],
        ["given", "from --agents"],
        ["only-user", "user only"],
        ["shared", "from .keel/agents"]
      ])
      assert.deepStrictEqual(service.warnings, [])
      assert.isUndefined(service.main)
    }))

  it.effect("a bad file is skipped with a warning naming it and the problem; the other agents load", () =>
    Effect.gen(function*() {
      const { root, service } = yield* catalog({
        "project/.claude/agents/bad.md": "---\nname: bad\n---\nno description",
        "project/.claude/agents/good.md": agentFile("good", "fine"),
        "project/.claude/agents/twice.md": agentFile("good", "again")
      })
      assert.deepStrictEqual(service.definitions.map((d) => d.agentType), ["general-purpose", "Explore", "good"])
      const folder = path.join(root, "project", ".claude", "agents")
      assert.deepStrictEqual(service.warnings, [
        `skipped agent file ${folder}/bad.md: agent bad: description is missing (a string); the other agents still load`,
        `skipped agent file ${folder}/twice.md: it defines agent good again (${folder}/good.md defines it first); the other agents still load`
      ])
    }))

  it.effect("a missing folder has no agents; info lists every type with its model when it has one", () =>
    Effect.gen(function*() {
      const { service } = yield* catalog({}, { agents: JSON.stringify({ r: { description: "R", prompt: "p", model: "opus" } }) })
      assert.deepStrictEqual(service.info, [
        { name: "general-purpose", description: Subagents.generalPurpose.whenToUse },
        { name: "Explore", description: Subagents.explore.whenToUse },
        { name: "r", description: "R", model: "opus" }
      ])
    }))

  it.effect("main names the agent the main thread runs as; a name no agent has fails, listing the known ones", () =>
    Effect.gen(function*() {
      const { service } = yield* catalog({ "project/.claude/agents/r.md": agentFile("reviewer", "R", "model: haiku\n") }, {
        main: "reviewer"
      })
      assert.strictEqual(service.main?.agentType, "reviewer")
      assert.strictEqual(Agents.mainModel(service.main), "claude-haiku-4-5")
      const exit = yield* Effect.exit(catalog({}, { main: "nosuch" }))
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined
      assert.instanceOf(error, Agents.UnknownAgent)
      assert.strictEqual(
        (error as Agents.UnknownAgent).message,
        "--agent nosuch: no agent has that name; the agents are general-purpose, Explore. Define it in .claude/agents/nosuch.md or with --agents."
      )
    }))

  it.effect("invalid definitions fail the catalog (InvalidAgents), naming where they came from", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(catalog({}, { agents: { a: { description: "d" } }, agentsOrigin: "initialize agents" }))
      assert.strictEqual(error._tag, "InvalidAgents")
      assert.include(error.message, "invalid initialize agents: a: prompt is missing (a string)")
    }))

  it("mainModel: none or inherit is the run's own model; an alias resolves", () => {
    assert.isUndefined(Agents.mainModel(undefined))
    assert.isUndefined(Agents.mainModel({ ...Subagents.generalPurpose, model: "inherit" }))
    assert.strictEqual(Agents.mainModel({ ...Subagents.generalPurpose, model: "sonnet" }), "claude-sonnet-4-6")
    assert.strictEqual(Agents.mainModel({ ...Subagents.generalPurpose, model: "claude-x-1" }), "claude-x-1")
  })
})

const stub = (name: string) =>
  Tool.make({ name, description: name, input: Schema.Struct({}), isReadOnly: true, call: () => Effect.succeed(`${name} ran`) })

describe("Subagents tool filtering", () => {
  it("specMatches: a name, an MCP server (mcp__s, mcp__s__*), every MCP tool (mcp__*)", () => {
    assert.isTrue(Subagents.specMatches("Read", "Read"))
    assert.isFalse(Subagents.specMatches("Read", "ReadMore"))
    assert.isTrue(Subagents.specMatches("mcp__gh", "mcp__gh__issues"))
    assert.isTrue(Subagents.specMatches("mcp__gh__*", "mcp__gh__issues"))
    assert.isFalse(Subagents.specMatches("mcp__gh", "mcp__ghost__x"))
    assert.isTrue(Subagents.specMatches("mcp__*", "mcp__ghost__x"))
    assert.isFalse(Subagents.specMatches("mcp__*", "Read"))
  })

  it("toolsFor: the agent's tools among the parent's, minus its disallowed ones and the parent-only tools", () => {
    const parent = ["Read", "Grep", "Bash", "Task", "AskUserQuestion", "mcp__gh__issues", "mcp__db__query"].map(stub)
    const names = (definition: Partial<Subagents.Definition>) =>
      Subagents.toolsFor({ ...Subagents.generalPurpose, ...definition }, parent).map((t) => t.name)
    assert.deepStrictEqual(names({ tools: ["Read", "Task", "mcp__gh", "WebFetch"] }), ["Read", "mcp__gh__issues"])
    assert.deepStrictEqual(names({ disallowedTools: ["Bash", "mcp__*"] }), ["Read", "Grep"])
  })

  it.effect("layerMainTools: the main thread's registry keeps what its agent allows (Task too when named); unchanged without one", () =>
    Effect.gen(function*() {
      const tools = ["Read", "Grep", "Bash", "Task"].map(stub)
      const registryOf = (main: Subagents.Definition | undefined) =>
        Effect.map(
          ToolRegistry.ToolRegistry,
          (registry) => registry.tools.map((t) => t.name)
        ).pipe(
          Effect.provide(Agents.layerMainTools),
          Effect.provide(ToolRegistry.layer(tools)),
          Effect.provideService(Agents.Agents, Agents.Agents.of({ definitions: [], main, info: [], warnings: [] }))
        )
      assert.deepStrictEqual(yield* registryOf(undefined), ["Read", "Grep", "Bash", "Task"])
      assert.deepStrictEqual(yield* registryOf({ ...Subagents.generalPurpose, tools: ["Read", "Task"] }), ["Read", "Task"])
      assert.deepStrictEqual(yield* registryOf({ ...Subagents.generalPurpose, disallowedTools: ["Bash"] }), ["Read", "Grep", "Task"])
    }))
})

describe("Task with custom agents", () => {
  const systemOf = (request: ModelRequest.ModelRequest) => typeof request.system === "string" ? request.system : ""
  const definitions = (agents: Record<string, unknown>) =>
    Agents.make({ cwd: "/nowhere", home: "/nowhere", userHome: "/nowhere", agents }).pipe(
      Effect.provide(NodeContext.layer),
      Effect.map((a) => a.definitions)
    )
  const call = (tool: Tool.Tool<typeof Task.Input.Type, any>, input: typeof Task.Input.Type) =>
    tool.call(input, { toolUseId: "toolu_task", cwd: "/work" }).pipe(Effect.either)
  const parentTools = ["Read", "Glob", "Grep", "Bash"].map(stub)

  it.effect("the agent's prompt is the system prompt; its tools among the parent's; its model alias resolved; its maxTurns", () =>
    Effect.gen(function*() {
      const agents = yield* definitions({
        reviewer: { description: "Reviews code", prompt: "You review code.", tools: ["Read", "Grep"], model: "haiku", maxTurns: 1 }
      })
      const tool = Task.make({ agents })
      assert.include(tool.description, "- reviewer: Reviews code (Tools: Read, Grep)")
      const outcome = yield* call(tool, { description: "Review", prompt: "Review a.ts", subagent_type: "reviewer" })
      assert.isTrue(Either.isLeft(outcome))
      assert.include(Either.isLeft(outcome) ? outcome.left.message : "", "reached its limit of 1 model calls")
      const [request] = yield* Effect.flatMap(TestModel.TestModel, (t) => t.requests)
      assert.isTrue(systemOf(request!).startsWith("You review code.\n\n"))
      assert.include(systemOf(request!), "The working directory is /work.")
      assert.deepStrictEqual((request!.tools ?? []).map((t) => t.name), ["Read", "Grep"])
      assert.strictEqual(request!.model, "claude-haiku-4-5")
    }).pipe(Effect.provide(callServices({
      script: [TestModel.reply([TestModel.toolUse("Read", {}, "toolu_r")])],
      tools: parentTools
    }))))

  it.effect("model inherit (or none) runs on the parent's model; disallowedTools are left out; the description says so", () =>
    Effect.gen(function*() {
      const parent = yield* SessionState.SessionState
      yield* Ref.set(parent.model, "claude-opus-4-6")
      const agents = yield* definitions({ careful: { description: "Careful", prompt: "Be careful.", disallowedTools: ["Bash"], model: "inherit" } })
      const tool = Task.make({ agents })
      assert.include(tool.description, "- careful: Careful (Tools: all of yours except Task, AskUserQuestion, update_goal, StructuredOutput, Bash)")
      const outcome = yield* call(tool, { description: "Work", prompt: "work", subagent_type: "careful" })
      assert.deepStrictEqual(outcome, Either.right("done"))
      const [request] = yield* Effect.flatMap(TestModel.TestModel, (t) => t.requests)
      assert.strictEqual(request!.model, "claude-opus-4-6")
      assert.deepStrictEqual((request!.tools ?? []).map((t) => t.name), ["Read", "Glob", "Grep"])
      assert.deepStrictEqual(request!.messages.map(Message.toParam), [{ role: "user", content: "work" }])
    }).pipe(Effect.provide(callServices({ script: [TestModel.text("done")], tools: parentTools }))))

  it.effect("an unknown subagent_type is an error naming the available ones, custom included", () =>
    Effect.gen(function*() {
      const tool = Task.make({ agents: yield* definitions({ reviewer: { description: "R", prompt: "p" } }) })
      const outcome = yield* call(tool, { description: "x", prompt: "x", subagent_type: "nosuch" })
      assert.deepStrictEqual(
        Either.isLeft(outcome) ? outcome.left.message : "",
        "Agent type 'nosuch' not found. Available agents: general-purpose, Explore, reviewer"
      )
    }).pipe(Effect.provide(callServices({ tools: parentTools }))))
})

