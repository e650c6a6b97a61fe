/**
 * Prompt caching: where `PromptCaching.mark` puts its breakpoints, and, end to end through a
 * `Session` over `AnthropicModel` against the loopback fake of the Messages API, that the request
 * bodies of consecutive calls share their prefix byte for byte up to the last breakpoint of the
 * earlier one, while the transcript holds no `cache_control`.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import {
  AnthropicModel,
  BuiltinCommands,
  Compactor,
  ContextAssembly,
  Hooks,
  Ids,
  Message,
  ModelClient,
  type ModelRequest,
  Permissions,
  Pipeline,
  PromptCaching,
  Session,
  SessionStore,
  TestModel,
  ToolRegistry,
  ToolRuntime
} from "@keel/core"
import { Effect, Layer, Redacted, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { execFileSync } from "node:child_process"
import * as FakeAnthropic from "../../../test/support/FakeAnthropic.js"
import { messagesOf } from "./support/Sessions.js"
import { sleeper } from "./support/Tools.js"

const EPHEMERAL = { type: "ephemeral" } as const

const tool = (name: string): ModelRequest.ToolDefinition => ({
  name,
  description: `The ${name} tool`,
  input_schema: { type: "object", properties: {} }
})

const thinking = new Message.ThinkingBlock({ thinking: "hmm", signature: "sig" })

/** A request with two tools, a three-block system prompt (two stable blocks) and a tool round trip. */
const request: ModelRequest.ModelRequest = {
  model: "claude-test",
  max_tokens: 100,
  tools: [tool("A"), tool("B")],
  system: [{ type: "text", text: "base" }, { type: "text", text: "tools guide" }, { type: "text", text: "git: main" }],
  systemStableBlocks: 2,
  messages: [
    Message.user("hi"),
    new Message.AssistantMessage({ content: [Message.text("reading"), TestModel.toolUse("A", {}, "t1"), TestModel.toolUse("B", {}, "t2")] }),
    Message.user([
      new Message.ToolResultBlock({ tool_use_id: "t1", content: "one" }),
      new Message.ToolResultBlock({ tool_use_id: "t2", content: "two" })
    ])
  ],
  source: "foreground"
}

/** Every `cache_control` in a request as the API receives it, by place. */
const breakpoints = (r: ModelRequest.ModelRequest): Array<string> => {
  const out: Array<string> = []
  r.tools?.forEach((t, i) => t.cache_control !== undefined && out.push(`tools[${i}]`))
  if (typeof r.system !== "string") r.system?.forEach((b, i) => b.cache_control != null && out.push(`system[${i}]`))
  Message.toParams(r.messages).forEach((m, i) => {
    if (typeof m.content !== "string") {
      m.content.forEach((b, j) => "cache_control" in b && b.cache_control != null && out.push(`messages[${i}][${j}]`))
    }
  })
  return out
}

