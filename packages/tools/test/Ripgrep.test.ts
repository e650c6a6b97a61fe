/**
 * Grep's two searches, ripgrep and the built-in one, on one fixture tree: every case of a table goes
 * through both and must give the same text (a few against an expected text too). Then the ways
 * ripgrep can fail: missing, too old, gone after detection, an error it reports, a pattern it does
 * not take, a timeout; and the switch that forces the built-in search.
 *
 * The comparison needs `rg` on the PATH: without it the comparison is skipped, and says so (a
 * warning here, and the `[needs rg]` count that test/support/SkipReport.ts prints after the run),
 * or fails when `CI` is set (CI installs ripgrep, see .ci/run). No npm package ships an rg binary
 * inside it (@vscode/ripgrep and those built on it download one at install), and Keel's Grep does
 * not need one: without rg it runs its built-in search, whose own tests run everywhere.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Permissions, Tool } from "@keel/core"
import { BuiltinSearch, Grep, GrepOutput, GrepQuery, Ripgrep } from "@keel/tools"
import { ConfigProvider, Effect, Either } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { err, ok } from "./support/Outcome.js"

const hasRipgrep = spawnSync("rg", ["--version"]).status === 0

/**
 * A project with what a search must get right: nested folders, a `.gitignore` at the top and one
 * nested (with a negation), hidden files, a `.git` folder, several file types, CRLF line ends, a
 * missing final line break, non-ASCII text, a binary file, an empty file, a symlink, and files with
 * the same mtime (ordered by path). Each file gets its own age, so "newest first" is fixed.
 */
const fixture = (): string => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "keel-rg-")))
  let age = 1000
  const write = (rel: string, content: string | Uint8Array, ageS = (age -= 10)) => {
    const file = path.join(dir, rel)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, content)
    const t = new Date(Date.UTC(2024, 0, 1) - ageS * 1000)
    fs.utimesSync(file, t, t)
  }
  write(".gitignore", "build/\n*.log\n!keep.log\nsecret/\n")
  write(".git/config", "[core]\n\talpha = true\n")
  write("src/a.ts", "export const alpha = 1\n// TODO: beta\nconst gamma = alpha + 1\nfunction one() {\n  return alpha\n}\n")
  write("src/b.ts", "import { alpha } from './a'\nexport const delta = alpha\n// FIXME: delta and alpha and alpha\n")
  write(
    "src/nested/deep/c.tsx",
    "const Alpha = () => <div>alpha</div>\nexport default Alpha\n\n\nconst x = 12345\nconst y = 'alpha beta'\n"
  )
  write("src/nested/d.ts", "begin\n  alpha one\n  alpha two\nend\nbegin\n  nothing here\nend\n")
  write("lib/util.js", "module.exports = { alpha: 1 }\n// TODO later\n")
  write("lib/util.mjs", "export const alpha = 2;\nexport const beta = 3;\n")
  write("docs/guide.md", "# Guide\nUse alpha wisely.\nALPHA in capitals.\nalpha, again.\n")
  write("docs/README.markdown", "Alphabet soup: alpha beta gamma\n")
  write("scripts/run.sh", "#!/bin/sh\necho alpha # run\nls --verbose -x\n")
  write("config.yaml", "alpha: 1\nbeta: two\n")
  write("data.json", "{ \"alpha\": [1, 2, 3] }")
  write("crlf.txt", "first alpha line\r\nsecond line end\r\nthird alpha end\r\n")
  write("unicode.md", "héllo wörld alpha\nHÉLLO again\nnaïve café\n")
  write(".env", "SECRET_ALPHA=1\n")
  write(".hidden/h.ts", "export const hiddenAlpha = 'alpha'\n")
  write("pkg/.gitignore", "generated.ts\n")
  write("pkg/generated.ts", "export const alpha = 'generated'\n")
  write("pkg/index.ts", "export { alpha } from './impl'\n")
  write("build/out.js", "const alpha = 'built'\n")
  write("secret/key.txt", "alpha secret\n")
  write("debug.log", "alpha in a log\n")
  write("keep.log", "alpha kept although *.log is ignored\n")
  write("bin/blob.bin", new Uint8Array([...new TextEncoder().encode("blobword\n"), 0, 1, 2, 3, ...new TextEncoder().encode("\nblobword\n")]))
  write("late-nul.txt", `${"text ".repeat(1800)}\nlatenul\u0000here\n`)
  write("bom.ts", "\uFEFFalpha bom\nsecond bom line\n")
  write("empty.txt", "")
  write("many.txt", Array.from({ length: 12 }, (_, i) => `item ${i + 1} alpha`).join("\n") + "\n")
  write("twin/one.ts", "alpha twin\n", 5)
  write("twin/two.ts", "alpha twin\n", 5)
  fs.symlinkSync(path.join(dir, "src"), path.join(dir, "linked-src"))
  return dir
}

