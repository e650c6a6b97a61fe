/**
 * Custom agents at the CLI's edges: `--agents` and `--agent` are parsed and no longer refused; the
 * host's first-line `initialize` is read ahead (its `agents` shape the session) and given back
 * whole; a later `initialize` cannot change the agents and is refused by name; the `initialize`
 * response lists the agent types; `query()` takes `agents` and `agent`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { parse } from "../src/Flags.js"
import * as InitializeAhead from "../src/host/InitializeAhead.js"
import * as Initialize from "../src/Initialize.js"
import * as Options from "../src/query/Options.js"

const collect = async (lines: AsyncIterable<string>): Promise<Array<string>> => {
  const out: Array<string> = []
  for await (const line of lines) out.push(line)
  return out
}

async function* from(lines: ReadonlyArray<string>) {
  yield* lines
}

const initialize = (agents: unknown) =>
  JSON.stringify({ type: "control_request", request_id: "init-1", request: { subtype: "initialize", agents } })

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

describe("InitializeAhead", () => {
  it("reads the first non-blank line; an initialize there is taken, and every line is given back in order", async () => {
    const lines = ["", initialize({ r: { description: "d", prompt: "p" } }), "{\"type\":\"user\"}"]
    const ahead = await InitializeAhead.read(from(lines))
    assert.strictEqual(ahead.initialize?.requestId, "init-1")
    assert.deepStrictEqual(InitializeAhead.runOptions(ahead), {
      agents: { r: { description: "d", prompt: "p" } },
      agentsOrigin: "initialize agents"
    })
    assert.deepStrictEqual(await collect(ahead.lines), lines)
  })

  it("ending the lines given back ends the input at once, even while a read waits (an interrupted reader stops reading)", async () => {
    let returned = 0
    const input: AsyncIterable<string> = {
      [Symbol.asyncIterator]: () => ({
        next: (() => {
          let first = true
          return () => first ? ((first = false), Promise.resolve({ done: false, value: initialize(undefined) })) : new Promise<never>(() => {})
        })(),
        return: () => {
          returned++
          return Promise.resolve({ done: true as const, value: undefined })
        }
      })
    }
    const ahead = await InitializeAhead.read(input)
    const iterator = ahead.lines[Symbol.asyncIterator]()
    assert.deepStrictEqual(await iterator.next(), { done: false, value: initialize(undefined) })
    void iterator.next()
    assert.deepStrictEqual(await iterator.return!(), { done: true, value: undefined })
    assert.strictEqual(returned, 1)
  })

  it("a first line that is not an initialize (or no line at all) takes nothing", async () => {
    const user = "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}"
    const ahead = await InitializeAhead.read(from([user, initialize({ r: {} })]))
    assert.isUndefined(ahead.initialize)
    assert.deepStrictEqual(InitializeAhead.runOptions(ahead), {})
    assert.deepStrictEqual(await collect(ahead.lines), [user, initialize({ r: {} })])
    const empty = await InitializeAhead.read(from([]))
    assert.isUndefined(empty.initialize)
    assert.deepStrictEqual(await collect(empty.lines), [])
    assert.isUndefined((await InitializeAhead.read(from(["not json"]))).initialize)
  })

  it("an initialize without agents (or with none) sets nothing; agents from both --agents and initialize conflict", async () => {
    assert.deepStrictEqual(InitializeAhead.runOptions(await InitializeAhead.read(from([initialize(undefined)]))), {})
    assert.deepStrictEqual(InitializeAhead.runOptions(await InitializeAhead.read(from([initialize({})]))), {})
    const ahead = await InitializeAhead.read(from([initialize({ r: { description: "d", prompt: "p" } })]))
    assert.isUndefined(InitializeAhead.conflict(ahead, {}))
    assert.strictEqual(
      InitializeAhead.conflict(ahead, { agents: "{}" }),
      "--agents and the initialize request's agents both define agents; give them in one place"
    )
  })
})

describe("Initialize", () => {
  it("agents are honoured in the initialize read ahead; in any other they are refused by name", () => {
    const request = { subtype: "initialize", agents: { r: { description: "d", prompt: "p" } } }
    assert.deepStrictEqual(Initialize.unsupported(request, { agentsApplied: true }), [])
    assert.deepStrictEqual(Initialize.unsupported(request), ["agents (only in the first stdin line's initialize)"])
    assert.deepStrictEqual(Initialize.unsupported({ subtype: "initialize", agents: {} }), [])
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
