/**
 * SafeGit: Keel's start-up git commands in a repository whose configuration tries every way to run
 * a program (fsmonitor, clean/process filters on a touched file, hooks, pager, signature checks in
 * `git log`, a submodule with its own fsmonitor) run none of them, and still report the facts.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { GitContext, SafeGit } from "@keel/core"
import { Effect, Option } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const git = (cwd: string, ...args: Array<string>): string =>
  execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", HOME: cwd, GIT_AUTHOR_DATE: "2020-01-01T00:00:00Z", GIT_COMMITTER_DATE: "2020-01-01T00:00:00Z" }
  })

/** A command that leaves `marker/<name>` behind if it ever runs. */
const trap = (marker: string, name: string) => `touch ${path.join(marker, name)}; cat`

/** A repository configured to run programs from every key git reads during status and log. */
const hostileRepository = () => {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "keel-safegit-")))
  const marker = path.join(base, "marker")
  const repo = path.join(base, "repo")
  fs.mkdirSync(marker)
  fs.mkdirSync(repo)
  git(repo, "init", "-q", "-b", "main")
  git(repo, "config", "user.name", "Ada")
  git(repo, "config", "user.email", "ada@example.com")
  fs.writeFileSync(path.join(repo, "a.txt"), "hello\n")
  fs.writeFileSync(path.join(repo, ".gitattributes"), "*.txt filter=evil diff=evil\n")
  git(repo, "add", ".")
  git(repo, "commit", "-qm", "first")
  // A signed-looking commit, so that `log.showSignature` would call gpg.program.
  const body = git(repo, "cat-file", "commit", "HEAD").replace(
    /^(committer .*)$/m,
    "$1\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----"
  )
  const signed = execFileSync("git", ["hash-object", "-t", "commit", "-w", "--stdin"], { cwd: repo, input: body, encoding: "utf8" }).trim()
  git(repo, "update-ref", "refs/heads/main", signed)
  const config: Array<[string, string]> = [
    ["core.fsmonitor", `touch ${path.join(marker, "fsmonitor")}; false`],
    ["filter.evil.clean", trap(marker, "filter-clean")],
    ["filter.evil.smudge", trap(marker, "filter-smudge")],
    ["filter.evil.process", trap(marker, "filter-process")],
    ["filter.x=y.clean", trap(marker, "filter-with-equals")],
    ["diff.evil.textconv", trap(marker, "textconv")],
    ["diff.external", trap(marker, "external-diff")],
    ["core.pager", trap(marker, "pager")],
    ["pager.log", trap(marker, "pager-log")],
    ["log.showSignature", "true"],
    ["gpg.program", trap(marker, "gpg")],
    ["credential.helper", `!${trap(marker, "credential")}`],
    ["core.hooksPath", path.join(repo, "hooks")]
  ]
  for (const [key, value] of config) git(repo, "config", key, value)
  fs.mkdirSync(path.join(repo, "hooks"))
  for (const hook of ["post-index-change", "reference-transaction", "post-checkout", "pre-auto-gc"]) {
    fs.writeFileSync(path.join(repo, "hooks", hook), `#!/bin/sh\ntouch ${path.join(marker, hook)}\n`, { mode: 0o755 })
  }
  // Touched but unchanged: git must re-read it to know, which runs the clean filter.
  const later = new Date(Date.now() + 5_000)
  fs.utimesSync(path.join(repo, "a.txt"), later, later)
  fs.writeFileSync(path.join(repo, "new.txt"), "untracked\n")
  return { repo, marker }
}

const collect = (cwd: string) => GitContext.collect(cwd).pipe(Effect.provide(NodeContext.layer))

describe("SafeGit", () => {
  it("git itself runs the hostile configuration (the trap works)", () => {
    const { marker, repo } = hostileRepository()
    git(repo, "config", "--unset", "filter.x=y.clean")
    execFileSync("git", ["status", "--short"], { cwd: repo })
    assert.includeMembers(fs.readdirSync(marker), ["fsmonitor", "filter-process"])
  })

  it.effect("the start-up git context runs nothing the repository configures, and still reports its facts", () =>
    Effect.gen(function*() {
      const { marker, repo } = hostileRepository()
      git(repo, "config", "--unset", "filter.x=y.clean")
      const context = yield* collect(repo)
      assert.deepStrictEqual(fs.readdirSync(marker), [])
      assert.isTrue(Option.isSome(context))
      const facts = Option.getOrThrow(context)
      assert.strictEqual(facts.branch, "main")
      assert.strictEqual(facts.user, "Ada")
      assert.include(facts.status, "?? new.txt")
      assert.include(facts.recentCommits, "first")
    }))

  it.effect("a driver name that cannot be overridden on the command line stops Keel's git altogether", () =>
    Effect.gen(function*() {
      const { marker, repo } = hostileRepository()
      assert.isTrue(Option.isNone(yield* SafeGit.prepare(repo).pipe(Effect.provide(NodeContext.layer))))
      assert.isTrue(Option.isNone(yield* collect(repo)))
      assert.deepStrictEqual(fs.readdirSync(marker), [])
    }))

  it.effect("a submodule with its own fsmonitor and filter is not inspected", () =>
    Effect.gen(function*() {
      const { marker, repo } = hostileRepository()
      git(repo, "config", "--unset", "filter.x=y.clean")
      const sub = path.join(repo, "sub")
      fs.mkdirSync(sub)
      git(sub, "init", "-q")
      git(sub, "config", "user.name", "Ada")
      git(sub, "config", "user.email", "ada@example.com")
      fs.writeFileSync(path.join(sub, "s.txt"), "s\n")
      fs.writeFileSync(path.join(sub, ".gitattributes"), "*.txt filter=subevil\n")
      git(sub, "add", ".")
      git(sub, "commit", "-qm", "sub")
      git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", "./sub", "sub")
      git(sub, "config", "core.fsmonitor", `touch ${path.join(marker, "sub-fsmonitor")}; false`)
      git(sub, "config", "filter.subevil.clean", trap(marker, "sub-filter"))
      const later = new Date(Date.now() + 10_000)
      fs.utimesSync(path.join(sub, "s.txt"), later, later)
      fs.writeFileSync(path.join(sub, "dirty.txt"), "x\n")
      // Setting it up ran the superproject's traps: only what Keel runs counts.
      for (const f of fs.readdirSync(marker)) fs.rmSync(path.join(marker, f))
      execFileSync("git", ["status", "--short"], { cwd: sub })
      assert.includeMembers(fs.readdirSync(marker), ["sub-fsmonitor"])
      for (const f of fs.readdirSync(marker)) fs.rmSync(path.join(marker, f))
      const context = yield* collect(repo)
      assert.isTrue(Option.isSome(context))
      assert.deepStrictEqual(fs.readdirSync(marker), [])
    }))

  it("every command carries the overrides and the safe environment", () => {
    const args = SafeGit.configArgs(SafeGit.SAFE_CONFIG)
    for (const key of ["core.fsmonitor=false", "core.hooksPath=/dev/null", "diff.external=", "credential.helper="]) {
      assert.include(args, key)
    }
    assert.strictEqual(SafeGit.SAFE_ENV.GIT_TERMINAL_PROMPT, "0")
  })
})