type Input = typeof Grep.Input.Type

/** The platform, for ripgrep's process. */
const platform = <A, E>(effect: Effect.Effect<A, E, any>) =>
  effect.pipe(Effect.provide(NodeContext.layer), Effect.provide(Permissions.layerDefault)) as Effect.Effect<A, E>

/** Grep's built-in search (`Grep.tool`). */
const builtin = (input: Input, cwd: string) =>
  Effect.either(Grep.tool.call(input, { toolUseId: "t", cwd })).pipe(Effect.provide(Permissions.layerDefault))

/** Ripgrep alone, rendered as Grep renders: fails the test if ripgrep could not answer. */
const ripgrep = (input: Input, cwd: string) =>
  Effect.gen(function*() {
    const query = yield* GrepQuery.make(input, cwd)
    const files = yield* platform(Ripgrep.search(query)).pipe(
      Effect.catchTag("RipgrepError", (e) => Effect.die(`ripgrep gave no answer for ${JSON.stringify(input)}: ${e.message}`))
    )
    return GrepOutput.render(query, files)
  }).pipe(Effect.either)

/** The Grep tool as keel builds it (`Grep.make`: ripgrep when installed). */
const grep = (input: Input, cwd: string, options: Ripgrep.Options = {}) =>
  platform(Effect.flatMap(Grep.makeWith(options), (tool) => Effect.either(tool.call(input, { toolUseId: "t", cwd }))))

/** Text of an outcome, success or failure, for comparing two searches. */
const show = (e: Either.Either<Tool.CallResult, Tool.ToolError>) =>
  Either.isRight(e) ? `ok:\n${String(Tool.outputOf(e.right))}` : `error:\n${e.left.message}`

/** One row of the table: an input, and optionally the exact text both searches must print. */
interface Case {
  readonly name: string
  readonly input: Input
  readonly expected?: string
}

