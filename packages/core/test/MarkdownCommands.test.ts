/**
 * Custom slash commands from Markdown files: the prompt they send (tags, substitution, appended
 * ARGUMENTS), their descriptions and frontmatter, and the walk over real folders (namespacing, the
 * user's over the project's, skipped names, broken files answered with an error, the bounds).
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { BuiltinCommands, CommandArguments, CommandFile, Commands, MarkdownCommands, Message, SlashCommand } from "@keel/core"

const temp = fs.mkdtempSync(path.join(os.tmpdir(), "keel-md-commands-"))
afterAll(() => fs.rmSync(temp, { recursive: true, force: true }))

let counter = 0
/** A fresh project folder and home folder with `files` written (paths relative to the pair). */
const setup = (files: Record<string, string> = {}) => {
  const base = path.join(temp, `case-${counter++}`)
  const cwd = path.join(base, "project")
  const home = path.join(base, "home")
  for (const [relative, content] of Object.entries(files)) write(path.join(base, relative), content)
  return { cwd, home, project: path.join(cwd, ".keel", "commands"), user: path.join(home, "commands") }
}

const write = (file: string, content: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, content)
}

const load = (options: { cwd: string; home: string }) =>
  MarkdownCommands.load(options).pipe(Effect.provide(NodeContext.layer))

const context = { defaultModel: "claude-default" } as unknown as Commands.CommandContext

const texts = (message: Message.UserMessage): ReadonlyArray<string> =>
  typeof message.content === "string"
    ? [message.content]
    : message.content.map((b) => (b instanceof Message.TextBlock ? b.text : b.type))

/** Runs `/name args` from `commands`; the prompt's texts and the turn's model, or the error reply. */
const run = (commands: ReadonlyArray<Commands.Command>, name: string, args = "") =>
  Effect.gen(function*() {
    const command = commands.find((c) => c.name === name)
    assert.isDefined(command, `no /${name} among ${commands.map((c) => c.name).join(", ")}`)
    const result = yield* command!.run(args, context)
    return Commands.CommandResult.$match(result, {
      Prompt: ({ model, prompt }) => ({ texts: texts(prompt), model, error: undefined }),
      Reply: ({ isError, text }) => ({ texts: [], model: undefined, error: isError ? text : `(not an error) ${text}` }),
      Compact: () => ({ texts: [], model: undefined, error: "compact" }),
      Clear: () => ({ texts: [], model: undefined, error: "clear" })
    })
  })

const tags = (name: string, args?: string) =>
  `<command-message>${name}</command-message>\n<command-name>/${name}</command-name>\n` +
  (args === undefined ? "" : `<command-args>${args}</command-args>\n`)

describe("MarkdownCommands.expand", () => {
  it("sends the tag block, then the body; <command-args> only with arguments", () => {
    assert.deepStrictEqual(texts(CommandArguments.expand("review", "Review $ARGUMENTS.", "src/a.ts")), [
      tags("review", "src/a.ts"),
      "Review src/a.ts."
    ])
    assert.deepStrictEqual(texts(CommandArguments.expand("review", "Review it.", "")), [tags("review"), "Review it."])
    const message = CommandArguments.expand("a:b", "x", "")
    assert.strictEqual(message.role, "user")
    assert.isTrue(Array.isArray(message.content) && message.content.every((b) => b instanceof Message.TextBlock))
  })

  it("leaves the body block out when it is empty after substitution", () => {
    assert.deepStrictEqual(texts(CommandArguments.expand("x", "", "")), [tags("x")])
    assert.deepStrictEqual(texts(CommandArguments.expand("x", "$ARGUMENTS", "")), [tags("x")])
    assert.deepStrictEqual(texts(CommandArguments.expand("x", "\n  \n", "")), [tags("x")])
  })

  it("appends ARGUMENTS to a body without placeholders, and only when there are arguments", () => {
    assert.deepStrictEqual(texts(CommandArguments.expand("x", "Do it.", "q r")), [
      tags("x", "q r"),
      "Do it.\n\nARGUMENTS: q r"
    ])
    assert.deepStrictEqual(texts(CommandArguments.expand("x", "", "q")), [tags("x", "q"), "\n\nARGUMENTS: q"])
    assert.deepStrictEqual(texts(CommandArguments.expand("x", "Do it.\n", "")), [tags("x"), "Do it.\n"])
    // An unfilled positional is still a placeholder: nothing is appended.
    assert.deepStrictEqual(texts(CommandArguments.expand("x", "Use $3.", "q")), [tags("x", "q"), "Use $3."])
    // An escaped one is not.
    assert.deepStrictEqual(texts(CommandArguments.expand("x", "Say \\$ARGUMENTS.", "q")), [
      tags("x", "q"),
      "Say $ARGUMENTS.\n\nARGUMENTS: q"
    ])
  })
})

