/**
 * The `Commands` service as an embedder extends it: a command of its own that replies, one that
 * turns into a model turn, one that replaces a built-in; and the rule that Markdown files never
 * replace the built-ins that control the session.
 */
import { assert, describe, it } from "@effect/vitest"
import { BuiltinCommands, Commands, Message, Session, TestModel } from "@keel/core"
import { Testing } from "@keel/core/testing"
import { Effect, Layer, Ref } from "effect"
import { collect, kinds, resultOf } from "./support/Sessions.js"

const hello = Commands.reply("hello", "Greet someone", (args) => Effect.succeed(`Hello, ${args || "world"}!`))

/** `/explain <topic>`: a model turn with a prompt the embedder writes, on a model of its own. */
const explain: Commands.Command = {
  name: "explain",
  description: "Explain a topic to a newcomer",
  argumentHint: "<topic>",
  source: "embedder",
  run: (args) =>
    Effect.succeed(Commands.CommandResult.Prompt({
      prompt: Message.user(`Explain ${args} to someone new to the code base, in three sentences.`),
      model: "claude-haiku-4-5"
    }))
}

/** An embedder's `/cost`: it replaces the built-in. */
const cost = Commands.reply("cost", "What this costs, the embedder's way", (_, context) =>
  Effect.map(Ref.get(context.state.usage), (usage) => `${usage.size} models used`))

/** The testing layer with the built-in commands and the embedder's. */
const withCommands = (script: ReadonlyArray<TestModel.ScriptItem>) =>
  Testing.layer(script, {
    commands: Commands.layerAppend([hello, explain, cost]).pipe(Layer.provide(BuiltinCommands.layer))
  })

const options = { model: "claude-sonnet-4-6", cwd: "/work" } as const

describe("Commands, as an embedder extends them", () => {
  it.scoped("an embedder's command replies without a model call; init and /help list it", () =>
    Effect.gen(function*() {
      const session = yield* Session.make(options)
      const messages = yield* collect(session.submit("/hello Ada"))
      assert.deepStrictEqual(kinds(messages), ["system/init", "system/local_command_output", "result"])
      assert.strictEqual(resultOf(messages).result, "Hello, Ada!")
      assert.includeMembers([...(yield* session.init).slash_commands], ["hello", "explain", "compact", "clear"])
      const help = resultOf(yield* collect(session.submit("/help"))).result!
      assert.match(help, /\/explain <topic>\s+Explain a topic to a newcomer/)
      assert.match(help, /\/hello\s+Greet someone/)
      assert.strictEqual((yield* (yield* TestModel.TestModel).requests).length, 0)
    }).pipe(Effect.provide(withCommands([]))))

  it.scoped("a command that answers with a prompt runs a model turn with it, on its model for that turn only", () =>
    Effect.gen(function*() {
      const session = yield* Session.make(options)
      const first = yield* collect(session.submit("/explain the turn loop"))
      assert.strictEqual(resultOf(first).result, "It loops.")
      yield* collect(session.submit("thanks"))
      const requests = yield* (yield* TestModel.TestModel).requests
      assert.deepStrictEqual(requests.map((r) => r.model), ["claude-haiku-4-5", "claude-sonnet-4-6"])
      assert.strictEqual(
        (requests[0]!.messages[0] as Message.UserMessage).content,
        "Explain the turn loop to someone new to the code base, in three sentences."
      )
    }).pipe(Effect.provide(withCommands([
      TestModel.text("It loops.", { model: "claude-haiku-4-5" }),
      TestModel.text("You're welcome.", { model: "claude-sonnet-4-6" })
    ]))))

  it.scoped("an embedder's command replaces the built-in of its name", () =>
    Effect.gen(function*() {
      const session = yield* Session.make(options)
      assert.strictEqual(resultOf(yield* collect(session.submit("/cost"))).result, "0 models used")
    }).pipe(Effect.provide(withCommands([]))))

  it("a project's or user's Markdown command never replaces a built-in that controls the session; others it may", () => {
    const markdown = (name: string, source: "project" | "user"): Commands.Command => ({
      name,
      description: `${source}'s ${name}`,
      source,
      run: () => Effect.succeed(Commands.CommandResult.Reply({ text: name, isError: false }))
    })
    const service = Commands.make(
      BuiltinCommands.all,
      [markdown("clear", "project"), markdown("cost", "user"), markdown("review", "project")],
      [markdown("review", "user")]
    )
    assert.strictEqual(service.find("clear")!.source, "builtin")
    assert.strictEqual(service.find("cost")!.source, "builtin")
    assert.strictEqual(service.find("review")!.description, "user's review")
    assert.deepStrictEqual(service.commands.map((c) => c.name), [...BuiltinCommands.all.map((c) => c.name), "review"])
    assert.deepStrictEqual([...Commands.PROTECTED].sort(), ["clear", "compact", "context", "cost", "goal", "help", "model"])
  })
})