const cases: ReadonlyArray<Case> = [
  // files_with_matches (the default): newest first, .gitignore and .git respected, hidden files in, binary out.
  {
    name: "files with matches, default mode",
    input: { pattern: "alpha" },
    expected: [
      "twin/one.ts",
      "twin/two.ts",
      "many.txt",
      "bom.ts",
      "keep.log",
      "pkg/index.ts",
      ".hidden/h.ts",
      "unicode.md",
      "crlf.txt",
      "data.json",
      "config.yaml",
      "scripts/run.sh",
      "docs/README.markdown",
      "docs/guide.md",
      "lib/util.mjs",
      "lib/util.js",
      "src/nested/d.ts",
      "src/nested/deep/c.tsx",
      "src/b.ts",
      "src/a.ts"
    ].join("\n")
  },
  { name: "files with matches, explicit mode", input: { pattern: "TODO|FIXME", output_mode: "files_with_matches" } },
  { name: "hidden files are searched", input: { pattern: "SECRET_ALPHA" }, expected: ".env" },
  {
    name: "ignored, .git and binary files are not",
    input: { pattern: "'built'|'generated'|alpha secret|in a log|alpha = true|blobword" },
    expected: "No files found"
  },
  // content
  {
    name: "content with line numbers",
    input: { pattern: "TODO", output_mode: "content" },
    expected: "lib/util.js:2:// TODO later\nsrc/a.ts:2:// TODO: beta"
  },
  { name: "content of every alpha", input: { pattern: "alpha", output_mode: "content", head_limit: 0 } },
  { name: "content without line numbers", input: { pattern: "beta", output_mode: "content", "-n": false } },
  {
    name: "content with context lines, -- between groups, none between files",
    input: { pattern: "alpha", output_mode: "content", "-C": 1, path: "src" },
    expected: [
      "src/nested/d.ts-1-begin",
      "src/nested/d.ts:2:  alpha one",
      "src/nested/d.ts:3:  alpha two",
      "src/nested/d.ts-4-end",
      "src/nested/deep/c.tsx:1:const Alpha = () => <div>alpha</div>",
      "src/nested/deep/c.tsx-2-export default Alpha",
      "--",
      "src/nested/deep/c.tsx-5-const x = 12345",
      "src/nested/deep/c.tsx:6:const y = 'alpha beta'",
      "src/b.ts:1:import { alpha } from './a'",
      "src/b.ts:2:export const delta = alpha",
      "src/b.ts:3:// FIXME: delta and alpha and alpha",
      "src/a.ts:1:export const alpha = 1",
      "src/a.ts-2-// TODO: beta",
      "src/a.ts:3:const gamma = alpha + 1",
      "src/a.ts-4-function one() {",
      "src/a.ts:5:  return alpha",
      "src/a.ts-6-}"
    ].join("\n")
  },
  { name: "context after only", input: { pattern: "begin", output_mode: "content", "-A": 2 } },
  { name: "context before only", input: { pattern: "^end$", output_mode: "content", "-B": 2 } },
  { name: "-A and -B override -C", input: { pattern: "TODO", output_mode: "content", "-C": 3, "-A": 0, "-B": 1 } },
  { name: "context past the start and end of a file", input: { pattern: "alpha", output_mode: "content", "-C": 5, path: "config.yaml" } },
  { name: "context without line numbers", input: { pattern: "gamma", output_mode: "content", "-C": 1, "-n": false } },
  // count: matches, not lines
  {
    name: "count",
    input: { pattern: "alpha", output_mode: "count", path: "src" },
    expected: "src/nested/d.ts:2\nsrc/nested/deep/c.tsx:2\nsrc/b.ts:4\nsrc/a.ts:3"
  },
  { name: "count, ignoring case", input: { pattern: "alpha", output_mode: "count", "-i": true } },
  // case
  { name: "-i", input: { pattern: "ALPHA", "-i": true, output_mode: "content" } },
  {
    name: "case-sensitive by default",
    input: { pattern: "ALPHA", output_mode: "content" },
    expected: ".env:1:SECRET_ALPHA=1\ndocs/guide.md:3:ALPHA in capitals."
  },
  { name: "-i on non-ASCII text", input: { pattern: "héllo", "-i": true, output_mode: "content" } },
  // glob and type
  { name: "glob on names", input: { pattern: "alpha", glob: "*.ts" } },
  { name: "glob with braces", input: { pattern: "alpha", glob: "*.{ts,tsx}", output_mode: "count" } },
  { name: "glob with a folder", input: { pattern: "alpha", glob: "src/**/*.ts" } },
  { name: "glob with a deep folder", input: { pattern: "alpha", glob: "**/deep/*" } },
  { name: "glob naming an ignored file does not bring it back", input: { pattern: "alpha", glob: "*.log" }, expected: "keep.log" },
  { name: "an empty glob counts as none", input: { pattern: "TODO", glob: "" }, expected: "lib/util.js\nsrc/a.ts" },
  { name: "glob matching nothing", input: { pattern: "alpha", glob: "*.py" }, expected: "No files found" },
  { name: "type ts", input: { pattern: "alpha", type: "ts" } },
  { name: "type js", input: { pattern: "alpha", type: "js", output_mode: "content" } },
  { name: "type md (.md and .markdown)", input: { pattern: "alpha", type: "md", "-i": true } },
  { name: "type and glob together", input: { pattern: "alpha", type: "ts", glob: "src/**" } },
  { name: "type yaml", input: { pattern: "alpha", type: "yaml" }, expected: "config.yaml" },
  { name: "type json, content", input: { pattern: "alpha", type: "json", output_mode: "content" } },
  // path
  { name: "a folder", input: { pattern: "alpha", path: "src/nested" } },
  { name: "a file", input: { pattern: "alpha", path: "src/a.ts", output_mode: "content" } },
  { name: "a file the glob excludes", input: { pattern: "alpha", path: "src/a.ts", glob: "*.md" }, expected: "No files found" },
  { name: "an ignored file named directly", input: { pattern: "alpha", path: "debug.log", output_mode: "content" } },
  { name: "an ignored folder named directly", input: { pattern: "alpha", path: "build" }, expected: "build/out.js" },
  { name: "an absolute path", input: { pattern: "delta", path: "<dir>/src", output_mode: "count" } },
  // multiline
  {
    name: "multiline: a match across lines marks every line",
    input: { pattern: "alpha = 1\\n//", multiline: true, output_mode: "content" },
    expected: "src/a.ts:1:export const alpha = 1\nsrc/a.ts:2:// TODO: beta"
  },
  { name: "multiline: . matches newlines", input: { pattern: "begin.*?end", multiline: true, output_mode: "content" } },
  { name: "multiline: count", input: { pattern: "begin.*?end", multiline: true, output_mode: "count" } },
  { name: "multiline: context", input: { pattern: "function one\\(\\) \\{\\n\\s+return", multiline: true, output_mode: "content", "-C": 1 } },
  { name: "multiline: a match ending with a line break", input: { pattern: "alpha two\\n", multiline: true, output_mode: "content" } },
  { name: "multiline: files", input: { pattern: "TODO.*\\n.*gamma", multiline: true } },
  // patterns
  { name: "word boundaries", input: { pattern: "\\bbeta\\b", output_mode: "content" } },
  { name: "anchors", input: { pattern: "^const", output_mode: "content" } },
  { name: "end anchor on CRLF lines", input: { pattern: "end$", output_mode: "content" } },
  { name: "digits and repetition", input: { pattern: "[0-9]{3,}", output_mode: "content" } },
  { name: "escaped characters", input: { pattern: "\\(\\) =>", output_mode: "content" } },
  { name: "a pattern starting with a dash", input: { pattern: "--verbose", output_mode: "content" }, expected: "scripts/run.sh:3:ls --verbose -x" },
  { name: "a NUL past the first 8,192 characters does not make a file binary", input: { pattern: "latenul" }, expected: "late-nul.txt" },
  { name: "a byte-order mark stays in the line", input: { pattern: "bom", output_mode: "content" }, expected: "bom.ts:1:\uFEFFalpha bom\nbom.ts:2:second bom line" },
  { name: "a byte-order mark is not the start of the line", input: { pattern: "^alpha bom" }, expected: "No files found" },
  { name: "no match in content mode", input: { pattern: "zebra", output_mode: "content" }, expected: "No matches found" },
  { name: "no match in count mode", input: { pattern: "zebra", output_mode: "count" }, expected: "No files found" },
  // paging
  {
    name: "head_limit and offset",
    input: { pattern: "alpha", output_mode: "content", path: "many.txt", head_limit: 3, offset: 4 },
    expected: "many.txt:5:item 5 alpha\nmany.txt:6:item 6 alpha\nmany.txt:7:item 7 alpha\n(5 more results: use offset 7 to see them.)"
  },
  { name: "head_limit on files", input: { pattern: "alpha", head_limit: 5 } },
  { name: "offset past the end", input: { pattern: "alpha", offset: 500 }, expected: "No files found" },
  { name: "head_limit 0 means all", input: { pattern: "item", output_mode: "content", head_limit: 0 } },
  // errors the query catches, the same for both
  { name: "an invalid pattern", input: { pattern: "(" } },
  { name: "an unknown type", input: { pattern: "alpha", type: "cobol" } },
  { name: "a missing path", input: { pattern: "alpha", path: "nowhere" } }
]

