/**
 * Custom agents at the CLI's edges: `--agents` and `--agent` are parsed and no longer refused; the
 * host's first-line `initialize` (read before the session is built) gives the session its `agents`; a later `initialize` cannot change the agents and is refused by name; the `initialize`
 * response lists the agent types; `query()` takes `agents` and `agent`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { parse } from "../src/Flags.js"
import * as InitializeAgents from "../src/host/InitializeAgents.js"
import * as Initialize from "../src/Initialize.js"
import * as Options from "../src/query/Options.js"

describe("--agents and --agent", () => {
  it("are parsed into the flags and run (no longer refused)", () => {
    const parsed = parse(["-p", "go", "--agents", "{\"r\":{\"description\":\"d\",\"prompt\":\"p\"}}", "--agent", "r"], "0.0.0")
    assert.strictEqual(parsed._tag, "Run")
    if (parsed._tag === "Run") {
      assert.strictEqual(parsed.flags.agents, "{\"r\":{\"description\":\"d\",\"prompt\":\"p\"}}")
      assert.strictEqual(parsed.flags.agent, "r")
    }
  })
})

describe("InitializeAgents", () => {
  it("an initialize's agents are run options; none, or empty ones, set nothing; --agents and initialize agents conflict", () => {
    const request = { subtype: "initialize", agents: { r: { description: "d", prompt: "p" } } }
    assert.deepStrictEqual(InitializeAgents.runOptions(request), {
      agents: { r: { description: "d", prompt: "p" } },
      agentsOrigin: "initialize agents"
    })
    assert.deepStrictEqual(InitializeAgents.runOptions(undefined), {})
    assert.deepStrictEqual(InitializeAgents.runOptions({ subtype: "initialize" }), {})
    assert.deepStrictEqual(InitializeAgents.runOptions({ subtype: "initialize", agents: {} }), {})
    assert.isUndefined(InitializeAgents.conflict(request, {}))
    assert.strictEqual(
      InitializeAgents.conflict(request, { agents: "{}" }),
      "--agents and the initialize request's agents both define agents; give them in one place"
    )
  })
})

describe("Initialize", () => {
  it("agents are honoured in the initialize read ahead; in any other they are refused by name", () => {
    const request = { subtype: "initialize", agents: { r: { description: "d", prompt: "p" } } }
    assert.deepStrictEqual(Initialize.unsupported(request, { first: true, agentsApplied: true }), [])
    assert.deepStrictEqual(Initialize.unsupported(request, { first: false }), ["agents (only in the first stdin line's initialize)"])
    assert.deepStrictEqual(Initialize.unsupported({ subtype: "initialize", agents: {} }, { first: false }), [])
  })

  it("the response lists the agent types given", () => {
    const init = {
      type: "system",
      subtype: "init",
      model: "claude-sonnet-4-6",
      output_style: "default",
      apiKeySource: "ANTHROPIC_API_KEY"
    } as unknown as Parameters<typeof Initialize.response>[0]
    const agents = [{ name: "general-purpose", description: "g" }, { name: "r", description: "R", model: "haiku" }]
    assert.deepStrictEqual(Initialize.response(init, [], agents).agents, agents)
  })
})

describe("query() options", () => {
  it.effect("agents and agent pass to the run, named as query() options in messages", () =>
    Effect.gen(function*() {
      const agents = { r: { description: "d", prompt: "p" } }
      const resolved = yield* Options.resolve({ agents, agent: "r" }, undefined, undefined)
      assert.strictEqual(resolved.runtime.agents, agents)
      assert.strictEqual(resolved.runtime.agent, "r")
      assert.strictEqual(resolved.runtime.agentsOrigin, "query() option agents")
      assert.strictEqual(resolved.runtime.agentOrigin, "query() option agent")
      const error = yield* Effect.flip(Options.resolve({ agent: 3 as unknown as string }, undefined, undefined))
      assert.strictEqual(error.message, "query(): agent must be a string")
    }))
})
