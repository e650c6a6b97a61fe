/**
 * Glob and Grep on a real temporary tree with a `.gitignore`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Permissions } from "@keel/core"
import { Glob, Grep } from "@keel/tools"
import { Effect } from "effect"
import { NodeContext } from "@effect/platform-node"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { err, ok } from "./support/Outcome.js"

/** A project: src/a.ts (oldest), src/b.ts, docs/guide.md (newest), an ignored build/ and .env. */
const project = () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "keel-search-")))
  const write = (rel: string, text: string, ageS: number) => {
    const file = path.join(dir, rel)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, text)
    const t = new Date(Date.now() - ageS * 1000)
    fs.utimesSync(file, t, t)
  }
  write(".gitignore", "build/\n*.log\n", 100)
  write("src/a.ts", "export const alpha = 1\n// TODO: beta\nconst gamma = alpha + 1\n", 30)
  write("src/b.ts", "import { alpha } from './a'\nexport const delta = alpha\n", 20)
  write("docs/guide.md", "# Guide\nUse alpha wisely.\n", 10)
  write("build/out.js", "const alpha = 'generated'\n", 5)
  write("debug.log", "alpha in a log\n", 5)
  return dir
}

const call = <I>(
  tool: { call: (i: I, c: { toolUseId: string; cwd: string }) => Effect.Effect<unknown, any, Permissions.Permissions> },
  input: I,
  cwd: string
) => Effect.either(tool.call(input, { toolUseId: "t", cwd }) as Effect.Effect<string, any, Permissions.Permissions>).pipe(Effect.provide(Permissions.layerDefault))

describe("Glob", () => {
  it.effect("matches a pattern, newest first, skipping what .gitignore ignores", () =>
    Effect.gen(function*() {
      const dir = project()
      assert.strictEqual(ok(yield* call(Glob.tool, { pattern: "**/*.ts" }, dir)), [path.join(dir, "src/b.ts"), path.join(dir, "src/a.ts")].join("\n"))
      const all = ok(yield* call(Glob.tool, { pattern: "**/*" }, dir)).split("\n")
      assert.notInclude(all, path.join(dir, "build/out.js"))
      assert.notInclude(all, path.join(dir, "debug.log"))
      assert.strictEqual(all[0], path.join(dir, "docs/guide.md"))
      assert.strictEqual(ok(yield* call(Glob.tool, { pattern: "*.py" }, dir)), "No files found")
      assert.include(err(yield* call(Glob.tool, { pattern: "*", path: "missing" }, dir)), "Path does not exist")
    }))
})

describe("Grep", () => {
  it.effect("files_with_matches by default, newest first; content with line numbers and context; count", () =>
    Effect.gen(function*() {
      const dir = project()
      assert.strictEqual(ok(yield* call(Grep.tool, { pattern: "alpha" }, dir)), "docs/guide.md\nsrc/b.ts\nsrc/a.ts")
      assert.strictEqual(
        ok(yield* call(Grep.tool, { pattern: "TODO", output_mode: "content", "-C": 1 }, dir)),
        "src/a.ts-1-export const alpha = 1\nsrc/a.ts:2:// TODO: beta\nsrc/a.ts-3-const gamma = alpha + 1"
      )
      assert.strictEqual(ok(yield* call(Grep.tool, { pattern: "alpha", output_mode: "count", type: "ts" }, dir)), "src/b.ts:2\nsrc/a.ts:2")
      assert.strictEqual(ok(yield* call(Grep.tool, { pattern: "GUIDE", "-i": true, glob: "*.md" }, dir)), "docs/guide.md")
      assert.strictEqual(ok(yield* call(Grep.tool, { pattern: "generated" }, dir)), "No files found")
    }))

  it.effect("multiline patterns, paging with head_limit and offset, and clear errors", () =>
    Effect.gen(function*() {
      const dir = project()
      assert.strictEqual(
        ok(yield* call(Grep.tool, { pattern: "alpha = 1\\n//", multiline: true, output_mode: "content" }, dir)),
        "src/a.ts:1:export const alpha = 1\nsrc/a.ts:2:// TODO: beta"
      )
      assert.strictEqual(
        ok(yield* call(Grep.tool, { pattern: "alpha", head_limit: 1, offset: 1 }, dir)),
        "src/b.ts\n(1 more results: use offset 2 to see them.)"
      )
      assert.include(err(yield* call(Grep.tool, { pattern: "(" }, dir)), "Invalid regular expression")
      assert.include(err(yield* call(Grep.tool, { pattern: "a", type: "cobol" }, dir)), "Unknown type")
    }))

  it.effect("matches line by line unless multiline, and a final line break adds no line", () =>
    Effect.gen(function*() {
      const dir = project()
      // Without multiline, \s cannot reach the next line (as in ripgrep).
      assert.strictEqual(ok(yield* call(Grep.tool, { pattern: "1\\s+//", output_mode: "content" }, dir)), "No matches found")
      assert.strictEqual(
        ok(yield* call(Grep.tool, { pattern: "1\\s+//", output_mode: "content", multiline: true }, dir)),
        "src/a.ts:1:export const alpha = 1\nsrc/a.ts:2:// TODO: beta"
      )
      // Context stops at the last line: no empty line after the file's final line break.
      assert.strictEqual(
        ok(yield* call(Grep.tool, { pattern: "gamma", output_mode: "content", "-A": 3 }, dir)),
        "src/a.ts:3:const gamma = alpha + 1"
      )
      // A match ending with a line break marks only the line it ends.
      assert.strictEqual(
        ok(yield* call(Grep.tool, { pattern: "wisely\\.\\n", output_mode: "content", multiline: true }, dir)),
        "docs/guide.md:2:Use alpha wisely."
      )
      assert.strictEqual(ok(yield* call(Grep.tool, { pattern: "a", output_mode: "count", path: "src/b.ts" }, dir)), "src/b.ts:6")
      assert.include(err(yield* call(Grep.tool, { pattern: "a", type: "toString" }, dir)), "Unknown type")
    }))
})

describe("Glob and Grep skip what is not a regular file", () => {
  it.effect("a named pipe in the tree is skipped (not listed, never opened); named as the path it is refused at once", () =>
    Effect.gen(function*() {
      const dir = project()
      const fifo = path.join(dir, "src", "pipe.ts")
      execFileSync("mkfifo", [fifo])
      assert.strictEqual(ok(yield* call(Glob.tool, { pattern: "**/*.ts" }, dir)), [path.join(dir, "src/b.ts"), path.join(dir, "src/a.ts")].join("\n"))
      assert.strictEqual(ok(yield* call(Grep.tool, { pattern: "alpha" }, dir)), "docs/guide.md\nsrc/b.ts\nsrc/a.ts")
      const refusal = `${fifo} is a named pipe (FIFO), not a file or a folder; only files and folders are searched.`
      assert.strictEqual(err(yield* call(Grep.tool, { pattern: "alpha", path: fifo }, dir)), refusal)
      // ripgrep, when installed, would open the pipe named as its path and wait for ever.
      const rg = yield* Grep.makeWith().pipe(Effect.provide(NodeContext.layer))
      assert.strictEqual(err(yield* call(rg, { pattern: "alpha", path: fifo }, dir)), refusal)
      assert.strictEqual(ok(yield* call(rg, { pattern: "alpha" }, dir)), "docs/guide.md\nsrc/b.ts\nsrc/a.ts")
    }), 10_000)
})
