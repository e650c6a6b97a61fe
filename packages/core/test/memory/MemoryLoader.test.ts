/**
 * Memory files as Claude Code loads them, against real temporary folders: the order (the user's
 * first, then each folder from the root down to the working directory, its shared files before its
 * private `.local.md` ones), `@path` imports (relative, `~/`, absolute; right after the importing
 * file; five files deep; cycles once; not in code; missing ones skipped; a project's imports kept
 * inside the working directory, symlinks included), and the size caps.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { ContextSnapshot, Environment, MemoryFile, MemoryImports, MemoryLoader } from "@keel/core"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/** A fresh temporary folder (real path: /tmp may be behind a symlink). */
const tempDir = (prefix: string): string => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))

const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

const load = (cwd: string, options: MemoryLoader.Options) => MemoryLoader.load(cwd, options).pipe(Effect.provide(NodeContext.layer))

/** Each file as `path relative to base (scope)`, in order. */
const listed = (base: string, loaded: MemoryLoader.Loaded) =>
  loaded.files.map((f) => `${path.relative(base, f.path)} (${f.scope}${f.importedFrom !== undefined ? `, from ${path.relative(base, f.importedFrom)}` : ""})`)

describe("MemoryImports.importsOf", () => {
  it("finds @paths in text, not in code spans, fenced or indented code, e-mail addresses or after punctuation", () => {
    const content = [
      "Read @docs/a.md first, and @./b.md.",
      "@c.md at the start; me@example.com is an address; (@in-parens.md) is not one",
      "Code `@span.md` is skipped, @d\\ e.md keeps its space, @f.md#section drops the fragment",
      "```",
      "@fenced.md",
      "```",
      "",
      "    @indented.md",
      "",
      "- a list item @list.md",
      "> a quote @quote.md",
      "# A heading @heading.md",
      "**@bold.md** @~/home.md @/abs/g.md @@twice.md @#hash.md @docs/a.md"
    ].join("\n")
    assert.deepStrictEqual(MemoryImports.importsOf(content), [
      "docs/a.md",
      "./b.md.",
      "c.md",
      "d e.md",
      "f.md",
      "list.md",
      "quote.md",
      "heading.md",
      "bold.md",
      "~/home.md",
      "/abs/g.md"
    ])
  })

  it("resolves relative to the importing file's folder, ~/ in the user's home, absolute as it is", () => {
    assert.strictEqual(MemoryImports.resolve("docs/a.md", "/p/app", "/home/u", path), "/p/app/docs/a.md")
    assert.strictEqual(MemoryImports.resolve("../b.md", "/p/app", "/home/u", path), "/p/b.md")
    assert.strictEqual(MemoryImports.resolve("~/c.md", "/p/app", "/home/u", path), "/home/u/c.md")
    assert.strictEqual(MemoryImports.resolve("~/c.md", "/p/app", undefined, path), undefined)
    assert.strictEqual(MemoryImports.resolve("/etc/d.md", "/p/app", "/home/u", path), "/etc/d.md")
  })
})