describe("CommandArguments.substitute", () => {
  const sub = CommandArguments.substitute

  it("replaces every $ARGUMENTS with the raw arguments, quotes kept, even without a word boundary", () => {
    assert.strictEqual(
      sub("A: $ARGUMENTS; again $ARGUMENTS", "\"two words\" x"),
      "A: \"two words\" x; again \"two words\" x"
    )
    assert.strictEqual(sub("$ARGUMENTSX", "Y"), "YX")
    assert.strictEqual(sub("[$ARGUMENTS]", ""), "[]")
  })

  it("keeps \\$ARGUMENTS literal and leaves lowercase $arguments and ${1} alone", () => {
    assert.strictEqual(sub("\\$ARGUMENTS is $ARGUMENTS", "q"), "$ARGUMENTS is q")
    assert.strictEqual(sub("$arguments and ${1} and $ARGUMENTS", "q"), "$arguments and ${1} and q")
  })

  it("fills $N and $ARGUMENTS[N] 0-based from the shell-split arguments; an unfilled one stays", () => {
    const args = "first \"two words\" 'it''s' a\\ b"
    assert.strictEqual(sub("$0|$1|$2|$3|$4", args), "first|two words|its|a b|$4")
    assert.strictEqual(sub("$ARGUMENTS[0]|$ARGUMENTS[1]|$ARGUMENTS[9]", args), "first|two words|$ARGUMENTS[9]")
    assert.strictEqual(sub("$1x and $10", "a b"), "bx and $10")
  })

  it("does not search the arguments' own text for placeholders", () => {
    assert.strictEqual(sub("$0 then $1", "$1 $ARGUMENTS"), "$1 then $ARGUMENTS")
  })
})

describe("MarkdownCommands.splitArguments", () => {
  it("splits like a shell: quotes group and are removed, backslashes escape", () => {
    assert.deepStrictEqual(CommandArguments.splitArguments("  a  \"b c\"  'd \"e\"' f\\ g \"h\\\"i\" \"\" j"), [
      "a",
      "b c",
      "d \"e\"",
      "f g",
      "h\"i",
      "",
      "j"
    ])
    assert.deepStrictEqual(CommandArguments.splitArguments("x'y z'w \"unclosed rest"), ["xy zw", "unclosed rest"])
    assert.deepStrictEqual(CommandArguments.splitArguments(""), [])
  })
})

describe("CommandFile.describeBody", () => {
  it("takes the first non-empty line without a leading '# ', cut to 97 characters and '...' past 100", () => {
    assert.strictEqual(CommandFile.describeBody("\n\n  # Review the diff  \nmore"), "Review the diff")
    assert.strictEqual(CommandFile.describeBody("Plain first line\n# Heading"), "Plain first line")
    assert.strictEqual(CommandFile.describeBody(`# ${"a".repeat(100)}`), "a".repeat(100))
    assert.strictEqual(CommandFile.describeBody("b".repeat(101)), `${"b".repeat(97)}...`)
    assert.strictEqual(CommandFile.describeBody(""), "Custom command")
    assert.strictEqual(CommandFile.describeBody(" \n\t\n"), "Custom command")
  })
})

