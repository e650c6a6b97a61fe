/**
 * `@path` mentions in a session with the built-in tools, on real files: a text file arrives as
 * numbered lines after the prompt, an image as an image block, a missing file stays as text (with a
 * warning), a quoted path may hold spaces, and a mentioned file counts as read, so an Edit of it
 * works without a Read first.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import {
  BuiltinCommands,
  ContextAssembly,
  ContextManagement,
  Hooks,
  Ids,
  Invariants,
  Message,
  Permissions,
  Session,
  SessionStore,
  TestModel,
  ToolRegistry,
  ToolRuntime
} from "@keel/core"
import { Testing } from "@keel/core/testing"
import type { SdkMessage } from "@keel/core"
import { BuiltinTools, Read } from "@keel/tools"
import { Chunk, Effect, Layer, Ref, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/** A real 3×2 PNG. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAIAAAASFvFNAAAAFUlEQVR4nGM8ISfHwMDAwMDAxAADABMuAQhqwGVhAAAAAElFTkSuQmCC"

const project = () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "keel-mentions-")))
  fs.writeFileSync(path.join(dir, "README.md"), "# Demo\nIt counts sheep.\n")
  fs.writeFileSync(path.join(dir, "my notes.md"), "remember the milk\n")
  fs.writeFileSync(path.join(dir, "shot.png"), Buffer.from(PNG, "base64"))
  return dir
}

/**
 * A session's services over the built-in tools (or those in `only`): the scripted model, no context
 * stages or compaction, every call allowed, the short built-in prompt, nothing persisted, the
 * built-in commands, seeded ids.
 */
const layerFor = (script: ReadonlyArray<TestModel.ScriptItem>, only?: ReadonlyArray<string>) =>
  Layer.mergeAll(
    TestModel.layer(script),
    ContextManagement.layerNone,
    ToolRuntime.layer().pipe(
      Layer.provideMerge(BuiltinTools.layer(only)),
      Layer.provideMerge(Permissions.layerAllowAll)
    ),
    ContextAssembly.layerMinimal,
    SessionStore.layerNoop,
    BuiltinCommands.layer,
    Ids.layerSeeded(Testing.SEED),
    Hooks.layerNone
  ).pipe(Layer.provideMerge(NodeContext.layer))

const collect = (stream: Stream.Stream<SdkMessage.SdkMessage>) =>
  Stream.runCollect(stream).pipe(Effect.map(Chunk.toReadonlyArray))

const firstRequest = Effect.map(Effect.flatMap(TestModel.TestModel, (m) => m.requests), (rs) => rs[0]!)

const promptOf = (request: { readonly messages: ReadonlyArray<Message.Message> }) =>
  Message.toParam(request.messages[request.messages.length - 1]!).content as ReadonlyArray<any>

const reply = TestModel.text("Seen.", { model: "claude-sonnet-4-6" })

