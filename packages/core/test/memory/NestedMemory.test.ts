/**
 * Nested memory against real temporary folders: the instruction files of folders below the working
 * directory come once, when a Read/Edit/Write call first touches a file under them, each folder
 * from the cwd down (with imports); never for files in or outside the cwd, nor for other tools; a
 * file the session started with or its conversation was sent already (a resumed transcript) does
 * not come again. Then through a session: the blocks follow the round's tool results in the same
 * user message, once; a denied call brings none.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Message, NestedMemory, Permissions, Session, TestModel, Tool } from "@keel/core"
import { Effect, Layer, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { collect, layerFor, messagesOf } from "../support/Sessions.js"

const tempDir = (prefix: string): string => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))

const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

/** A project: memory at the cwd (importing docs/shared.md), in sub/ (importing it too, and docs/extra.md), sub/deeper/, other/. */
const project = () => {
  const cwd = tempDir("keel-nested-")
  write(path.join(cwd, "CLAUDE.md"), "cwd memory @docs/shared.md")
  write(path.join(cwd, "docs", "shared.md"), "shared doc")
  write(path.join(cwd, "docs", "extra.md"), "extra doc")
  write(path.join(cwd, "sub", "CLAUDE.md"), "sub memory @../docs/shared.md @../docs/extra.md")
  write(path.join(cwd, "sub", "CLAUDE.local.md"), "sub local memory")
  write(path.join(cwd, "sub", "deeper", "CLAUDE.md"), "deeper memory")
  write(path.join(cwd, "sub", "deeper", "file.txt"), "hello")
  write(path.join(cwd, "other", "AGENTS.md"), "other memory")
  return cwd
}

const use = (name: string, input: unknown, id = `t-${name}`) => new Message.ToolUseBlock({ id, name, input })

/** The files the blocks name, relative to `cwd`, in order. */
const named = (cwd: string, blocks: ReadonlyArray<Message.TextBlock>) =>
  NestedMemory.sentIn([new Message.UserMessage({ content: blocks })]).map((p) => path.relative(cwd, p))