describe("PromptCaching.mark", () => {
  it("marks the last tool, the end of the system prompt's stable part and the last block of the last message", () => {
    const marked = PromptCaching.mark(request)
    assert.deepStrictEqual(breakpoints(marked), ["tools[1]", "system[1]", "messages[2][1]"])
    assert.deepStrictEqual(marked.tools![1]!.cache_control, EPHEMERAL)
    // The request it was given is unchanged (its messages are the transcript's).
    assert.deepStrictEqual(breakpoints(request), [])
    assert.strictEqual(request.messages[0]!.content, "hi")
    assert.notInclude(JSON.stringify(Message.toParams(request.messages)), "cache_control")
  })

  it("sends string content as the text block it stands for, marked or not, so a message's bytes do not depend on its place", () => {
    const first = PromptCaching.mark({ ...request, messages: [Message.user("hi")] })
    assert.deepStrictEqual(Message.toParams(first.messages), [{
      role: "user",
      content: [{ type: "text", text: "hi", cache_control: EPHEMERAL }]
    }])
    const later = PromptCaching.mark(request)
    assert.deepStrictEqual(Message.toParams(later.messages)[0], { role: "user", content: [{ type: "text", text: "hi" }] })
  })

  it("a string system prompt is all stable: one block, marked", () => {
    const { systemStableBlocks: _, ...rest } = request
    const marked = PromptCaching.mark({ ...rest, system: "You are a test." })
    assert.deepStrictEqual(marked.system, [{ type: "text", text: "You are a test.", cache_control: EPHEMERAL }])
  })

  it("background requests (compaction summaries) are left as they are", () => {
    const background = { ...request, source: "background" as const }
    assert.strictEqual(PromptCaching.mark(background), background)
  })

  it("never more than 4 breakpoints: those the request carries count; the tools' go first, then the system's", () => {
    const carried: ModelRequest.ModelRequest = {
      ...request,
      system: [{ type: "text", text: "a", cache_control: EPHEMERAL }, { type: "text", text: "b", cache_control: EPHEMERAL }],
      systemStableBlocks: 1,
      messages: [Message.user([new Message.TextBlock({ text: "doc", cache_control: EPHEMERAL })]), ...request.messages.slice(1)]
    }
    const marked = PromptCaching.mark(carried)
    assert.deepStrictEqual(breakpoints(marked), ["system[0]", "system[1]", "messages[0][0]", "messages[2][1]"])

    // One carried: room for all three.
    const one: ModelRequest.ModelRequest = { ...request, messages: carried.messages }
    assert.deepStrictEqual(breakpoints(PromptCaching.mark(one)), ["tools[1]", "system[1]", "messages[0][0]", "messages[2][1]"])
  })

  it("the tail mark skips blocks that cannot carry one (thinking, empty text)", () => {
    const prefill: ModelRequest.ModelRequest = {
      ...request,
      messages: [Message.user("hi"), new Message.AssistantMessage({ content: [Message.text("so"), Message.text(""), thinking] })]
    }
    assert.deepStrictEqual(breakpoints(PromptCaching.mark(prefill)), ["tools[1]", "system[1]", "messages[1][0]"])
  })

  it("marking is stable: the same message gets the same marked copy (its encoding is reused)", () => {
    const a = PromptCaching.mark(request)
    const b = PromptCaching.mark({ ...request, model: "other" })
    assert.strictEqual(a.messages.at(-1), b.messages.at(-1))
    assert.strictEqual(a.messages[0], b.messages[0])
  })

  it("a turn's requests share one marked copy of the tools and of the system prompt (their JSON is made once)", () => {
    const first = PromptCaching.mark(request)
    const next = PromptCaching.mark({ ...request, messages: [...request.messages, Message.user("more")] })
    assert.strictEqual(next.tools, first.tools)
    assert.strictEqual(next.system, first.system)
    // Another mark is another copy, and another prompt is another array.
    assert.notStrictEqual(PromptCaching.mark(request, { ttl: "1h" }).tools, first.tools)
    const asString = PromptCaching.mark({ ...request, system: "be brief" })
    assert.strictEqual(PromptCaching.mark({ ...request, system: "be brief" }).system, asString.system)
    assert.deepStrictEqual(PromptCaching.mark({ ...request, system: "be long" }).system, [
      { type: "text", text: "be long", cache_control: EPHEMERAL }
    ])
  })

  it("the marked copies are not validated again: marking does not walk a tool result's content", () => {
    // A tool result whose content counts the reads of its elements (validation walks them all).
    let reads = 0
    const items = [new Message.TextBlock({ text: "line 1" }), new Message.TextBlock({ text: "line 2" })]
    const counting = new Proxy(items, {
      get: (target, key, receiver) => {
        if (typeof key === "string" && /^\d+$/.test(key)) reads++
        return Reflect.get(target, key, receiver)
      }
    })
    const result = new Message.ToolResultBlock({ tool_use_id: "t1", content: counting, toolUseResult: { n: 2 } }, true)
    const tail = new Message.UserMessage({ content: [result] }, true)
    const marked = PromptCaching.mark({ ...request, messages: [...request.messages.slice(0, 2), tail] })
    assert.strictEqual(reads, 0)
    const copy = (marked.messages.at(-1) as Message.UserMessage).content[0] as Message.ToolResultBlock
    assert.instanceOf(copy, Message.ToolResultBlock)
    assert.deepStrictEqual(copy.cache_control, EPHEMERAL)
    assert.strictEqual(copy.content, counting)
    assert.deepStrictEqual(copy.toolUseResult, { n: 2 })
    assert.strictEqual(result.cache_control, undefined)
  })

  it("options: a 1-hour TTL, and each breakpoint can be turned off", () => {
    const hour = PromptCaching.mark(request, { ttl: "1h" })
    assert.deepStrictEqual(hour.tools![1]!.cache_control, { type: "ephemeral", ttl: "1h" })
    assert.deepStrictEqual(breakpoints(PromptCaching.mark(request, { tools: false, tail: false })), ["system[1]"])
    assert.deepStrictEqual(breakpoints(PromptCaching.mark(request, { system: false })), ["tools[1]", "messages[2][1]"])
  })

  it.effect("the layer marks what the client below receives", () =>
    Effect.gen(function*() {
      const client = yield* ModelClient.ModelClient
      yield* Stream.runDrain(client.stream(request))
      const [seen] = yield* (yield* TestModel.TestModel).requests
      assert.deepStrictEqual(breakpoints(seen!), ["tools[1]", "system[1]", "messages[2][1]"])
    }).pipe(Effect.provide(PromptCaching.layer().pipe(Layer.provideMerge(TestModel.layer([TestModel.text("ok")]))))))
})

