/**
 * Grep and Glob show only what Read may see (issue 16, items 2 and 3): files a `Read` deny rule
 * covers, by any name (a symlink, a symlinked folder), are skipped silently, and so are files whose
 * real path leaves the workspace (symlinked files and folders, `..` in a Glob pattern). Grep is
 * checked on the built-in search and on ripgrep.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Permissions, type Tool } from "@keel/core"
import { Glob, Grep, GrepQuery, Ripgrep } from "@keel/tools"
import { Effect, type Either } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ok } from "./support/Outcome.js"

const hasRipgrep = spawnSync("rg", ["--version"]).status === 0

/**
 * `top/w` the workspace: `.env` and `config/prod.env` (secrets), `src/a.ts`, `link -> .env`,
 * `envdir -> .`, `out -> ../outside`, `toleak -> ../outside/leak.txt`, `config/current -> prod.env`;
 * `top/outside/leak.txt` outside it. Every file holds the word TOKEN.
 */
const fixture = () => {
  const top = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "keel-scope-")))
  const w = path.join(top, "w")
  const write = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(top, rel)), { recursive: true })
    fs.writeFileSync(path.join(top, rel), text)
  }
  write("w/.env", "TOKEN=hunter2-dotenv\n")
  write("w/config/prod.env", "TOKEN=hunter2-prod\n")
  write("w/src/a.ts", "export const TOKEN = 'public'\n")
  write("outside/leak.txt", "TOKEN=hunter2-outside\n")
  fs.symlinkSync(".env", path.join(w, "link"))
  fs.symlinkSync(".", path.join(w, "envdir"))
  fs.symlinkSync("../outside", path.join(w, "out"))
  fs.symlinkSync("../outside/leak.txt", path.join(w, "toleak"))
  fs.symlinkSync("prod.env", path.join(w, "config", "current"))
  return { top, w }
}

const DENY = ["Read(./.env)", "Read(./config/*.env)"]

const policy = (deny: ReadonlyArray<string>) => Permissions.layer(Permissions.config({ deny }).config)

type Call = (tool: Tool.Tool<any, Permissions.Permissions>, input: unknown, cwd: string) => Effect.Effect<Either.Either<Tool.CallResult, Tool.ToolError>>

const callWith = (deny: ReadonlyArray<string>): Call => (tool, input, cwd) =>
  Effect.either(tool.call(input, { toolUseId: "t", cwd })).pipe(Effect.provide(policy(deny)))

const greps: ReadonlyArray<readonly [string, Effect.Effect<Tool.Tool<any, Permissions.Permissions>>]> = [
  ["built-in search", Effect.succeed(Grep.tool)],
  ...(hasRipgrep ? [["ripgrep", Effect.provide(Grep.make, NodeContext.layer)] as const] : [])
]

/** Nothing of a secret: neither its text nor its file's names. */
const assertClean = (output: string, what: string) => {
  assert.notInclude(output, "hunter2", what)
  for (const name of [".env", "link", "prod.env", "current", "toleak", "leak.txt"]) assert.notInclude(output, name, `${what}: ${name}`)
}

describe("Grep skips what Read deny rules cover and what lies outside the workspace", () => {
  for (const [name, make] of greps) {
    it.effect(`${name}: every output mode, case-insensitive, multiline, with globs`, () =>
      Effect.gen(function*() {
        const { w } = fixture()
        const tool = yield* make
        const call = callWith(DENY)
        for (
          const input of [
            { pattern: "TOKEN" },
            { pattern: "hunter2" },
            { pattern: "TOKEN", output_mode: "content" },
            { pattern: "TOKEN", output_mode: "count" },
            { pattern: "token", "-i": true, output_mode: "content", "-C": 3 },
            { pattern: "TOKEN=.*\\n?", multiline: true, output_mode: "content" },
            { pattern: "TOKEN", glob: "*.env", output_mode: "content" },
            { pattern: "TOKEN", glob: "**/*", output_mode: "content" },
            { pattern: "TOKEN", path: "config", output_mode: "content" },
            { pattern: "TOKEN", path: "envdir", output_mode: "content" },
            { pattern: "TOKEN", head_limit: 0 }
          ]
        ) {
          const output = ok(yield* call(tool, input, w))
          assertClean(output, JSON.stringify(input))
        }
        // What is not denied is still found.
        assert.include(ok(yield* call(tool, { pattern: "public", output_mode: "content" }, w)), "src/a.ts:1:")
      }))
  }

  it("ripgrep is told the deny rules as --glob exclusions under the searched folder", () =>
    Effect.gen(function*() {
      const { w } = fixture()
      const query = yield* GrepQuery.make({ pattern: "x" }, w)
      const argv = Ripgrep.args({ ...query, excludeGlobs: ["!/.env", "!/config/*.env"] }, ".")
      assert.include(argv, "--glob=!/.env")
      assert.include(argv, "--glob=!/config/*.env")
    }).pipe(Effect.runSync))
})

describe("Glob lists neither denied files nor files outside the workspace", () => {
  it.effect("denied names, by any path: no .env, no link to it, no symlinked folder's copy", () =>
    Effect.gen(function*() {
      const { w } = fixture()
      const call = callWith(DENY)
      for (const pattern of ["**/*", "**", ".env*", "*", "**/*.env", "envdir/*", "envdir/**/*", "config/*", "{.env,link}"]) {
        const output = ok(yield* call(Glob.tool, { pattern }, w))
        assertClean(output, pattern)
      }
      assert.include(ok(yield* call(Glob.tool, { pattern: "**/*.ts" }, w)), path.join(w, "src", "a.ts"))
    }))

  // A pattern whose fixed prefix leaves the workspace (`../outside/*`, `/etc/*`, `out/*`) asks
  // before the call runs (PathRules.test.ts); what climbs out past a glob is filtered here.
  it.effect("patterns that climb out past a glob (**/../.., braces, a link to a file outside) list nothing outside", () =>
    Effect.gen(function*() {
      const { top, w } = fixture()
      const call = callWith([])
      for (
        const pattern of ["**/../../outside/*", "*/../../*/*", "**/../*", "{..,.}/outside/*", "{src,..}/../outside/*", "toleak", "**/leak.txt"]
      ) {
        const output = ok(yield* call(Glob.tool, { pattern }, w))
        assert.notInclude(output, "leak.txt", pattern)
        assert.notInclude(output, path.join(top, "outside"), pattern)
      }
    }))
})
