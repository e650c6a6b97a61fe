/**
 * Custom agents' definitions, read as Claude Code reads them: the Agent SDK's `AgentDefinition`
 * (`--agents` JSON, the SDK's `agents`) and Markdown agent files' frontmatter. What Keel honours
 * becomes the subagent type; what it cannot is refused by name; unknown keys are warned about.
 */
import { assert, describe, it } from "@effect/vitest"
import { AgentDefinition, AgentFiles } from "@keel/tools"
import { Effect, Either } from "effect"

const reviewer = {
  description: "Reviews code",
  prompt: "You review code.",
  tools: ["Read", "Grep"],
  disallowedTools: ["Bash"],
  model: "haiku",
  maxTurns: 7
}

const invalid = (either: Either.Either<unknown, AgentDefinition.InvalidAgents>): AgentDefinition.InvalidAgents => {
  if (Either.isRight(either)) assert.fail("expected the agents to be refused")
  return either.left
}

describe("AgentDefinition.readRecord", () => {
  it("reads each agent of --agents JSON into a subagent type: its description, prompt, tools, model and budget", () => {
    const read = Either.getOrThrow(AgentDefinition.readRecord(JSON.stringify({ reviewer }), "--agents"))
    assert.deepStrictEqual(read.warnings, [])
    const [definition] = read.definitions
    assert.strictEqual(definition!.agentType, "reviewer")
    assert.strictEqual(definition!.whenToUse, "Reviews code")
    assert.deepStrictEqual(definition!.tools, ["Read", "Grep"])
    assert.deepStrictEqual(definition!.disallowedTools, ["Bash"])
    assert.strictEqual(definition!.model, "haiku")
    assert.strictEqual(definition!.maxTurns, 7)
    assert.strictEqual(definition!.prompt, "You review code.")
    const system = definition!.systemPrompt("/work")
    assert.isTrue(system.startsWith("You review code.\n\n"))
    assert.include(system, "The working directory is /work.")
  })

  it("takes the SDK's record as a value too; tools [\"*\"] or none means all of the parent's", () => {
    const read = Either.getOrThrow(AgentDefinition.readRecord({
      star: { description: "d", prompt: "p", tools: ["*"] },
      none: { description: "d", prompt: "p" }
    }, "agents"))
    assert.deepStrictEqual(read.definitions.map((d) => [d.agentType, d.tools]), [["star", undefined], ["none", undefined]])
  })

  it("JSON that does not parse, or is not an object of agents, is refused saying so", () => {
    assert.include(invalid(AgentDefinition.readRecord("{bad", "--agents")).message, "invalid --agents: not JSON")
    assert.deepStrictEqual(invalid(AgentDefinition.readRecord("[1]", "--agents")).problems, ["not an object of agents by name"])
    assert.deepStrictEqual(invalid(AgentDefinition.readRecord({ a: "text" }, "agents")).problems, [
      "a: not an object with a description and a prompt"
    ])
  })

  it("every problem of every agent is listed, each naming its agent and key; nothing is half-applied", () => {
    const error = invalid(AgentDefinition.readRecord({
      ok: { description: "d", prompt: "p" },
      bad: { prompt: 3, tools: "Read", maxTurns: 0, model: "two words" }
    }, "--agents"))
    assert.deepStrictEqual(error.problems, [
      "bad: description is missing (a string)",
      "bad: prompt must be a string, got number",
      "bad: model must be one model name, got \"two words\"",
      "bad: tools must be a list of tool names",
      "bad: maxTurns must be a positive whole number, got 0"
    ])
    assert.strictEqual(error._tag, "InvalidAgents")
    assert.include(error.message, "Each agent is \"name\": {\"description\"")
  })

  it("keys Keel cannot honour are refused by name; their empty or false values and omitClaudeMd are accepted", () => {
    const error = invalid(AgentDefinition.readRecord({
      a: { ...reviewer, mcpServers: ["github"], skills: ["pdf"], memory: "project", background: true, effort: "high" }
    }, "--agents"))
    assert.deepStrictEqual(error.problems, [
      "a: Keel does not support mcpServers, skills, memory, effort, background: true in an agent (remove them to run the agent without)"
    ])
    const read = AgentDefinition.readRecord({
      a: { ...reviewer, mcpServers: [], skills: [], background: false, omitClaudeMd: true, initialPrompt: "" }
    }, "--agents")
    assert.isTrue(Either.isRight(read))
  })

  it("a tool rule with a pattern is refused in tools: Keel would otherwise offer the whole tool", () => {
    assert.deepStrictEqual(invalid(AgentDefinition.readRecord({ a: { ...reviewer, tools: ["Bash(git:*)", "Read"] } }, "--agents")).problems, [
      "a: tools names tool rules with patterns (Bash(git:*)), which Keel does not support in an agent; name whole tools and put patterns in permission rules"
    ])
  })

  it("unknown keys are ignored, as Claude Code ignores them, with a warning naming them", () => {
    const read = Either.getOrThrow(AgentDefinition.readRecord({ a: { ...reviewer, colour: "red", tool: ["Read"] } }, "--agents"))
    assert.deepStrictEqual(read.warnings, ["--agents: agent a: ignored \"colour\", \"tool\" (not an agent key Keel knows)"])
  })

  it("an empty name, or one with spaces, is refused", () => {
    assert.deepStrictEqual(invalid(AgentDefinition.readRecord({ "my agent": { description: "d", prompt: "p" } }, "x")).problems, [
      "my agent: the name \"my agent\" is empty or has spaces"
    ])
  })
})