describe("CommandFile.parseFile", () => {
  const parse = (text: string) => Effect.either(CommandFile.parseFile(text))

  it.effect("strips the frontmatter and reads description, argument-hint and model; other keys are ignored", () =>
    Effect.gen(function*() {
      const parsed = yield* CommandFile.parseFile(
        "---\ndescription: Review a file\nargument-hint: [file] [mode]\nmodel: opus\n" +
          "allowed-tools: Bash(git add:*), Read\n" +
          "disable-model-invocation: true\nunknown-key: { a: 1 }\n---\nBody $ARGUMENTS\n"
      )
      assert.deepStrictEqual(parsed, {
        frontmatter: { description: "Review a file", argumentHint: "[file] [mode]", model: "opus" },
        body: "Body $ARGUMENTS\n"
      })
      const crlf = yield* CommandFile.parseFile("\uFEFF---\r\ndescription: D\r\n---\r\nLine\r\n")
      assert.deepStrictEqual(crlf, {
        frontmatter: { description: "D", argumentHint: undefined, model: undefined },
        body: "Line\r\n"
      })
      assert.deepStrictEqual(yield* CommandFile.parseFile("No frontmatter\n---\nx"), {
        frontmatter: {},
        body: "No frontmatter\n---\nx"
      })
      assert.deepStrictEqual(yield* CommandFile.parseFile("---\n---\n"), { frontmatter: {}, body: "" })
    }))

  it.effect("invalid YAML, frontmatter that is not a mapping, or no closing --- is an error saying how to fix it", () =>
    Effect.gen(function*() {
      const bad = yield* parse("---\ndescription: Review: the diff\n---\nBody")
      assert.isTrue(Either.isLeft(bad))
      const error = Either.getLeft(bad).pipe((o) => o._tag === "Some" ? o.value : undefined)!
      assert.include(error.problem, "not valid YAML")
      assert.include(error.problem, "line 2")
      assert.include(error.fix, "quote")

      const list = Either.getLeft(yield* parse("---\n- a\n- b\n---\nBody"))
      assert.isTrue(list._tag === "Some" && list.value.problem.includes("not a mapping"))
      const scalar = Either.getLeft(yield* parse("---\njust text\n---\nBody"))
      assert.isTrue(scalar._tag === "Some" && scalar.value.problem.includes("not a mapping"))
      const unclosed = Either.getLeft(yield* parse("---\ndescription: x\nBody"))
      assert.isTrue(unclosed._tag === "Some" && unclosed.value.problem.includes("no closing --- line"))
      const duplicate = Either.getLeft(yield* parse("---\nmodel: a\nmodel: b\n---\n"))
      assert.isTrue(duplicate._tag === "Some" && duplicate.value.problem.includes("not valid YAML"))
      const notText = Either.getLeft(yield* parse("---\ndescription:\n  a: b\n---\n"))
      assert.isTrue(notText._tag === "Some" && notText.value.problem.includes("\"description\""))
    }))
})