describe("MemoryLoader.load", () => {
  it.effect("the user's files first, then each folder from the root down to the cwd: shared files, then private ones", () =>
    Effect.gen(function*() {
      const base = tempDir("keel-mem-order-")
      const userHome = path.join(base, "home")
      const keelHome = path.join(userHome, ".keel")
      const repo = path.join(base, "repo")
      const cwd = path.join(repo, "app")
      write(path.join(userHome, ".claude", "CLAUDE.md"), "user claude")
      write(path.join(keelHome, "CLAUDE.md"), "keel home claude")
      write(path.join(keelHome, "KEEL.md"), "keel home keel")
      write(path.join(base, "CLAUDE.md"), "above the root: never read")
      write(path.join(repo, "CLAUDE.md"), "root claude")
      write(path.join(repo, "CLAUDE.local.md"), "root local")
      write(path.join(cwd, "KEEL.local.md"), "app keel local")
      write(path.join(cwd, "CLAUDE.local.md"), "app claude local")
      write(path.join(cwd, "KEEL.md"), "app keel")
      write(path.join(cwd, ".claude", "CLAUDE.md"), "app dot-claude")
      write(path.join(cwd, "CLAUDE.md"), "app claude")
      write(path.join(cwd, "AGENTS.md"), "app agents")
      write(path.join(cwd, "sub", "CLAUDE.md"), "below the cwd: not at start")
      const loaded = yield* load(cwd, { root: repo, home: keelHome, userHome })
      assert.deepStrictEqual(listed(base, loaded), [
        "home/.claude/CLAUDE.md (user)",
        "home/.keel/CLAUDE.md (user)",
        "home/.keel/KEEL.md (user)",
        "repo/CLAUDE.md (project)",
        "repo/CLAUDE.local.md (local)",
        "repo/app/AGENTS.md (project)",
        "repo/app/CLAUDE.md (project)",
        "repo/app/.claude/CLAUDE.md (project)",
        "repo/app/KEEL.md (project)",
        "repo/app/CLAUDE.local.md (local)",
        "repo/app/KEEL.local.md (local)"
      ])
      assert.deepStrictEqual(loaded.skipped, [])
    }))

  it.effect("imports: relative, ~/ and absolute, each right after the file importing it, depth first; code is not an import", () =>
    Effect.gen(function*() {
      const base = tempDir("keel-mem-imports-")
      const userHome = path.join(base, "home")
      const cwd = path.join(base, "repo")
      write(path.join(userHome, ".claude", "CLAUDE.md"), "user: @~/personal.md and @/" + path.relative("/", path.join(base, "elsewhere", "abs.md")))
      write(path.join(userHome, "personal.md"), "personal")
      write(path.join(base, "elsewhere", "abs.md"), "absolute, outside the project: the user's may import it")
      write(
        path.join(cwd, "CLAUDE.md"),
        ["project: see @docs/extra.md and @" + path.join(cwd, "docs", "abs-inside.md"), "`@docs/span.md`", "```", "@docs/fenced.md", "```"].join("\n")
      )
      write(path.join(cwd, "docs", "extra.md"), "extra, which imports @./deeper.md")
      write(path.join(cwd, "docs", "deeper.md"), "deeper")
      write(path.join(cwd, "docs", "abs-inside.md"), "absolute, inside")
      write(path.join(cwd, "docs", "span.md"), "never")
      write(path.join(cwd, "docs", "fenced.md"), "never")
      write(path.join(cwd, "CLAUDE.local.md"), "local")
      const loaded = yield* load(cwd, { root: cwd, userHome })
      assert.deepStrictEqual(listed(base, loaded), [
        "home/.claude/CLAUDE.md (user)",
        "home/personal.md (user, from home/.claude/CLAUDE.md)",
        "elsewhere/abs.md (user, from home/.claude/CLAUDE.md)",
        "repo/CLAUDE.md (project)",
        "repo/docs/extra.md (project, from repo/CLAUDE.md)",
        "repo/docs/deeper.md (project, from repo/docs/extra.md)",
        "repo/docs/abs-inside.md (project, from repo/CLAUDE.md)",
        "repo/CLAUDE.local.md (local)"
      ])
      // The importing file keeps its text as written.
      assert.include(loaded.files[3]!.content, "see @docs/extra.md")
    }))

  it.effect("a chain of imports is followed five files deep; a cycle and a file imported twice come once", () =>
    Effect.gen(function*() {
      const cwd = tempDir("keel-mem-depth-")
      write(path.join(cwd, "CLAUDE.md"), "start @c1.md @a.md @c2.md")
      for (let i = 1; i <= 7; i++) write(path.join(cwd, `c${i}.md`), `chain ${i} @c${i + 1}.md`)
      write(path.join(cwd, "a.md"), "cycle a @b.md")
      write(path.join(cwd, "b.md"), "cycle b @a.md @CLAUDE.md @b.md")
      const loaded = yield* load(cwd, { root: cwd })
      assert.deepStrictEqual(listed(cwd, loaded), [
        "CLAUDE.md (project)",
        "c1.md (project, from CLAUDE.md)",
        "c2.md (project, from c1.md)",
        "c3.md (project, from c2.md)",
        "c4.md (project, from c3.md)",
        "a.md (project, from CLAUDE.md)",
        "b.md (project, from a.md)"
      ])
      assert.strictEqual(MemoryImports.MAX_DEPTH, 5)
      assert.deepStrictEqual(loaded.skipped, [])
    }))

  it.effect("skipped, never a failure: a missing import, a folder, a dangling symlink, a binary file; outside the cwd from a project file, a symlink out of it too", () =>
    Effect.gen(function*() {
      const base = tempDir("keel-mem-skip-")
      const repo = path.join(base, "repo")
      const cwd = path.join(repo, "app")
      write(path.join(repo, "rootdoc.md"), "in the repository, outside the cwd")
      write(path.join(base, "outside.md"), "outside")
      write(path.join(cwd, "docs", "binary.md"), "bin\u0000ary")
      fs.mkdirSync(path.join(cwd, "folder.md"), { recursive: true })
      fs.symlinkSync(path.join(base, "nowhere.md"), path.join(cwd, "dangling.md"))
      fs.symlinkSync(path.join(base, "outside.md"), path.join(cwd, "link-out.md"))
      write(
        path.join(cwd, "CLAUDE.md"),
        "app @missing.md @folder.md @dangling.md @docs/binary.md @../rootdoc.md @" + path.join(base, "outside.md") + " @link-out.md"
      )
      write(path.join(repo, "CLAUDE.md"), "root @rootdoc.md")
      const loaded = yield* load(cwd, { root: repo })
      assert.deepStrictEqual(listed(base, loaded), ["repo/CLAUDE.md (project)", "repo/app/CLAUDE.md (project)"])
      const from = (f: string) => path.join(...f.split("/"))
      assert.deepStrictEqual(
        loaded.skipped.map((s) => [path.relative(base, s.path), path.relative(base, s.importedFrom), s.reason]),
        [
          ["repo/rootdoc.md", from("repo/CLAUDE.md"), "outside the working directory"],
          ["repo/app/missing.md", from("repo/app/CLAUDE.md"), "missing or unreadable"],
          ["repo/app/folder.md", from("repo/app/CLAUDE.md"), "missing or unreadable"],
          ["repo/app/dangling.md", from("repo/app/CLAUDE.md"), "missing or unreadable"],
          ["repo/app/docs/binary.md", from("repo/app/CLAUDE.md"), "missing or unreadable"],
          ["repo/rootdoc.md", from("repo/app/CLAUDE.md"), "outside the working directory"],
          ["outside.md", from("repo/app/CLAUDE.md"), "outside the working directory"],
          ["repo/app/link-out.md", from("repo/app/CLAUDE.md"), "outside the working directory"]
        ]
      )
    }))

  it.effect("size caps: a file over 256 KB is named, not read; imports stop at 200,000 characters", () =>
    Effect.gen(function*() {
      const cwd = tempDir("keel-mem-caps-")
      write(path.join(cwd, "huge.md"), "x".repeat(MemoryFile.MAX_FILE_BYTES + 1))
      for (const n of [1, 2, 3]) write(path.join(cwd, `big${n}.md`), `${n}`.repeat(90_000))
      write(path.join(cwd, "CLAUDE.md"), "start @huge.md @big1.md @big2.md @big3.md")
      const loaded = yield* load(cwd, { root: cwd })
      assert.deepStrictEqual(loaded.files.map((f) => path.basename(f.path)), ["CLAUDE.md", "huge.md", "big1.md", "big2.md"])
      assert.include(loaded.files[1]!.content, "Not included: the file is 256 KB")
      assert.deepStrictEqual(loaded.skipped.map((s) => [path.basename(s.path), s.reason]), [["big3.md", "over the size cap for imports"]])
    }))
})