describe("AgentFiles.parse", () => {
  const problems = (text: string) =>
    Effect.map(AgentFiles.parse(text), (parsed) => {
      if (Either.isRight(parsed)) assert.fail("expected problems")
      return parsed.left
    })

  it.effect("frontmatter name, description, comma-separated tools, model and maxTurns; the body is the prompt", () =>
    Effect.gen(function*() {
      const parsed = yield* AgentFiles.parse(
        "---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep\nmodel: haiku\nmaxTurns: \"5\"\ncolor: blue\n---\nYou review code.\n"
      )
      const { definition, warnings } = Either.getOrThrow(parsed)
      assert.deepStrictEqual(warnings, [])
      assert.strictEqual(definition.agentType, "reviewer")
      assert.deepStrictEqual(definition.tools, ["Read", "Grep"])
      assert.strictEqual(definition.model, "haiku")
      assert.strictEqual(definition.maxTurns, 5)
      assert.strictEqual(definition.prompt, "You review code.\n")
    }))

  it.effect("tools and disallowedTools as YAML lists; tools: \"*\" means all", () =>
    Effect.gen(function*() {
      const listed = Either.getOrThrow(
        yield* AgentFiles.parse("---\nname: a\ndescription: d\ntools:\n  - Read\n  - Glob\ndisallowedTools: [Bash]\n---\nbody")
      )
      assert.deepStrictEqual(listed.definition.tools, ["Read", "Glob"])
      assert.deepStrictEqual(listed.definition.disallowedTools, ["Bash"])
      const star = Either.getOrThrow(yield* AgentFiles.parse("---\nname: a\ndescription: d\ntools: \"*\"\n---\nbody"))
      assert.isUndefined(star.definition.tools)
    }))

  it.effect("a file without a name or a description, with broken YAML, or with a refused key says what is wrong", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* problems("just a body"), [
        "it has no name in its frontmatter (add name: and description: lines between --- lines at the top)"
      ])
      assert.deepStrictEqual(yield* problems("---\nname: a\n---\nbody"), ["agent a: description is missing (a string)"])
      assert.match((yield* problems("---\nname: a\ndescription: [unclosed\n---\nbody"))[0]!, /^it has frontmatter that is not valid YAML/)
      assert.deepStrictEqual(yield* problems("---\nname: a\ndescription: d\npermissionMode: plan\n---\nbody"), [
        "agent a: Keel does not support permissionMode in an agent (remove it to run the agent without)"
      ])
    }))

  it.effect("an unknown frontmatter key is ignored with a warning", () =>
    Effect.gen(function*() {
      const { warnings } = Either.getOrThrow(yield* AgentFiles.parse("---\nname: a\ndescription: d\nversion: 2\n---\nbody"))
      assert.deepStrictEqual(warnings, ["ignored \"version\" (not an agent key Keel knows)"])
    }))
})
