/**
 * Path rules that do not leak (issue 16, items 2 and 3): a rule is matched against the path as given
 * (normalized) and its real path, so symlinks, `..`, repeated separators, absolute and `~` paths all
 * meet a deny on `Read(./.env)`; Read deny rules cover Grep and Glob; Glob's pattern counts for the
 * workspace boundary; `ReadRules` says what a search may show.
 */
import { assert, describe, it } from "@effect/vitest"
import { Mentions, PathBoundary, PermissionRule, Permissions, ReadRules } from "@keel/core"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/**
 * A workspace `w` with `.env` (the secret), `src/a.ts`, a symlink `link -> .env`, a folder link
 * `envdir -> .` (so `envdir/.env` is `.env`), `out -> ../outside` (a folder outside the workspace,
 * holding `leak.txt`) and `toshadow -> ../outside/leak.txt`.
 */
const fixture = () => {
  const top = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "keel-pathrules-")))
  const w = path.join(top, "w")
  const outside = path.join(top, "outside")
  fs.mkdirSync(path.join(w, "src"), { recursive: true })
  fs.mkdirSync(outside)
  fs.writeFileSync(path.join(w, ".env"), "SECRET=1\n")
  fs.writeFileSync(path.join(w, "src", "a.ts"), "export {}\n")
  fs.writeFileSync(path.join(outside, "leak.txt"), "outside\n")
  fs.symlinkSync(".env", path.join(w, "link"))
  fs.symlinkSync(".", path.join(w, "envdir"))
  fs.symlinkSync("../outside", path.join(w, "out"))
  fs.symlinkSync("../outside/leak.txt", path.join(w, "toleak"))
  return { top, w, outside }
}

const request = (cwd: string, toolName: string, input: unknown, isReadOnly = true): Permissions.Request => ({
  toolName,
  input,
  isReadOnly,
  toolUseId: "toolu_1",
  cwd
})

const decide = (cwd: string, rules: Parameters<typeof Permissions.config>[0], toolName: string, input: unknown) =>
  Permissions.decide(Permissions.config(rules).config, request(cwd, toolName, input))._tag

describe("PathBoundary", () => {
  it("resolves symlinks through every component, normalizes .., and resolves a missing file through its folder", () => {
    const { outside, w } = fixture()
    assert.strictEqual(PathBoundary.realPath(path.join(w, "link")), path.join(w, ".env"))
    assert.strictEqual(PathBoundary.realPath(path.join(w, "envdir", "envdir", "link")), path.join(w, ".env"))
    assert.strictEqual(PathBoundary.realPath(path.join(w, "src", "..", ".env")), path.join(w, ".env"))
    assert.strictEqual(PathBoundary.realPath(path.join(w, "out", "new", "file.txt")), path.join(outside, "new", "file.txt"))
    assert.deepStrictEqual(PathBoundary.forms(path.join(w, "link")), [path.join(w, "link"), path.join(w, ".env")])
  })
})