describe("NestedMemory.attach", () => {
  it.effect("a first touch below the cwd brings each folder's files down to the file's, with imports, once", () =>
    Effect.gen(function*() {
      const cwd = project()
      const memory = yield* NestedMemory.make({})
      const attach = (calls: ReadonlyArray<Message.ToolUseBlock>, sessionId = "s1", history: ReadonlyArray<Message.Message> = []) =>
        memory.attach({ sessionId, cwd, calls, history: Effect.succeed(history) })

      // In the cwd, outside it, other tools: nothing.
      assert.deepStrictEqual(yield* attach([use("Read", { file_path: path.join(cwd, "CLAUDE.md") })]), [])
      assert.deepStrictEqual(yield* attach([use("Read", { file_path: path.join(path.dirname(cwd), "x.txt") })]), [])
      assert.deepStrictEqual(yield* attach([use("Grep", { pattern: "x", path: path.join(cwd, "sub") })]), [])
      assert.deepStrictEqual(yield* attach([use("Glob", { pattern: "*", path: path.join(cwd, "sub") })]), [])

      // A relative path, a file that does not exist yet: sub/, then sub/deeper/. docs/shared.md came at start.
      const first = yield* attach([use("Read", { file_path: "sub/deeper/missing.txt" })])
      assert.deepStrictEqual(named(cwd, first), ["sub/CLAUDE.md", "docs/extra.md", "sub/CLAUDE.local.md", "sub/deeper/CLAUDE.md"])
      assert.include(first[0]!.text, "sub memory @../docs/shared.md")
      assert.include(first[1]!.text, `imported by ${path.join(cwd, "sub", "CLAUDE.md")}`)
      assert.isTrue(first.every((b) => b.text.startsWith("<system-reminder>\n") && b.text.endsWith("\n</system-reminder>")))

      // Sent once: the same folders again, by Read, Edit or Write, bring nothing.
      assert.deepStrictEqual(yield* attach([use("Edit", { file_path: path.join(cwd, "sub", "deeper", "file.txt") })]), [])
      assert.deepStrictEqual(yield* attach([use("Read", { file_path: path.join(cwd, "sub", "a.txt") })]), [])
      // Another folder, by Write; AGENTS.md counts too.
      assert.deepStrictEqual(named(cwd, yield* attach([use("Write", { file_path: path.join(cwd, "other", "new.txt") })])), ["other/AGENTS.md"])

      // Another session has its own record.
      assert.deepStrictEqual(named(cwd, yield* attach([use("Read", { file_path: "other/x" })], "s2")), ["other/AGENTS.md"])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("what the conversation holds already (a resumed transcript) is not sent again", () =>
    Effect.gen(function*() {
      const cwd = project()
      const earlier = yield* Effect.flatMap(NestedMemory.make({}), (m) =>
        m.attach({ sessionId: "old", cwd, calls: [use("Read", { file_path: "sub/x" })], history: Effect.succeed([]) }))
      const history = [new Message.UserMessage({ content: "hi" }), new Message.UserMessage({ content: [...earlier] })]
      const memory = yield* NestedMemory.make({})
      const again = yield* memory.attach({
        sessionId: "resumed",
        cwd,
        calls: [use("Read", { file_path: "sub/deeper/file.txt" })],
        history: Effect.succeed(history)
      })
      assert.deepStrictEqual(named(cwd, again), ["sub/deeper/CLAUDE.md"])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.effect("a round's memory past its character budget is named, not sent", () =>
    Effect.gen(function*() {
      const cwd = tempDir("keel-nested-big-")
      write(path.join(cwd, "a", "CLAUDE.md"), "a".repeat(NestedMemory.MAX_ROUND_CHARS - 10))
      write(path.join(cwd, "a", "b", "CLAUDE.md"), "b".repeat(100))
      const memory = yield* NestedMemory.make({})
      const blocks = yield* memory.attach({ sessionId: "s", cwd, calls: [use("Read", { file_path: "a/b/c.txt" })], history: Effect.succeed([]) })
      assert.deepStrictEqual(named(cwd, blocks), ["a/CLAUDE.md", "a/b/CLAUDE.md"])
      assert.include(blocks[1]!.text, "not included")
      assert.notInclude(blocks[1]!.text, "bbb")
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("nested memory in a session", () => {
  /** A `Read` that reads the file for real, and a `Write` the default permissions deny. */
  const tools = [
    Tool.make({
      name: "Read",
      description: "Reads a file",
      input: Schema.Struct({ file_path: Schema.String }),
      isReadOnly: true,
      call: (input, context) =>
        Effect.try({
          try: () => fs.readFileSync(path.resolve(context.cwd, input.file_path), "utf8"),
          catch: () => new Tool.ToolError({ message: "no such file" })
        })
    }),
    Tool.make({
      name: "Write",
      description: "Writes a file",
      input: Schema.Struct({ file_path: Schema.String, content: Schema.String }),
      isReadOnly: false,
      call: () => Effect.succeed("written")
    })
  ]

  it.scoped("the blocks follow the round's tool results in its user message, once; a denied call brings none", () =>
    Effect.gen(function*() {
      const cwd = project()
      const context = yield* Layer.build(
        layerFor([
          TestModel.reply([TestModel.toolUse("Write", { file_path: "sub/new.txt", content: "x" }, "t1")]),
          TestModel.reply([TestModel.toolUse("Read", { file_path: "sub/deeper/file.txt" }, "t2")]),
          TestModel.reply([TestModel.toolUse("Read", { file_path: "sub/deeper/file.txt" }, "t3")]),
          TestModel.text("done")
        ], tools, { permissions: Permissions.layerDefault }).pipe(
          Layer.merge(NestedMemory.layer({}).pipe(Layer.provide(NodeContext.layer)))
        )
      )
      const session = yield* Effect.provide(Session.make({ model: "claude-test", cwd }), context)
      yield* collect(session.submit("go"))
      const messages = yield* messagesOf(session)
      const users = messages.flatMap((m) => m.role === "user" && typeof m.content !== "string" ? [m.content] : [])
      // The denied Write's round: its result only.
      assert.deepStrictEqual(users[0]!.map((b) => b.type), ["tool_result"])
      // The first Read's round: its result, then sub's and sub/deeper's memory, in order.
      const second = users[1]!
      assert.deepStrictEqual(second.map((b) => b.type), ["tool_result", "text", "text", "text", "text"])
      assert.deepStrictEqual(named(cwd, second.slice(1) as Array<Message.TextBlock>), [
        "sub/CLAUDE.md",
        "docs/extra.md",
        "sub/CLAUDE.local.md",
        "sub/deeper/CLAUDE.md"
      ])
      // The second Read of the same folder: its result only.
      assert.deepStrictEqual(users[2]!.map((b) => b.type), ["tool_result"])
      // And the model saw it in the next request.
      const sent = yield* Effect.flatMap(TestModel.TestModel, (m) => m.requests).pipe(Effect.provide(context))
      assert.strictEqual(sent.length, 4)
      assert.strictEqual(NestedMemory.sentIn(sent[1]!.messages).length, 0)
      assert.strictEqual(NestedMemory.sentIn(sent[2]!.messages).length, 4)
      assert.strictEqual(NestedMemory.sentIn(sent[3]!.messages).length, 4)
    }))
})
