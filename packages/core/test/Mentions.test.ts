/**
 * `@path` mentions, without a file system: which text is a mention, how paths resolve, and how a
 * prompt's mentions become attachments (a reader stands in for the Read tool).
 */
import { assert, describe, it } from "@effect/vitest"
import { Ids, Mentions, Message, PermissionRule, Permissions, SessionState, Tool } from "@keel/core"
import { Testing } from "@keel/core/testing"
import { Effect, Layer } from "effect"
import * as os from "node:os"

/** A reader over an in-memory folder: text as numbered lines, like Read. */
const readerOf = (files: Record<string, string>, log: Array<Mentions.ReadInput> = []): Mentions.Reader => (input) => {
  log.push(input)
  const text = files[input.file_path]
  if (text === undefined) return Tool.fail(`File does not exist: ${input.file_path}.`)
  const lines = text.split("\n").map((l, i) => `${String(i + 1).padStart(6)}\t${l}`)
  const from = (input.offset ?? 1) - 1
  return Effect.succeed(lines.slice(from, input.limit === undefined ? undefined : from + input.limit).join("\n"))
}

/**
 * The services of a tool call (`expand` runs the reader as the session's turn would): the testing
 * layer's and a session state. The in-memory reader uses none of them.
 */
const toolServices = Layer.merge(Testing.layer([]), Layer.effect(SessionState.SessionState, SessionState.make("test")))

const textsOf = (message: Message.UserMessage): Array<string> =>
  typeof message.content === "string"
    ? [message.content]
    : message.content.map((b) => (b instanceof Message.TextBlock ? b.text : b.type))

describe("Mentions.find", () => {
  it("finds @path at the start or after whitespace: plain, quoted, with a line range", () => {
    const found = Mentions.find("@README.md then @\"my notes.md\" and @src/a.ts#L3-5, @\"b c.ts\"#L7 also @x.ts#L2")
    assert.deepStrictEqual(found.map((m) => [m.text, m.path, m.lines, m.quoted]), [
      ["@README.md", "README.md", undefined, false],
      ["@\"my notes.md\"", "my notes.md", undefined, true],
      ["@src/a.ts#L3-5,", "src/a.ts#L3-5,", undefined, false],
      ["@\"b c.ts\"#L7", "b c.ts", { from: 7, to: 7 }, true],
      ["@x.ts#L2", "x.ts", { from: 2, to: 2 }, false]
    ])
    assert.deepStrictEqual(Mentions.find("@src/a.ts#L3-5"), [{
      text: "@src/a.ts#L3-5",
      path: "src/a.ts",
      lines: { from: 3, to: 5 },
      quoted: false
    }])
  })

  it("an @ inside a word (an e-mail address) or alone is no mention", () => {
    assert.deepStrictEqual(Mentions.find("mail me@example.com or (@scope) or @ alone"), [])
  })

  it("resolves paths against the working directory, absolute as they are, ~/ under the home folder", () => {
    assert.strictEqual(Mentions.resolve("/work", "src/a.ts"), "/work/src/a.ts")
    assert.strictEqual(Mentions.resolve("/work", "../b.ts"), "/b.ts")
    assert.strictEqual(Mentions.resolve("/work", "/etc/hosts"), "/etc/hosts")
    assert.strictEqual(Mentions.resolve("/work", "~/notes.md"), `${os.homedir()}/notes.md`)
  })
})

describe("Mentions.expand", () => {
  const files = {
    "/work/README.md": "# Demo\nIt counts sheep.",
    "/work/my notes.md": "remember the milk",
    "/work/src/a.ts": "one\ntwo\nthree\nfour"
  }

  it.effect("attaches each file after the prompt: the Read call, then its result", () =>
    Effect.gen(function*() {
      const prompt = "compare @README.md and @\"my notes.md\""
      const expanded = yield* Mentions.expand(prompt, { cwd: "/work", read: readerOf(files) })
      assert.deepStrictEqual(expanded.attached, ["/work/README.md", "/work/my notes.md"])
      assert.deepStrictEqual(expanded.skipped, [])
      assert.deepStrictEqual(textsOf(expanded.message), [
        prompt,
        "Called the Read tool with the following input: {\"file_path\":\"/work/README.md\"}",
        "Result of calling the Read tool:\n     1\t# Demo\n     2\tIt counts sheep.",
        "Called the Read tool with the following input: {\"file_path\":\"/work/my notes.md\"}",
        "Result of calling the Read tool:\n     1\tremember the milk"
      ])
    }).pipe(Effect.provide(toolServices)))

  it.effect("a line range reads those lines; trailing punctuation is dropped when the file needs it; a file twice is attached once", () =>
    Effect.gen(function*() {
      const log: Array<Mentions.ReadInput> = []
      const expanded = yield* Mentions.expand("see @src/a.ts#L2-3. Also @README.md, and @README.md again", {
        cwd: "/work",
        read: readerOf(files, log)
      })
      assert.deepStrictEqual(expanded.attached, ["/work/src/a.ts", "/work/README.md"])
      assert.deepStrictEqual(log[0], { file_path: "/work/src/a.ts#L2-3." })
      assert.deepStrictEqual(log[1], { file_path: "/work/src/a.ts", offset: 2, limit: 2 })
      assert.deepStrictEqual(textsOf(expanded.message)[2], "Result of calling the Read tool:\n     2\ttwo\n     3\tthree")
      assert.strictEqual(textsOf(expanded.message).length, 5)
    }).pipe(Effect.provide(toolServices)))

  it.effect("a mention of no file stays as text, with the reason; without any attachment the prompt is unchanged", () =>
    Effect.gen(function*() {
      const expanded = yield* Mentions.expand("ask @alice about @missing.txt", { cwd: "/work", read: readerOf(files) })
      assert.strictEqual(expanded.message.content, "ask @alice about @missing.txt")
      assert.deepStrictEqual(expanded.attached, [])
      assert.deepStrictEqual(expanded.skipped, [
        { mention: "@alice", reason: "File does not exist: /work/alice." },
        { mention: "@missing.txt", reason: "File does not exist: /work/missing.txt." }
      ])
    }).pipe(Effect.provide(toolServices)))

  it.effect("a deny rule for Read stops the attachment (a rule that would ask does not)", () =>
    Effect.gen(function*() {
      const config = Permissions.config({ deny: ["Read(./README.md)"], ask: ["Read(./src/**)"] }).config
      const log: Array<Mentions.ReadInput> = []
      const expanded = yield* Mentions.expand("@README.md @src/a.ts", {
        cwd: "/work",
        read: readerOf(files, log),
        denied: Mentions.denyRules(config, "/work")
      })
      assert.deepStrictEqual(expanded.attached, ["/work/src/a.ts"])
      assert.deepStrictEqual(expanded.skipped, [{
        mention: "@README.md",
        reason: `the permission rule ${PermissionRule.format(config.deny[0]!)} denies reading it`
      }])
      assert.deepStrictEqual(log.map((i) => i.file_path), ["/work/src/a.ts"])
    }).pipe(Effect.provide(toolServices)))

  it.effect("without a Read tool every mention stays as text", () =>
    Effect.gen(function*() {
      const expanded = yield* Mentions.expand("@README.md", {
        cwd: "/work",
        read: Mentions.toolReader(undefined, "/work", Ids.seeded(1).uuid)
      })
      assert.strictEqual(expanded.message.content, "@README.md")
      assert.deepStrictEqual(expanded.skipped, [{ mention: "@README.md", reason: "this session has no Read tool to attach files with" }])
    }).pipe(Effect.provide(toolServices)))
})
