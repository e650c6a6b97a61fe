/**
 * Slash commands answered by the session without calling the model: `/cost`, `/context`,
 * `/model [name]`, `/help`, and unknown commands (an error, nothing sent to the model).
 */
import { assert, describe, it } from "@effect/vitest"
import { BuiltinCommands, ContextUsage, Message, Session, SlashCommand, TestModel, ToolRegistry } from "@keel/core"
import type { SdkMessage } from "@keel/core"
import { Effect, Ref, Stream, TestClock } from "effect"
import { collect, kinds, layerFor, messagesOf, resultOf } from "./support/Sessions.js"

const requests = Effect.flatMap(TestModel.TestModel, (m) => m.requests)

const options = { model: "claude-sonnet-4-6", cwd: "/work", systemPrompt: "You are a test." } as const

/** The model's answer, priced (Sonnet), so no warning about an unknown model comes with it. */
const priced = (text: string, usage = { input_tokens: 1_000, output_tokens: 100 }) =>
  TestModel.text(text, { model: "claude-sonnet-4-6", usage })

describe("SlashCommand.parse", () => {
  it("reads /name and its arguments; a first word with a slash in it, or text before the slash, is a prompt", () => {
    assert.deepStrictEqual(SlashCommand.parse("/cost"), { name: "cost", args: "" })
    assert.deepStrictEqual(SlashCommand.parse("  /compact keep the API notes \n"), { name: "compact", args: "keep the API notes" })
    assert.deepStrictEqual(SlashCommand.parse("/model\topus"), { name: "model", args: "opus" })
    assert.deepStrictEqual(SlashCommand.parse("/frobnicate now"), { name: "frobnicate", args: "now" })
    assert.strictEqual(SlashCommand.parse("/usr/bin/env is broken"), undefined)
    assert.strictEqual(SlashCommand.parse("/"), undefined)
    assert.strictEqual(SlashCommand.parse("/ cost"), undefined)
    assert.strictEqual(SlashCommand.parse("what does /cost print?"), undefined)
  })
})