describe("MarkdownCommands.load", () => {
  it.effect("names commands by path (subfolders with ':'), case-sensitively; reads only .md files", () =>
    Effect.gen(function*() {
      const dirs = setup({
        "project/.keel/commands/review.md": "Review it",
        "project/.keel/commands/Review.md": "Capital",
        "project/.keel/commands/frontend/component.md": "Make a component",
        "project/.keel/commands/a/b/deep.md": "Deep",
        "project/.keel/commands/notes.txt": "not a command",
        "project/.keel/commands/README": "not a command"
      })
      const commands = yield* load(dirs)
      assert.deepStrictEqual(commands.map((c) => [c.name, c.source]).sort(), [
        ["Review", "project"],
        ["a:b:deep", "project"],
        ["frontend:component", "project"],
        ["review", "project"]
      ])
      assert.deepStrictEqual((yield* run(commands, "Review")).texts, [tags("Review"), "Capital"])
      assert.deepStrictEqual((yield* run(commands, "frontend:component", "Button")).texts, [
        tags("frontend:component", "Button"),
        "Make a component\n\nARGUMENTS: Button"
      ])
      // What the user types reaches it.
      const invocation = SlashCommand.parse("/a:b:deep now")!
      assert.deepStrictEqual(invocation, { name: "a:b:deep", args: "now" })
      assert.strictEqual(Commands.make(commands).find(invocation.name)?.description, "Deep")
    }))

  it.effect("skips files whose name cannot be invoked", () =>
    Effect.gen(function*() {
      const dirs = setup({
        "project/.keel/commands/my notes.md": "x",
        "project/.keel/commands/.hidden.md": "x",
        "project/.keel/commands/v1.2.md": "x",
        "project/.keel/commands/-dash.md": "x",
        "project/.keel/commands/.md": "x",
        "project/.keel/commands/.git/inner.md": "x",
        "project/.keel/commands/sub folder/inner.md": "x",
        "project/.keel/commands/ok_name-2.md": "x",
        "project/.keel/commands/nested/_under.md": "x"
      })
      const names = (yield* load(dirs)).map((c) => c.name).sort()
      assert.deepStrictEqual(names, ["nested:_under", "ok_name-2"])
      for (const name of names) assert.strictEqual(SlashCommand.parse(`/${name}`)?.name, name)
    }))

  it.effect("the user's command replaces the project's of the same name; sources are project and user", () =>
    Effect.gen(function*() {
      const dirs = setup({
        "project/.keel/commands/review.md": "Project review",
        "project/.keel/commands/only-project.md": "P",
        "home/commands/review.md": "User review",
        "home/commands/only-user.md": "U"
      })
      const loaded = yield* load(dirs)
      assert.deepStrictEqual(loaded.map((c) => `${c.source}:${c.name}`), [
        "project:only-project",
        "project:review",
        "user:only-user",
        "user:review"
      ])
      const service = Commands.make(BuiltinCommands.all, loaded)
      const review = service.find("review")!
      assert.strictEqual(review.source, "user")
      assert.strictEqual(review.description, "User review")
      assert.deepStrictEqual((yield* run(service.commands, "review")).texts, [tags("review"), "User review"])
      assert.strictEqual(service.find("only-project")?.source, "project")
    }))

  it.effect("never replaces the protected built-ins: /clear stays the built-in", () =>
    Effect.gen(function*() {
      const dirs = setup({
        "project/.keel/commands/clear.md": "Delete everything",
        "home/commands/cost.md": "Say it was free"
      })
      const loaded = yield* load(dirs)
      assert.deepStrictEqual(loaded.map((c) => c.name).sort(), ["clear", "cost"])
      const service = Commands.make(BuiltinCommands.all, loaded)
      assert.strictEqual(service.find("clear")?.source, "builtin")
      assert.strictEqual(service.find("cost")?.source, "builtin")
      assert.strictEqual((yield* run(service.commands, "clear")).error, "clear")
    }))

  it.effect("layer adds the Markdown commands to the commands below", () =>
    Effect.gen(function*() {
      const dirs = setup({ "project/.keel/commands/review.md": "Review", "project/.keel/commands/compact.md": "No" })
      const service = yield* Commands.Commands.pipe(
        Effect.provide(
          MarkdownCommands.layer(dirs).pipe(Layer.provide(BuiltinCommands.layer), Layer.provide(NodeContext.layer))
        )
      )
      assert.strictEqual(service.find("review")?.source, "project")
      assert.strictEqual(service.find("compact")?.source, "builtin")
      assert.strictEqual(service.commands.length, BuiltinCommands.all.length + 1)
    }))

  it.effect("frontmatter: description, argument-hint, and the model of the turn (aliases resolved)", () =>
    Effect.gen(function*() {
      const dirs = setup({
        "project/.keel/commands/fm.md": "---\ndescription: From frontmatter\nargument-hint: [pr] [priority]\n" +
          "model: opus\n---\n# Heading\nFix $0 at $1",
        "project/.keel/commands/id.md": "---\nmodel: claude-custom-1\n---\n# The heading describes it\nGo",
        "project/.keel/commands/default.md": "---\nmodel: default\n---\nGo",
        "project/.keel/commands/plain.md": "Go",
        "project/.keel/commands/empty.md": ""
      })
      const commands = yield* load(dirs)
      const fm = commands.find((c) => c.name === "fm")!
      assert.strictEqual(fm.description, "From frontmatter")
      assert.strictEqual(fm.argumentHint, "[pr] [priority]")
      assert.deepStrictEqual(yield* run(commands, "fm", "123 high"), {
        texts: [tags("fm", "123 high"), "# Heading\nFix 123 at high"],
        model: "claude-opus-4-6",
        error: undefined
      })
      assert.strictEqual(commands.find((c) => c.name === "id")!.description, "The heading describes it")
      assert.strictEqual((yield* run(commands, "id")).model, "claude-custom-1")
      assert.strictEqual((yield* run(commands, "default")).model, "claude-default")
      assert.strictEqual((yield* run(commands, "plain")).model, undefined)
      const plain = yield* commands.find((c) => c.name === "plain")!.run("", context)
      assert.isFalse("model" in plain)
      assert.strictEqual(commands.find((c) => c.name === "empty")!.description, "Custom command")
      assert.deepStrictEqual((yield* run(commands, "empty", "q")).texts, [tags("empty", "q"), "\n\nARGUMENTS: q"])
    }))

  it.effect("a file with bad frontmatter is still a command, answering an error that names the file and the fix", () =>
    Effect.gen(function*() {
      const dirs = setup({
        "project/.keel/commands/bad.md": "---\ndescription: Review: the diff\n---\nBody",
        "project/.keel/commands/list.md": "---\n- a\n---\nBody",
        "project/.keel/commands/good.md": "Good"
      })
      const commands = yield* load(dirs)
      assert.deepStrictEqual(commands.map((c) => c.name), ["bad", "good", "list"])
      const bad = yield* run(commands, "bad", "x")
      assert.deepStrictEqual(bad.texts, [])
      assert.include(bad.error!, path.join(dirs.project, "bad.md"))
      assert.include(bad.error!, "not valid YAML")
      assert.include(bad.error!, "(line 2, column")
      assert.include(bad.error!, "quote a value")
      assert.include(bad.error!, "Nothing was sent to the model")
      assert.include(commands.find((c) => c.name === "bad")!.description, "Broken")
      const list = yield* run(commands, "list")
      assert.include(list.error!, path.join(dirs.project, "list.md"))
      assert.include(list.error!, "not a mapping")
      assert.deepStrictEqual((yield* run(commands, "good")).texts, [tags("good"), "Good"])
    }))

  // Without the nesting guard, the second file's parse aborts Node (a stack overflow in the YAML
  // library after an earlier one ends in a fatal "RegExpCompiler Allocation failed").
  it.effect("deeply nested or overlong frontmatter is refused before the YAML library parses it", () =>
    Effect.gen(function*() {
      const deep = (n: number) => `---\na: ${"[".repeat(n)}${"]".repeat(n)}\n---\nBody`
      const long = "d".repeat(CommandFile.MAX_FRONTMATTER_CHARS)
      const dirs = setup({
        "project/.keel/commands/deep1.md": deep(1_000),
        "project/.keel/commands/deep2.md": deep(3_000),
        "project/.keel/commands/dashes.md": `---\na:\n  ${"- ".repeat(2_000)}x\n---\nBody`,
        "project/.keel/commands/long.md": `---\ndescription: ${long}\n---\n`,
        "project/.keel/commands/nested-ok.md": "---\nallowed-tools: [Read, {a: [b]}]\ndescription: Fine\n---\nBody"
      })
      const commands = yield* load(dirs)
      for (const name of ["deep1", "deep2", "dashes"]) {
        const result = yield* run(commands, name)
        assert.include(result.error!, path.join(dirs.project, `${name}.md`))
        assert.include(result.error!, `nested more than ${CommandFile.MAX_NESTING} levels deep`)
      }
      assert.include((yield* run(commands, "long")).error!, "frontmatter longer than")
      assert.strictEqual(commands.find((c) => c.name === "nested-ok")!.description, "Fine")
    }))

  it.effect("an unreadable entry (dangling link, FIFO) is a command that answers why it cannot run", () =>
    Effect.gen(function*() {
      const dirs = setup({ "project/.keel/commands/ok.md": "ok" })
      fs.symlinkSync(path.join(dirs.project, "missing-target.md"), path.join(dirs.project, "gone.md"))
      execFileSync("mkfifo", [path.join(dirs.project, "pipe.md")])
      const commands = yield* load(dirs)
      assert.deepStrictEqual(commands.map((c) => c.name), ["gone", "ok", "pipe"])
      const gone = yield* run(commands, "gone")
      assert.include(gone.error!, path.join(dirs.project, "gone.md"))
      assert.include(gone.error!, "could not be read")
      assert.include((yield* run(commands, "pipe")).error!, "is not a regular file")
    }))

  it.effect("a file over 256 KB is reported like an invalid one, not read", () =>
    Effect.gen(function*() {
      const dirs = setup({
        "project/.keel/commands/big.md": "x".repeat(MarkdownCommands.MAX_FILE_BYTES + 1),
        "project/.keel/commands/edge.md": "y".repeat(MarkdownCommands.MAX_FILE_BYTES)
      })
      const commands = yield* load(dirs)
      const big = yield* run(commands, "big")
      assert.include(big.error!, path.join(dirs.project, "big.md"))
      assert.include(big.error!, "larger than the 256 KB a command file may have (257 KB)")
      assert.strictEqual((yield* run(commands, "edge")).texts[1]!.length, MarkdownCommands.MAX_FILE_BYTES)
    }))

  // A /proc file says it is empty but holds megabytes: the read itself stops past the limit. (A
  // user's command: the user's folder may link anywhere; a project's may not, see below.)
  it.effect.skipIf(!fs.existsSync("/proc/kallsyms"))("a file larger than its size says is cut off at the limit", () =>
    Effect.gen(function*() {
      const dirs = setup({ "home/commands/ok.md": "ok" })
      fs.symlinkSync("/proc/kallsyms", path.join(dirs.user, "proc.md"))
      const proc = yield* run(yield* load(dirs), "proc")
      assert.include(proc.error!, path.join(dirs.user, "proc.md"))
      assert.include(proc.error!, "is larger than the 256 KB a command file may have.")
    }))

  it.effect("files past the folder's byte budget are reported, not read", () =>
    Effect.gen(function*() {
      const size = 250 * 1024
      const count = Math.floor(MarkdownCommands.MAX_TOTAL_BYTES / size) + 1
      const files: Record<string, string> = {}
      for (let i = 0; i < count; i++) {
        files[`project/.keel/commands/f${String(i).padStart(3, "0")}.md`] = "z".repeat(size)
      }
      const commands = yield* load(setup(files))
      const last = `f${String(count - 1).padStart(3, "0")}`
      assert.include((yield* run(commands, last)).error!, "MB in all")
      assert.strictEqual((yield* run(commands, "f000")).error, undefined)
    }))

  it.effect("a project's command that links outside the project is broken and reads nothing; links inside work", () =>
    Effect.gen(function*() {
      const dirs = setup({
        "secret/id_rsa": "-----BEGIN PRIVATE KEY----- the user's own",
        "project/docs/prompt.md": "Review the docs.",
        "home/commands/mine.md": "placeholder"
      })
      const secret = path.join(path.dirname(dirs.cwd), "secret", "id_rsa")
      fs.mkdirSync(dirs.project, { recursive: true })
      fs.symlinkSync(secret, path.join(dirs.project, "leak.md"))
      fs.symlinkSync(path.join(dirs.cwd, "docs", "prompt.md"), path.join(dirs.project, "docs.md"))
      // A folder linked from outside: its files are outside too.
      fs.mkdirSync(path.join(path.dirname(dirs.cwd), "elsewhere"))
      fs.writeFileSync(path.join(path.dirname(dirs.cwd), "elsewhere", "x.md"), "outside")
      fs.symlinkSync(path.join(path.dirname(dirs.cwd), "elsewhere"), path.join(dirs.project, "ext"))
      // The user's own folder may link wherever the user likes.
      fs.rmSync(path.join(dirs.user, "mine.md"))
      fs.symlinkSync(secret, path.join(dirs.user, "mine.md"))
      const commands = yield* load(dirs)
      const leak = yield* run(commands, "leak")
      assert.include(leak.error!, `resolves to ${fs.realpathSync(secret)}, outside the project`)
      assert.notInclude(leak.error!, "BEGIN PRIVATE KEY")
      assert.include((yield* run(commands, "ext:x")).error!, "outside the project")
      assert.deepStrictEqual((yield* run(commands, "docs")).texts, [tags("docs"), "Review the docs."])
      assert.include((yield* run(commands, "mine")).texts[1]!, "BEGIN PRIVATE KEY")
    }))

  it.effect("symlinked folders are followed once: a loop terminates", () =>
    Effect.gen(function*() {
      const dirs = setup({ "project/.keel/commands/a/cmd.md": "In a" })
      fs.symlinkSync("..", path.join(dirs.project, "a", "up"))
      fs.symlinkSync(".", path.join(dirs.project, "a", "self"))
      fs.symlinkSync(path.join(dirs.project, "a"), path.join(dirs.project, "b"))
      const commands = yield* load(dirs)
      // `a` and `b` are one folder, read once (as `a`, first in order).
      assert.deepStrictEqual(commands.map((c) => c.name), ["a:cmd"])
    }))

  it.effect("reads at most MAX_DEPTH folders deep and MAX_FILES files", () =>
    Effect.gen(function*() {
      const levels = Array.from({ length: MarkdownCommands.MAX_DEPTH + 1 }, (_, i) => `d${i + 1}`)
      const files: Record<string, string> = {}
      for (let depth = 1; depth <= levels.length; depth++) {
        files[`project/.keel/commands/${levels.slice(0, depth).join("/")}/at.md`] = `depth ${depth}`
      }
      for (let i = 0; i <= MarkdownCommands.MAX_FILES; i++) {
        files[`home/commands/u${String(i).padStart(4, "0")}.md`] = "u"
      }
      const commands = yield* load(setup(files))
      const deep = commands.filter((c) => c.source === "project").map((c) => c.name.split(":").length - 1)
      assert.deepStrictEqual(deep, Array.from({ length: MarkdownCommands.MAX_DEPTH }, (_, i) => i + 1))
      const user = commands.filter((c) => c.source === "user")
      assert.strictEqual(user.length, MarkdownCommands.MAX_FILES)
      assert.strictEqual(user[user.length - 1]!.name, `u${String(MarkdownCommands.MAX_FILES - 1).padStart(4, "0")}`)
    }))

  it.effect("missing folders (or a file where the folder should be) are no commands", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* load(setup()), [])
      const dirs = setup({ "project/.keel/commands": "a file, not a folder" })
      assert.deepStrictEqual(yield* load(dirs), [])
    }))
})
