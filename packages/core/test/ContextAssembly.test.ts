/**
 * Context assembly against real temporary git repositories and folders: instruction files at
 * several levels, a folder outside any repository, a huge `git status`, the soft budgets, and the
 * prompt kept for the session (git runs once) as `Session` uses it.
 */
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import {
  BuiltinCommands,
  Compactor,
  ContextAssembly,
  Environment,
  GitContext,
  Hooks,
  Ids,
  Permissions,
  Pipeline,
  ProjectInstructions,
  Session,
  SessionStore,
  SystemPrompt,
  TestModel,
  ToolRegistry,
  ToolRuntime
} from "@keel/core"
import type { ModelRequest } from "@keel/core"
import { Effect, Layer, Option, Stream, TestClock } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/** A fresh temporary folder (real path: macOS and some CI put /tmp behind a symlink). */
const tempDir = (prefix: string): string => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))

const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

/** Runs git in `cwd` with no global or system config (the test sets what it needs locally). */
const git = (cwd: string, ...args: Array<string>): string =>
  execFileSync("git", args, {
    cwd,
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
    encoding: "utf8"
  })

/** A repository at `dir` on branch `main` with `commits` commits ("commit 1" ...), user Keel Tester. */
const initRepo = (dir: string, commits: number) => {
  git(dir, "init", "-q", "-b", "main")
  git(dir, "config", "user.name", "Keel Tester")
  git(dir, "config", "user.email", "tester@example.com")
  git(dir, "config", "commit.gpgsign", "false")
  for (let i = 1; i <= commits; i++) {
    write(path.join(dir, "README.md"), `version ${i}\n`)
    git(dir, "add", "README.md")
    git(dir, "commit", "-q", "-m", `commit ${i}`)
  }
}

const sectionOf = (prompt: SystemPrompt.SystemPrompt, name: string): string | undefined =>
  prompt.dynamic.find((s) => s.name === name)?.text

/** Asserts `parts` occur in `text` in this order. */
const assertOrder = (text: string, parts: ReadonlyArray<string>) => {
  const at = parts.map((p) => text.indexOf(p))
  at.forEach((i, n) => assert.isAtLeast(i, 0, `missing: ${parts[n]}`))
  assert.deepStrictEqual(at, [...at].sort((a, b) => a - b), `out of order: ${parts.join(" < ")}`)
}

/** The full assembly's prompt for `cwd`: always a `SystemPrompt` (a string is only the minimal assembly's). */
const assemble = (cwd: string, options: ContextAssembly.Options = {}) =>
  Effect.flatMap(ContextAssembly.make(options), (assembly) => assembly.assemble(cwd)).pipe(
    Effect.map((prompt) => {
      assert.instanceOf(prompt, SystemPrompt.SystemPrompt)
      return prompt as SystemPrompt.SystemPrompt
    }),
    Effect.provide(NodeContext.layer)
  )