const withDir = (input: Input, dir: string): Input =>
  input.path?.startsWith("<dir>") === true ? { ...input, path: input.path.replace("<dir>", dir) } : input

if (!hasRipgrep && process.env.CI) {
  describe("ripgrep", () => {
    it("is on the PATH", () => {
      assert.fail(
        "rg is not on the PATH, so Grep's two searches cannot be compared. CI must install ripgrep " +
          "(.ci/run runs `apt-get install -y ripgrep` when rg is missing)."
      )
    })
  })
}

if (!hasRipgrep && !process.env.CI) {
  console.warn(
    "ripgrep (rg) is not on the PATH: the comparison of Grep's ripgrep and built-in searches is skipped " +
      "(the tests marked [needs rg]); install ripgrep to run it."
  )
}

describe.skipIf(!hasRipgrep)("Grep: ripgrep and the built-in search give the same output [needs rg]", () => {
  const dir = fixture()

  for (const c of cases) {
    it.effect(c.name, () =>
      Effect.gen(function*() {
        const input = withDir(c.input, dir)
        const expected = show(yield* builtin(input, dir))
        if (c.expected !== undefined) assert.strictEqual(expected, `ok:\n${c.expected}`, "the built-in search")
        const queryFails = Either.isLeft(yield* Effect.either(GrepQuery.make(input, dir)))
        if (!queryFails) assert.strictEqual(show(yield* ripgrep(input, dir)), expected, "ripgrep alone")
        assert.strictEqual(show(yield* grep(input, dir)), expected, "the Grep tool")
      }))
  }

  it.effect("a pattern ripgrep does not take (look-around) falls back to the built-in search", () =>
    Effect.gen(function*() {
      const input: Input = { pattern: "alpha(?= \\+)", output_mode: "content" }
      const query = yield* GrepQuery.make(input, dir)
      const failure = yield* Effect.flip(platform(Ripgrep.search(query)))
      assert.strictEqual(failure._tag, "RipgrepError")
      assert.strictEqual((failure as Ripgrep.RipgrepError).reason, "UnsupportedPattern")
      assert.include(failure.message, "look-around")
      assert.strictEqual(ok(yield* grep(input, dir)), "src/a.ts:3:const gamma = alpha + 1")
      assert.strictEqual(ok(yield* builtin(input, dir)), "src/a.ts:3:const gamma = alpha + 1")
    }))

  it.effect("ripgrep's own error for a bad regex is clear", () =>
    Effect.gen(function*() {
      const query = yield* GrepQuery.make({ pattern: "alpha" }, dir)
      const failure = yield* Effect.flip(platform(Ripgrep.search({ ...query, pattern: "(alpha" })))
      assert.strictEqual((failure as Ripgrep.RipgrepError).reason, "UnsupportedPattern")
      assert.match(failure.message, /^ripgrep failed \(exit code 2\): regex parse error:[\s\S]*unclosed group/)
      // Through the tool, a pattern neither engine takes is reported the same way by both searches.
      assert.strictEqual(
        err(yield* grep({ pattern: "(alpha" }, dir)),
        "Invalid regular expression \"(alpha\": Invalid regular expression: /(alpha/gs: Unterminated group"
      )
    }))

  it.effect("the built-in search agrees with ripgrep file by file, not only in the rendered text", () =>
    Effect.gen(function*() {
      const query = yield* GrepQuery.make({ pattern: "alpha|beta", output_mode: "content", "-C": 1, "-i": true }, dir)
      const strip = (files: ReadonlyArray<GrepOutput.FileMatches>) =>
        [...files].sort(GrepOutput.byRecency).map((f) => ({ path: f.path, count: f.count, lines: f.lines }))
      const fromRg = yield* platform(Ripgrep.search(query))
      const fromBuiltin = yield* BuiltinSearch.search(query)
      assert.deepStrictEqual(strip(fromRg), strip(fromBuiltin))
    }))
})