describe("prompt caching in a session, against the fake Messages API", () => {
  const MARK = `"cache_control":{"type":"ephemeral"}`

  const repository = () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "keel-cache-")))
    const git = (...args: Array<string>) =>
      execFileSync("git", args, { cwd: dir, env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" } })
    git("init", "-q", "-b", "main")
    git("config", "user.name", "Keel Tester")
    git("config", "user.email", "tester@example.com")
    fs.writeFileSync(path.join(dir, "AGENTS.md"), "Be careful.\n")
    git("add", "AGENTS.md")
    git("commit", "-q", "-m", "start")
    return dir
  }

  /**
   * What a session needs besides the model: no context stages and no compaction, `Sleep` with every
   * call allowed, the assembled prompt, nothing persisted.
   */
  const services = Layer.mergeAll(
    Pipeline.layerEmpty,
    Compactor.layerNone,
    ToolRuntime.layer().pipe(
      Layer.provideMerge(ToolRegistry.layer([sleeper])),
      Layer.provideMerge(Permissions.layerAllowAll)
    ),
    ContextAssembly.layer({}).pipe(Layer.provide(NodeContext.layer)),
    SessionStore.layerNoop,
    BuiltinCommands.layer,
    Ids.layerSeeded(1),
    Hooks.layerNone
  )

  const kernel = (url: string) =>
    Layer.mergeAll(
      PromptCaching.layer().pipe(Layer.provide(AnthropicModel.layer({ apiKey: Redacted.make("test-key"), baseURL: url }))),
      services
    )

  it.scopedLive("two turns of one session: each request's body up to its last breakpoint is a byte prefix of the next one's", () =>
    Effect.gen(function*() {
      const cwd = repository()
      const fake = yield* FakeAnthropic.scoped([
        FakeAnthropic.textReply("first answer"),
        FakeAnthropic.toolUseReply([{ name: "Sleep", input: { ms: 0 }, id: "toolu_sleep" }]),
        FakeAnthropic.textReply("rested")
      ])
      const session = yield* Session.make({ model: "claude-test", cwd }).pipe(Effect.provide(kernel(fake.url)))
      yield* Stream.runDrain(session.submit("one"))
      // Files change between the turns: the session's prompt does not.
      fs.writeFileSync(path.join(cwd, "AGENTS.md"), "Changed.\n")
      fs.writeFileSync(path.join(cwd, "new.txt"), "x")
      yield* Stream.runDrain(session.submit("two"))

      const raws = fake.requests.map((r) => r.raw)
      const bodies = fake.requests.map((r) => r.body)
      assert.strictEqual(raws.length, 3)
      for (let k = 0; k + 1 < raws.length; k++) {
        const last = raws[k]!.lastIndexOf(`,${MARK}`)
        assert.isAbove(last, 0)
        const prefix = raws[k]!.slice(0, last)
        assert.isTrue(raws[k + 1]!.startsWith(prefix), `request ${k + 2} does not start with request ${k + 1}'s cached prefix`)
        // The prefix holds all of the earlier request but its breakpoint marker and closing brackets.
        assert.isAbove(prefix.length, raws[k]!.length - 60)
      }

      for (const body of bodies) {
        // Keys in the API's cache-prefix order; three breakpoints, exactly where intended.
        assert.deepStrictEqual(Object.keys(body), ["model", "max_tokens", "tools", "system", "messages", "stream"])
        assert.strictEqual(JSON.stringify(body).split(MARK).length - 1, 3)
        assert.deepStrictEqual(body.tools.at(-1).cache_control, EPHEMERAL)
        assert.strictEqual(body.system[0].text, ContextAssembly.BASE_INSTRUCTIONS)
        assert.deepStrictEqual(body.system[0].cache_control, EPHEMERAL)
        for (const block of body.system.slice(1)) assert.isUndefined(block.cache_control)
        assert.deepStrictEqual(body.messages.at(-1).content.at(-1).cache_control, EPHEMERAL)
      }
      // The session's own part comes after the stable breakpoint, and stays as it was at the first turn.
      assert.include(bodies[2].system[1].text, "Be careful.")
      assert.notInclude(JSON.stringify(bodies[2].system), "new.txt")
      assert.deepStrictEqual(bodies[2].messages[0].content, [{ type: "text", text: "one" }])

      // The transcript never holds a breakpoint; its prompts are as submitted.
      const transcript = yield* messagesOf(session)
      assert.strictEqual(transcript.length, 6)
      assert.strictEqual(transcript[0]!.content, "one")
      assert.notInclude(JSON.stringify(Message.toParams(transcript)), "cache_control")
    }))

  it.scopedLive("without the layer no request carries a breakpoint", () =>
    Effect.gen(function*() {
      const fake = yield* FakeAnthropic.scoped([FakeAnthropic.textReply("ok")])
      const layer = Layer.mergeAll(
        AnthropicModel.layer({ apiKey: Redacted.make("test-key"), baseURL: fake.url }),
        services
      )
      const session = yield* Session.make({ model: "claude-test", cwd: repository() }).pipe(Effect.provide(layer))
      yield* Stream.runDrain(session.submit("one"))
      assert.notInclude(fake.requests[0]!.raw, "cache_control")
      assert.deepStrictEqual(fake.requests[0]!.body.messages, [{ role: "user", content: "one" }])
    }))
})