describe("ContextAssembly", () => {
  it.effect("in a git repository: instruction files the user's first, then from the root down to the cwd; git facts; the date from Clock", () =>
    Effect.gen(function*() {
      const base = tempDir("keel-ctx-")
      const repo = path.join(base, "repo")
      const cwd = path.join(repo, "packages", "app")
      fs.mkdirSync(cwd, { recursive: true })
      initRepo(repo, 6)
      git(repo, "checkout", "-q", "-b", "feature")
      // origin's default branch, as a clone would have it.
      git(repo, "update-ref", "refs/remotes/origin/trunk", "HEAD")
      git(repo, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")
      write(path.join(repo, "README.md"), "changed\n")
      write(path.join(repo, "new.txt"), "untracked\n")

      write(path.join(base, "KEEL.md"), "ABOVE THE REPOSITORY: never read")
      write(path.join(repo, "KEEL.md"), "root keel: run npm test")
      write(path.join(repo, "AGENTS.md"), "root agents: two-space indent")
      fs.symlinkSync("AGENTS.md", path.join(repo, "CLAUDE.md"))
      write(path.join(repo, "packages", "AGENTS.md"), "packages agents: one concept per file")
      write(path.join(cwd, "CLAUDE.md"), "app claude: use Effect.gen")
      const home = path.join(base, "home")
      write(path.join(home, "KEEL.md"), "user keel: answer in English")

      const now = Date.parse("2025-03-04T12:00:00Z")
      yield* TestClock.setTime(now)
      const prompt = yield* assemble(cwd, { home })

      assert.deepStrictEqual(prompt.stable.map((s) => [s.name, s.text]), [["base", ContextAssembly.BASE_INSTRUCTIONS]])
      assert.deepStrictEqual(prompt.dynamic.map((s) => s.name), ["instructions", "environment"])

      const instructions = sectionOf(prompt, "instructions")!
      assertOrder(instructions, [
        ProjectInstructions.HEADER,
        `Contents of ${path.join(home, "KEEL.md")} (the user's own instructions, for every project)`,
        "user keel: answer in English",
        "root agents: two-space indent",
        "root keel: run npm test",
        "packages agents: one concept per file",
        `Contents of ${path.join(cwd, "CLAUDE.md")}`,
        "app claude: use Effect.gen"
      ])
      assert.notInclude(instructions, "ABOVE THE REPOSITORY")
      // CLAUDE.md is a symlink to AGENTS.md: read once.
      assert.strictEqual(instructions.split("root agents: two-space indent").length, 2)

      const environment = sectionOf(prompt, "environment")!
      assert.include(environment, `Working directory: ${cwd}`)
      assert.include(environment, "Git repository: yes")
      assert.include(environment, `Platform: ${process.platform} (`)
      assert.include(environment, "Shell (Bash tool): bash")
      assert.include(environment, `Today's date: ${Environment.formatDate(now)}`)
      // No model given: no model line.
      assert.notInclude(environment, "Model:")
      assert.include(environment, "Current branch: feature")
      assert.include(environment, "Main branch (the usual base for pull requests): trunk")
      assert.include(environment, "Git user: Keel Tester")
      const commits = environment.split("Recent commits:\n")[1]!.split("\n\n")[0]!.split("\n")
      assert.deepStrictEqual(commits.map((line) => line.replace(/^[0-9a-f]+ /, "")), [
        "commit 6",
        "commit 5",
        "commit 4",
        "commit 3",
        "commit 2"
      ])
      const status = environment.split("paths relative to the working directory):\n")[1]!
      // git reports paths relative to the working directory, as the tools resolve them.
      assert.include(status, " M ../../README.md")
      assert.include(status, "?? ../../new.txt")
      // Files written after the snapshot are not in it; the model is told it is a snapshot.
      assert.include(environment, "This snapshot is not updated")
    }))

  it.effect("outside a repository: no git section; instruction files up to the filesystem root", () =>
    Effect.gen(function*() {
      const base = tempDir("keel-ctx-norepo-")
      const cwd = path.join(base, "a", "b")
      write(path.join(base, "a", "AGENTS.md"), "folder a")
      write(path.join(cwd, "KEEL.md"), "folder b")
      const prompt = yield* assemble(cwd, { home: path.join(base, "no-home") })
      assert.deepStrictEqual(prompt.dynamic.map((s) => s.name), ["instructions", "environment"])
      assertOrder(sectionOf(prompt, "instructions")!, ["folder a", "folder b"])
      const environment = sectionOf(prompt, "environment")!
      assert.include(environment, "Git repository: no")
      assert.notInclude(environment, "# Git status")
      assert.notInclude(environment, "Current branch")
      assert.isTrue(Option.isNone(yield* GitContext.collect(cwd).pipe(Effect.provide(NodeContext.layer))))

      // No instruction files anywhere: no instructions section at all.
      const empty = tempDir("keel-ctx-empty-")
      const bare = yield* assemble(empty, {})
      assert.deepStrictEqual(bare.dynamic.map((s) => s.name), ["environment"])
    }))

  it.live("git missing or broken: no git section, and the rest of the prompt as usual", () =>
    Effect.gen(function*() {
      const repo = tempDir("keel-ctx-nogit-")
      initRepo(repo, 1)
      const prompt = yield* assemble(repo, { git: { git: path.join(repo, "no-such-git") } })
      const environment = sectionOf(prompt, "environment")!
      assert.include(environment, "Git repository: yes")
      assert.notInclude(environment, "# Git status")
    }))

  it.live("a git that hangs is stopped at the timeout: no git section, and the prompt comes anyway", () =>
    Effect.gen(function*() {
      const repo = tempDir("keel-ctx-hang-")
      fs.mkdirSync(path.join(repo, ".git"))
      const hanging = path.join(repo, "hanging-git")
      fs.writeFileSync(hanging, "#!/bin/sh\nexec sleep 30\n", { mode: 0o755 })
      const started = Date.now()
      const git = yield* GitContext.collect(repo, { git: hanging, timeout: "300 millis" }).pipe(Effect.provide(NodeContext.layer))
      assert.isTrue(Option.isNone(git))
      assert.isBelow(Date.now() - started, 10_000)
      const prompt = yield* assemble(repo, { git: { git: hanging, timeout: "300 millis" } })
      assert.include(sectionOf(prompt, "environment")!, "Git repository: yes")
      assert.notInclude(sectionOf(prompt, "environment")!, "# Git status")
    }))

  it.live("a huge git status is cut at 2,000 characters, at a line end, with a note", () =>
    Effect.gen(function*() {
      const repo = tempDir("keel-ctx-huge-")
      initRepo(repo, 2)
      for (let i = 0; i < 3_000; i++) fs.writeFileSync(path.join(repo, `untracked-${String(i).padStart(4, "0")}.txt`), "")
      const git = Option.getOrThrow(yield* GitContext.collect(repo).pipe(Effect.provide(NodeContext.layer)))
      assert.isTrue(git.statusCut)
      assert.isAtMost(git.status.length, GitContext.STATUS_MAX_CHARS)
      assert.isAbove(git.status.length, GitContext.STATUS_MAX_CHARS - 30)
      const lines = git.status.split("\n")
      for (const line of lines) assert.match(line, /^\?\? untracked-\d{4}\.txt$/)
      assert.strictEqual(lines[0], "?? untracked-0000.txt")
      assert.strictEqual(git.defaultBranch, "main")

      const prompt = yield* assemble(repo, {})
      const environment = sectionOf(prompt, "environment")!
      assert.include(environment, "[... the status is cut at 2,000 characters; run `git status` in Bash for the rest]")
      assert.include(environment, "?? untracked-0000.txt")
      assert.notInclude(environment, "?? untracked-2999.txt")
      // Soft budgets: the environment is over its ~500 tokens, but the dynamic part is under the sum.
      assert.notInclude(environment, "cut here to fit")
    }))

  describe("budgets", () => {
    const text = (tokens: number, tag: string) => Array.from({ length: tokens }, (_, i) => `${tag}${i % 10}.\n`).join("").slice(0, tokens * 4)
    const tokens = (s: string | undefined) => Math.ceil((s ?? "").length / 4)

    it("nothing is cut while the dynamic part fits the sum, even a section over its own budget", () => {
      const sections = { instructions: text(1_000, "i"), memory: undefined, environment: text(1_200, "e") }
      const fitted = ContextAssembly.fitToBudgets(sections)
      assert.deepStrictEqual(fitted.cut, [])
      assert.deepStrictEqual(fitted.sections, sections)
    })

    it("over the sum: the environment is cut first, to its budget, then the instructions, only as far as needed", () => {
      const fitted = ContextAssembly.fitToBudgets({
        instructions: text(3_000, "i"),
        memory: text(1_000, "m"),
        environment: text(1_000, "e")
      })
      assert.deepStrictEqual(fitted.cut, ["environment", "instructions"])
      assert.include(fitted.sections.environment!, "[... the environment cut here to fit the prompt's budget (~500 tokens)")
      assert.isAtMost(tokens(fitted.sections.environment), 500)
      assert.strictEqual(fitted.sections.memory, text(1_000, "m"))
      // 5,000 tokens, 1,000 over: the environment gives 500, the instructions the other 500, from
      // their start (the most general files are listed first), at a line start.
      const instructions = fitted.sections.instructions!
      assert.isTrue(instructions.startsWith("\n\n[... the most general instructions cut here to fit the prompt's budget (~2,500 tokens)"))
      assert.isAtMost(tokens(instructions), 2_500)
      assert.isAbove(tokens(instructions), 2_400)
      assert.isTrue(text(3_000, "i").endsWith(instructions.split("...]\n")[1]!))
      assert.match(instructions.split("...]\n")[1]!, /^i\d\.\n/)
    })

    it("the instructions keep their header when cut", () => {
      const body = text(3_000, "i")
      const fitted = ContextAssembly.fitToBudgets({
        instructions: `${ProjectInstructions.HEADER}\n\n${body}`,
        memory: undefined,
        environment: undefined
      }, { instructions: 1_000, memory: 0, environment: 0 })
      const instructions = fitted.sections.instructions!
      assert.isTrue(instructions.startsWith(`${ProjectInstructions.HEADER}\n\n[... the most general instructions cut here`))
      // The note says where the rest is: the files themselves (those cut whole are no longer named below).
      assert.include(instructions, "characters left out; Read the instruction files themselves for the full text ...]")
      assert.isAtMost(tokens(instructions), 1_000)
      assert.isTrue(body.endsWith(instructions.split("...]\n")[1]!))
    })

    it("memory is cut after the environment and before the instructions", () => {
      const fitted = ContextAssembly.fitToBudgets({
        instructions: text(2_500, "i"),
        memory: text(4_000, "m"),
        environment: text(1_000, "e")
      })
      assert.deepStrictEqual(fitted.cut, ["environment", "memory", "instructions"])
      assert.isAtMost(tokens(fitted.sections.memory), 1_500)
      assert.isAtMost(tokens(fitted.sections.instructions), 2_000)
    })

    it.effect("through the assembly: with small budgets the environment (git status last) is cut first", () =>
      Effect.gen(function*() {
        const repo = tempDir("keel-ctx-budget-")
        initRepo(repo, 1)
        for (let i = 0; i < 100; i++) fs.writeFileSync(path.join(repo, `f${i}.txt`), "")
        write(path.join(repo, "AGENTS.md"), "short rules")
        const prompt = yield* assemble(repo, {
          budgets: { instructions: 100, memory: 100, environment: 150 },
          memory: () => Effect.succeed("remember: the user likes tables")
        })
        assert.deepStrictEqual(prompt.dynamic.map((s) => s.name), ["instructions", "memory", "environment"])
        assert.include(sectionOf(prompt, "memory")!, "remember: the user likes tables")
        assert.notInclude(sectionOf(prompt, "instructions")!, "cut here")
        const environment = sectionOf(prompt, "environment")!
        assert.include(environment, "the environment cut here to fit the prompt's budget")
        assert.include(environment, "Working directory: ")
        assert.notInclude(environment, "?? f99.txt")
      }))
  })

  describe("in a session", () => {
    /** NodeContext whose command executor counts the processes it starts. */
    const counting = (counter: { n: number }) =>
      Layer.effect(
        CommandExecutor.CommandExecutor,
        Effect.map(CommandExecutor.CommandExecutor, (executor) =>
          CommandExecutor.makeExecutor((command) => {
            counter.n++
            return executor.start(command)
          }))
      ).pipe(Layer.provideMerge(NodeContext.layer))

    const sessionLayer = (counter: { n: number }, replies: number) =>
      Layer.mergeAll(
        TestModel.layer(Array.from({ length: replies }, () => TestModel.text("ok"))),
        Pipeline.layerEmpty,
        Compactor.layerNone,
        ToolRuntime.layer().pipe(
          Layer.provideMerge(ToolRegistry.layerEmpty),
          Layer.provideMerge(Permissions.layerAllowAll)
        ),
        ContextAssembly.layer({}).pipe(Layer.provide(counting(counter))),
        SessionStore.layerNoop,
        BuiltinCommands.layer,
        Ids.layerSeeded(1),
        Hooks.layerNone
      )

    const run = (session: Session.Service, prompt: string) => Stream.runDrain(session.submit(prompt))

    const systemOf = (request: ModelRequest.ModelRequest) =>
      (request.system as ReadonlyArray<{ text: string }>).map((b) => b.text).join("\n\n")

    it.scoped("the prompt is assembled once per session: git runs once, later changes wait for the next session", () => {
      const counter = { n: 0 }
      const repo = tempDir("keel-ctx-session-")
      initRepo(repo, 1)
      write(path.join(repo, "AGENTS.md"), "first rules")
      return Effect.gen(function*() {
        const model = yield* TestModel.TestModel
        const session = yield* Session.make({ model: "claude-test", cwd: repo })
        assert.strictEqual(counter.n, 0, "nothing runs before the first turn")
        yield* run(session, "one")
        const perSession = counter.n
        assert.strictEqual(perSession, 7, "seven git commands (the config read SafeGit does first, then six), once")
        write(path.join(repo, "AGENTS.md"), "second rules")
        write(path.join(repo, "later.txt"), "")
        yield* run(session, "two")
        assert.strictEqual(counter.n, perSession)
        const [first, second] = yield* model.requests
        assert.deepStrictEqual(second!.system, first!.system)
        assert.strictEqual(first!.systemStableBlocks, 1)
        assert.include(systemOf(first!), "first rules")
        // The session's model is named in the environment (an id the table does not know: as it is).
        assert.include(systemOf(first!), "- Model: you run on claude-test (model id `claude-test`)")
        assert.notInclude(systemOf(second!), "later.txt")
        assert.deepStrictEqual(yield* session.systemPrompt, yield* session.systemPrompt)

        const next = yield* Session.make({ model: "claude-test", cwd: repo })
        yield* run(next, "three")
        assert.strictEqual(counter.n, 2 * perSession)
        const third = (yield* model.requests)[2]!
        assert.include(systemOf(third), "second rules")
        assert.include(systemOf(third), "?? later.txt")
      }).pipe(Effect.provide(sessionLayer(counter, 3)))
    })

    it.scoped("systemPrompt replaces the assembled prompt (nothing is read) and appendSystemPrompt extends either", () => {
      const counter = { n: 0 }
      const repo = tempDir("keel-ctx-options-")
      initRepo(repo, 1)
      write(path.join(repo, "KEEL.md"), "project rules")
      return Effect.gen(function*() {
        const model = yield* TestModel.TestModel
        yield* run(yield* Session.make({ model: "m", cwd: repo, systemPrompt: "Be brief." }), "a")
        assert.strictEqual(counter.n, 0)
        yield* run(yield* Session.make({ model: "m", cwd: repo, appendSystemPrompt: "Answer in French." }), "b")
        yield* run(
          yield* Session.make({ model: "m", cwd: repo, systemPrompt: "Be brief.", appendSystemPrompt: "Answer in French." }),
          "c"
        )
        const [replaced, appended, both] = yield* model.requests
        assert.strictEqual(replaced!.system, "Be brief.")
        assert.strictEqual(replaced!.systemStableBlocks, undefined)
        const blocks = appended!.system as ReadonlyArray<{ text: string }>
        assert.strictEqual(blocks[0]!.text, ContextAssembly.BASE_INSTRUCTIONS)
        assert.include(blocks[1]!.text, "project rules")
        assert.strictEqual(blocks.at(-1)!.text, "Answer in French.")
        assert.strictEqual(appended!.systemStableBlocks, 1)
        assert.deepStrictEqual(both!.system, [{ type: "text", text: "Be brief." }, { type: "text", text: "Answer in French." }])
        assert.strictEqual(both!.systemStableBlocks, 1)
      }).pipe(Effect.provide(sessionLayer(counter, 3)))
    })
  })
})

describe("ProjectInstructions", () => {
  it.effect("reads each file once (a copy or symlink of another is skipped), leaves empty files out", () =>
    Effect.gen(function*() {
      const dir = tempDir("keel-ctx-files-")
      write(path.join(dir, "KEEL.md"), "same text")
      write(path.join(dir, "AGENTS.md"), "same text")
      write(path.join(dir, "CLAUDE.md"), "   \n")
      const files = yield* ProjectInstructions.load(dir, { root: dir }).pipe(Effect.provide(NodeContext.layer))
      // AGENTS.md comes before KEEL.md in a folder: it is the one read.
      assert.deepStrictEqual(files.map((f) => [path.basename(f.path), f.scope]), [["AGENTS.md", "project"]])
    }))
})