/** A stand-in rg: a shell script answering `--version` with `version`, and searches with `search`. */
const fakeRipgrep = (version: string, search: string): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keel-fake-rg-"))
  const file = path.join(dir, "rg")
  fs.writeFileSync(
    file,
    `#!/bin/sh\nif [ "$1" = "--version" ]; then echo "${version}"; exit 0; fi\n${search}\n`,
    { mode: 0o755 }
  )
  return file
}

describe("Grep: when ripgrep is missing or fails", () => {
  const project = () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "keel-rg-fail-")))
    fs.writeFileSync(path.join(dir, "a.txt"), "alpha\n")
    return dir
  }

  it.effect("no rg: the built-in search answers", () =>
    Effect.gen(function*() {
      const dir = project()
      const out = ok(yield* grep({ pattern: "alpha", output_mode: "content" }, dir, { command: path.join(dir, "no-such-rg") }))
      assert.strictEqual(out, "a.txt:1:alpha")
    }))

  it.effect("an rg older than 12: the built-in search answers", () =>
    Effect.gen(function*() {
      const dir = project()
      const old = fakeRipgrep("ripgrep 11.0.2", "echo 'error: unknown flag' >&2; exit 2")
      assert.strictEqual(ok(yield* grep({ pattern: "alpha" }, dir, { command: old })), "a.txt")
    }))

  it.effect("rg detected once, then gone: the call falls back to the built-in search", () =>
    Effect.gen(function*() {
      const dir = project()
      const rg = fakeRipgrep("ripgrep 14.1.0", "echo 'should not run' >&2; exit 2")
      const tool = yield* platform(Grep.makeWith({ command: rg }))
      assert.include(err(yield* Effect.either(platform(tool.call({ pattern: "alpha" }, { toolUseId: "t", cwd: dir })))), "should not run")
      fs.rmSync(rg)
      assert.strictEqual(ok(yield* Effect.either(platform(tool.call({ pattern: "alpha" }, { toolUseId: "t", cwd: dir })))), "a.txt")
    }))

  it.effect("an error rg reports is a clear error result", () =>
    Effect.gen(function*() {
      const dir = project()
      const rg = fakeRipgrep("ripgrep 13.0.0", "echo 'rg: something broke' >&2; exit 2")
      assert.strictEqual(err(yield* grep({ pattern: "alpha" }, dir, { command: rg })), "ripgrep failed (exit code 2): rg: something broke")
    }))

  it.live("a search that runs too long is stopped and reported", () =>
    Effect.gen(function*() {
      const dir = project()
      const rg = fakeRipgrep("ripgrep 13.0.0", "read line # waits on stdin, which stays open")
      const started = Date.now()
      const message = err(yield* grep({ pattern: "alpha" }, dir, { command: rg, timeout: "300 millis" }))
      assert.strictEqual(message, "The search took longer than 300ms and was stopped. Narrow it with path, glob or type.")
      assert.isBelow(Date.now() - started, 10_000)
    }))

  it.effect(`${Grep.USE_BUILTIN_ENV}=1 forces the built-in search`, () =>
    Effect.gen(function*() {
      const dir = project()
      const rg = fakeRipgrep("ripgrep 13.0.0", "echo 'rg: should not run' >&2; exit 2")
      const forced = ConfigProvider.fromMap(new Map([[Grep.USE_BUILTIN_ENV, "1"]]))
      const out = yield* grep({ pattern: "alpha" }, dir, { command: rg }).pipe(Effect.withConfigProvider(forced))
      assert.strictEqual(ok(out), "a.txt")
      const unset = ConfigProvider.fromMap(new Map())
      assert.include(err(yield* grep({ pattern: "alpha" }, dir, { command: rg }).pipe(Effect.withConfigProvider(unset))), "should not run")
    }))
})