describe("@path mentions in a session", () => {
  it.scoped("a text file is attached after the prompt as the Read call and its numbered lines", () => {
    const dir = project()
    return Effect.gen(function*() {
      const session = yield* Session.make({ model: "claude-sonnet-4-6", cwd: dir })
      const messages = yield* collect(session.submit("summarise @README.md"))
      assert.deepStrictEqual(messages.map((m) => m.type), ["system", "assistant", "result"])
      assert.deepStrictEqual(promptOf(yield* firstRequest), [
        { type: "text", text: "summarise @README.md" },
        { type: "text", text: `Called the Read tool with the following input: {"file_path":"${dir}/README.md"}` },
        { type: "text", text: "Result of calling the Read tool:\n     1\t# Demo\n     2\tIt counts sheep." }
      ])
    }).pipe(Effect.provide(layerFor([reply])))
  })

  it.scoped("an image is attached as an image block", () => {
    const dir = project()
    return Effect.gen(function*() {
      const session = yield* Session.make({ model: "claude-sonnet-4-6", cwd: dir })
      yield* collect(session.submit("what is in @shot.png?"))
      const content = promptOf(yield* firstRequest)
      assert.strictEqual(content.length, 3)
      assert.deepStrictEqual(content[1], {
        type: "text",
        text: `Called the Read tool with the following input: {"file_path":"${dir}/shot.png"}`
      })
      assert.deepStrictEqual(content[2], { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } })
    }).pipe(Effect.provide(layerFor([reply])))
  })

  it.scoped("a missing file stays as text, with a warning; the prompt still goes to the model", () => {
    const dir = project()
    return Effect.gen(function*() {
      const session = yield* Session.make({ model: "claude-sonnet-4-6", cwd: dir })
      const messages = yield* collect(session.submit("read @missing.txt please"))
      const warning = messages[1] as SdkMessage.Informational
      assert.deepStrictEqual([warning.type, warning.subtype, warning.level], ["system", "informational", "warning"])
      assert.strictEqual(
        warning.content,
        `@missing.txt was not attached (File does not exist: ${dir}/missing.txt. The working directory is ${dir}.); it was sent as text.`
      )
      assert.strictEqual(Message.toParam((yield* firstRequest).messages[0]!).content, "read @missing.txt please")
      assert.strictEqual((messages.at(-1) as SdkMessage.Result).subtype, "success")
    }).pipe(Effect.provide(layerFor([reply])))
  })

  it.scoped("a quoted path may hold spaces", () => {
    const dir = project()
    return Effect.gen(function*() {
      const session = yield* Session.make({ model: "claude-sonnet-4-6", cwd: dir })
      yield* collect(session.submit("check @\"my notes.md\""))
      const content = promptOf(yield* firstRequest)
      assert.strictEqual(content[1].text, `Called the Read tool with the following input: {"file_path":"${dir}/my notes.md"}`)
      assert.strictEqual(content[2].text, "Result of calling the Read tool:\n     1\tremember the milk")
    }).pipe(Effect.provide(layerFor([reply])))
  })

  it.scoped("a mentioned file counts as read: the model's Edit of it works without a Read", () => {
    const dir = project()
    return Effect.gen(function*() {
      const session = yield* Session.make({ model: "claude-sonnet-4-6", cwd: dir })
      const messages = yield* collect(session.submit("in @README.md say goats"))
      assert.isTrue((yield* Ref.get((yield* session.state).fileState)).has(path.join(dir, "README.md")))
      const results = messages.filter((m): m is SdkMessage.User => m.type === "user")
      assert.deepStrictEqual(results[0]!.message.content, [{
        type: "tool_result",
        tool_use_id: "t-edit",
        content: `The file ${dir}/README.md has been updated.`
      }])
      assert.strictEqual(fs.readFileSync(path.join(dir, "README.md"), "utf8"), "# Demo\nIt counts goats.\n")
      assert.deepStrictEqual(Invariants.violations(yield* Ref.get((yield* session.state).messages)), [])
    }).pipe(Effect.provide(layerFor([
      TestModel.reply([
        TestModel.toolUse("Edit", {
          file_path: "README.md",
          old_string: "It counts sheep.",
          new_string: "It counts goats."
        }, "t-edit")
      ], { model: "claude-sonnet-4-6" }),
      reply
    ])))
  })

  it.scoped("files are attached by the mention reader even when the model is not offered Read", () => {
    const dir = project()
    return Effect.gen(function*() {
      const registry = yield* ToolRegistry.ToolRegistry
      assert.isUndefined(registry.get("Read"))
      const session = yield* Session.make({ model: "claude-sonnet-4-6", cwd: dir, mentionReader: yield* Read.make })
      yield* collect(session.submit("@README.md"))
      assert.strictEqual(promptOf(yield* firstRequest)[2].text, "Result of calling the Read tool:\n     1\t# Demo\n     2\tIt counts sheep.")
    }).pipe(Effect.provide(layerFor([reply], ["Grep"])))
  })
})