describe("Read deny rules match every way of naming the file", () => {
  const deny = { deny: ["Read(./.env)"] }

  it("a symlink, a symlinked folder, .., //, an absolute path", () => {
    const { w } = fixture()
    for (
      const file of [
        ".env",
        "./.env",
        "link",
        "./sub/../.env",
        "src/../.env",
        ".//.env",
        "envdir/.env",
        "envdir/link",
        "envdir/envdir/./.env",
        path.join(w, ".env"),
        path.join(w, "src", "..", "link")
      ]
    ) {
      assert.strictEqual(decide(w, deny, "Read", { file_path: file }), "Deny", file)
    }
    assert.strictEqual(decide(w, deny, "Read", { file_path: "src/a.ts" }), "Allow")
    assert.strictEqual(decide(w, deny, "Read", { file_path: ".env.example" }), "Allow")
  })

  it("absolute (//) and ~ rules, and a rule written under a symlinked folder", () => {
    const { top, w } = fixture()
    assert.strictEqual(decide(w, { deny: [`Read(/${w}/.env)`] }, "Read", { file_path: "link" }), "Deny")
    const home = process.env.HOME
    try {
      process.env.HOME = w
      assert.strictEqual(decide(top, { deny: ["Read(~/.env)"] }, "Read", { file_path: "w/link" }), "Deny")
      assert.strictEqual(decide(top, { deny: ["Read(~/.env)"] }, "Read", { file_path: path.join(w, "envdir", ".env") }), "Deny")
    } finally {
      process.env.HOME = home
    }
    // The session's cwd is a symlink to the workspace: the rule resolves through it.
    const alias = path.join(top, "alias")
    fs.symlinkSync("w", alias)
    assert.strictEqual(decide(alias, deny, "Read", { file_path: path.join(w, ".env") }), "Deny")
    assert.strictEqual(decide(w, deny, "Read", { file_path: path.join(alias, "link") }), "Deny")
  })

  it("Edit and Write deny rules hold for a symlink too; a folder rule covers a link into it", () => {
    const { w } = fixture()
    assert.strictEqual(decide(w, { deny: ["Edit(./.env)"] }, "Edit", { file_path: "link" }), "Deny")
    assert.strictEqual(decide(w, { deny: ["Write(./.env)"] }, "Write", { file_path: "envdir/.env" }), "Deny")
    assert.strictEqual(decide(w, { deny: ["Read(./out/**)"] }, "Read", { file_path: "toleak" }), "Deny")
  })

  it("an allow rule holds only when the real path matches too", () => {
    const { w } = fixture()
    // `toleak` is inside the workspace by name, but its target is outside: `Read(./**)` does not allow it.
    assert.isFalse(PermissionRule.matches(PermissionRule.parse("Read(./**)")!, "Read", { file_path: path.join(w, "toleak") }, w, "allow"))
    assert.isTrue(PermissionRule.matches(PermissionRule.parse("Read(./**)")!, "Read", { file_path: path.join(w, "src/a.ts") }, w, "allow"))
    assert.strictEqual(decide(w, { allow: ["Read(./**)"] }, "Read", { file_path: "toleak" }), "Ask")
  })

  it("Grep and Glob whose path a Read rule covers are denied", () => {
    const { w } = fixture()
    assert.strictEqual(decide(w, deny, "Grep", { pattern: "SECRET", path: ".env" }), "Deny")
    assert.strictEqual(decide(w, deny, "Grep", { pattern: "SECRET", path: "link" }), "Deny")
    assert.strictEqual(decide(w, deny, "Glob", { pattern: "*", path: ".env" }), "Deny")
    assert.strictEqual(decide(w, deny, "Glob", { pattern: ".env" }), "Deny")
    assert.strictEqual(decide(w, { deny: ["Read(./src/**)"] }, "Glob", { pattern: "src/*.ts" }), "Deny")
    assert.strictEqual(decide(w, { deny: ["Read"] }, "Grep", { pattern: "x" }), "Deny")
    // The workspace itself is not covered: the search runs, and skips the file (see ReadRules).
    assert.strictEqual(decide(w, deny, "Grep", { pattern: "SECRET" }), "Allow")
    assert.strictEqual(decide(w, deny, "Glob", { pattern: "**/*" }), "Allow")
  })
})

describe("@mentions", () => {
  it("a mention of a denied file by any name is refused", () => {
    const { w } = fixture()
    const denied = Mentions.denyRules(Permissions.config({ deny: ["Read(./.env)"] }).config, w)
    for (const written of [".env", "link", "envdir/.env", "src/../.env", ".//.env"]) {
      assert.include(denied(Mentions.resolve(w, written)), "Read(./.env)", written)
    }
    assert.isUndefined(denied(Mentions.resolve(w, "src/a.ts")))
  })
})

describe("Glob's pattern counts for the workspace boundary", () => {
  it("../outside/*, an absolute pattern, a symlinked folder: outside (asks; dontAsk denies)", () => {
    const { w } = fixture()
    for (const pattern of ["../outside/*", "/etc/*", "out/*", "src/../../outside/*.txt", "../**/*"]) {
      assert.strictEqual(decide(w, {}, "Glob", { pattern }), "Ask", pattern)
      assert.strictEqual(decide(w, { mode: "dontAsk" }, "Glob", { pattern }), "Deny", pattern)
    }
    assert.strictEqual(decide(w, {}, "Glob", { pattern: "*", path: "out" }), "Ask")
    assert.strictEqual(decide(w, {}, "Glob", { pattern: "**/*.ts" }), "Allow")
    assert.strictEqual(decide(w, {}, "Glob", { pattern: "src/*.ts" }), "Allow")
    assert.strictEqual(decide(w, { additionalDirectories: ["../outside"] }, "Glob", { pattern: "../outside/*" }), "Allow")
  })
})

describe("ReadRules", () => {
  it("hides denied files by any name and files whose real path is outside the workspace and the search's folder", () => {
    const { outside, w } = fixture()
    const scope = ReadRules.make(Permissions.config({ deny: ["Read(./.env)"] }).config, w)
    assert.isFalse(scope.visible(path.join(w, ".env"), w))
    assert.isFalse(scope.visible(path.join(w, "link"), w))
    assert.isFalse(scope.visible(path.join(w, "envdir", ".env"), w))
    assert.isTrue(scope.visible(path.join(w, "src", "a.ts"), w))
    assert.isFalse(scope.visible(path.join(w, "toleak"), w))
    assert.isFalse(scope.visible(path.join(w, "out", "leak.txt"), w))
    assert.isFalse(scope.visible(path.join(outside, "leak.txt"), w))
    // A search the user allowed outside shows what is under that folder.
    assert.isTrue(scope.visible(path.join(outside, "leak.txt"), outside))
    assert.deepStrictEqual(scope.excludeGlobs(w), ["!/.env"])
    assert.deepStrictEqual(scope.excludeGlobs(path.join(w, "src")), [])
    assert.strictEqual(scope.denial(path.join(w, "link"))?.content, "./.env")
  })
})