describe("ContextSnapshot of memory", () => {
  it.effect("records each file's scope and importer and the imports not followed; /context lists them", () =>
    Effect.gen(function*() {
      const cwd = tempDir("keel-mem-snapshot-")
      write(path.join(cwd, "CLAUDE.md"), "start @docs/a.md @missing.md")
      write(path.join(cwd, "docs", "a.md"), "a")
      write(path.join(cwd, "CLAUDE.local.md"), "mine")
      const loaded = yield* load(cwd, { root: cwd })
      const snapshot = ContextSnapshot.make({
        files: loaded.files,
        skipped: loaded.skipped,
        memory: false,
        environment: new Environment.Environment({ cwd, platform: "linux", isGitRepository: false, date: "2025-01-01" }),
        git: undefined,
        cut: []
      })
      assert.deepStrictEqual(snapshot.instructions.map((f) => [path.relative(cwd, f.path), f.scope, f.importedFrom && path.relative(cwd, f.importedFrom)]), [
        ["CLAUDE.md", "project", undefined],
        ["docs/a.md", "project", "CLAUDE.md"],
        ["CLAUDE.local.md", "local", undefined]
      ])
      const lines = ContextSnapshot.describe(snapshot)
      assert.include(lines[0]!, `${path.join(cwd, "CLAUDE.local.md")} (private)`)
      assert.include(lines.join("\n"), `Imports not followed: ${path.join(cwd, "missing.md")} from ${path.join(cwd, "CLAUDE.md")} (missing or unreadable)`)
    }))
})