describe("slash commands", () => {
  it.scoped("init lists the commands; /help describes each and @path; the model is not called", () =>
    Effect.gen(function*() {
      const session = yield* Session.make(options)
      const init = yield* session.init
      assert.deepStrictEqual(init.slash_commands, BuiltinCommands.all.map((c) => c.name))
      for (const name of ["compact", "context", "cost", "model", "help"]) assert.include(init.slash_commands, name)
      const messages = yield* collect(session.submit("/help"))
      assert.deepStrictEqual(kinds(messages), ["system/init", "system/local_command_output", "result"])
      const output = messages[1] as SdkMessage.LocalCommandOutput
      for (const command of BuiltinCommands.all) assert.include(output.content, `/${command.name}`)
      assert.include(output.content, "/compact [instructions]")
      assert.include(output.content, "@\"path with spaces\"")
      const result = resultOf(messages)
      assert.deepStrictEqual([result.subtype, result.is_error, result.num_turns, result.terminal_reason], [
        "success",
        false,
        0,
        "completed"
      ])
      assert.strictEqual(result.result, output.content)
      assert.deepStrictEqual(yield* requests, [])
      assert.deepStrictEqual(yield* messagesOf(session), [])
    }).pipe(Effect.provide(layerFor([]))))

  it.scoped("/cost shows the total, API and wall time, and each model's tokens and cost", () =>
    Effect.gen(function*() {
      const session = yield* Session.make(options)
      yield* TestClock.adjust("2 seconds")
      yield* collect(session.submit("hello"))
      yield* TestClock.adjust("61 seconds")
      const messages = yield* collect(session.submit("/cost"))
      assert.deepStrictEqual(kinds(messages), ["system/local_command_output", "result"])
      const text = resultOf(messages).result!
      // Sonnet: 1,000 × $3 + 100 × $15 per million = $0.0045.
      assert.include(text, "Total cost:            $0.0045")
      assert.include(text, "Total duration (wall): 1m 3.0s")
      assert.include(text, "Total duration (API):  0.0s")
      assert.include(text, "claude-sonnet-4-6: 1,000 input, 100 output, 0 cache read, 0 cache write (5m 0, 1h 0) ($0.0045)")
      assert.closeTo(resultOf(messages).total_cost_usd, 0.0045, 1e-12)
      assert.strictEqual((yield* requests).length, 1)
    }).pipe(Effect.provide(layerFor([priced("Hi.")]))))

  it.scoped("/cost before any model call says so", () =>
    Effect.gen(function*() {
      const session = yield* Session.make(options)
      const text = resultOf(yield* collect(session.submit("/cost"))).result!
      assert.include(text, "Total cost:            $0.0000")
      assert.include(text, "no model calls yet")
    }).pipe(Effect.provide(layerFor([]))))

  it.scoped("/context splits the window into system prompt, tools, messages and free space", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry.ToolRegistry
      const session = yield* Session.make(options)
      const before = resultOf(yield* collect(session.submit("/context"))).result!
      const system = ContextUsage.ofSystem("You are a test.")
      const tools = ContextUsage.ofTools(registry.definitions)
      assert.isAbove(tools, 10)
      assert.include(before, `claude-sonnet-4-6 · ${system + tools} / 200,000 tokens`)
      assert.match(before, new RegExp(`System prompt: +${system} tokens`))
      assert.match(before, new RegExp(`Tools: +${tools} tokens`))
      assert.match(before, /Messages: +0 tokens \(0\.0%\)/)
      assert.match(before, new RegExp(`Free space: +${(200_000 - system - tools).toLocaleString("en-US")} tokens`))

      // After a turn the API's count (input 1,000 + output 100) is the total; messages are the rest.
      yield* collect(session.submit("hello"))
      const after = resultOf(yield* collect(session.submit("/context"))).result!
      assert.include(after, "1,100 / 200,000 tokens")
      assert.match(after, new RegExp(`Messages: +${(1_100 - system - tools).toLocaleString("en-US")} tokens`))
      assert.match(after, /Free space: +198,900 tokens/)
      assert.strictEqual((yield* requests).length, 1)
    }).pipe(Effect.provide(layerFor([priced("Hi.")]))))

  it.scoped("/model shows the model; /model <name> switches later turns (aliases, default); the model is not called", () =>
    Effect.gen(function*() {
      const session = yield* Session.make(options)
      const shown = resultOf(yield* collect(session.submit("/model"))).result!
      assert.include(shown, "Current model: claude-sonnet-4-6")
      assert.include(shown, "haiku (claude-haiku-4-5)")

      const set = yield* collect(session.submit("/model haiku"))
      assert.strictEqual(resultOf(set).result, "Set model to claude-haiku-4-5")
      assert.strictEqual(yield* session.model, "claude-haiku-4-5")
      assert.deepStrictEqual(yield* requests, [])

      yield* collect(session.submit("which model are you?"))
      assert.strictEqual((yield* requests)[0]!.model, "claude-haiku-4-5")
      // The turn loop's per-call model (what subagents inherit) follows.
      assert.strictEqual(yield* Ref.get((yield* session.state).model), "claude-haiku-4-5")

      const custom = resultOf(yield* collect(session.submit("/model my-proxy-model"))).result!
      assert.include(custom, "Set model to my-proxy-model (no price is known for it")
      yield* collect(session.submit("/model default"))
      yield* collect(session.submit("and now?"))
      assert.strictEqual((yield* requests)[1]!.model, "claude-sonnet-4-6")

      const bad = resultOf(yield* collect(session.submit("/model two words")))
      assert.strictEqual(bad.is_error, true)
      assert.include(bad.result!, "/model takes one model name")
      assert.strictEqual(yield* session.model, "claude-sonnet-4-6")
    }).pipe(Effect.provide(layerFor([
      TestModel.text("Haiku.", { model: "claude-haiku-4-5" }),
      priced("Sonnet.")
    ]))))

  it.scoped("an unknown command is an error naming the commands, and nothing is sent to the model", () =>
    Effect.gen(function*() {
      const session = yield* Session.make(options)
      const messages = yield* collect(session.submit("/frobnicate the widgets"))
      assert.deepStrictEqual(kinds(messages), ["system/init", "result"])
      const result = resultOf(messages)
      assert.strictEqual(result.subtype, "error_during_execution")
      assert.strictEqual(result.is_error, true)
      assert.strictEqual(result.num_turns, 0)
      assert.include(result.errors![0]!, "Unknown command: /frobnicate.")
      assert.include(result.errors![0]!, "/compact, /clear, /context, /cost, /model, /goal, /init, /help")
      assert.include(result.errors![0]!, "Nothing was sent to the model")
      assert.deepStrictEqual(yield* requests, [])
      assert.deepStrictEqual(yield* messagesOf(session), [])

      // A prompt whose first word is a path is not a command: it goes to the model.
      yield* collect(session.submit("/usr/bin/env is missing, why?"))
      const sent = yield* requests
      assert.strictEqual(sent.length, 1)
      assert.strictEqual(Message.toParam(sent[0]!.messages[0]!).content, "/usr/bin/env is missing, why?")
    }).pipe(Effect.provide(layerFor([priced("Because.")]))))

  it.scoped("commands wait for the running turn, like any submit", () =>
    Effect.gen(function*() {
      const session = yield* Session.make(options)
      const order: Array<string> = []
      const track = (tag: string) => (s: Stream.Stream<SdkMessage.SdkMessage>) =>
        Stream.runForEach(s, (m) => Effect.sync(() => order.push(`${tag}:${m.type}`)))
      const turn = yield* Effect.fork(track("turn")(session.submit("sleep")))
      yield* Effect.yieldNow()
      const cost = yield* Effect.fork(track("cost")(session.submit("/cost")))
      yield* TestClock.adjust("1 second")
      yield* Effect.all([turn.await, cost.await])
      assert.deepStrictEqual(order.slice(-2), ["cost:system", "cost:result"])
      assert.strictEqual(order.indexOf("turn:result") < order.indexOf("cost:system"), true)
    }).pipe(Effect.provide(layerFor([
      TestModel.reply([TestModel.toolUse("Sleep", { ms: 500 }, "t1")], { model: "claude-sonnet-4-6" }),
      priced("Rested.")
    ]))))
})
