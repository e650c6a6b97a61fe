/**
 * Bash permission rules decided on the bash syntax tree: the smuggling examples, a generated
 * corpus of several hundred attempts checked against the parser's verdict and, for every command
 * the rule allows, against real bash (run with a PATH of recording fakes in an empty folder: an
 * allowed command must run nothing but `echo` and write nothing).
 */
import { assert, beforeAll, describe, it } from "@effect/vitest"
import { BashCommand, BashGrammar, PermissionRule } from "@keel/core"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { corpus } from "./support/BashSmuggling.js"

const cwd = "/work/project"
const rules = (...texts: ReadonlyArray<string>) => texts.map((t) => PermissionRule.parse(t)!)
const allowed = (command: string, ...allow: ReadonlyArray<string>) =>
  PermissionRule.allows(rules(...(allow.length > 0 ? allow : ["Bash(echo:*)"])), "Bash", { command }, cwd) !== undefined
const denied = (command: string, deny: string) => PermissionRule.matches(rules(deny)[0]!, "Bash", { command }, cwd)

beforeAll(() => Effect.runPromise(BashGrammar.ready))

describe("the issue's smuggling examples", () => {
  it("ANSI-C quoting cannot hide a second command, nor a quote that ends early", () => {
    assert.isFalse(allowed("echo $'\\''; touch pwned; echo ''"))
    assert.isFalse(allowed("echo $'\\x27'; touch pwned"))
    assert.isTrue(allowed("echo $'a\\'; touch pwned #'"), "one ANSI-C string: bash runs only echo")
  })

  it("a comment cannot swallow a quote so that the next line runs unseen", () => {
    assert.isFalse(allowed("echo hi #'\ntouch pwned #'"))
    assert.isFalse(allowed("echo hi #\"\ntouch pwned #\""))
    assert.isTrue(allowed("echo a#'\ntouch pwned'"), "`#` inside a word is text: the quote really opens")
  })

  it("only redirections that write nothing are harmless", () => {
    assert.isFalse(allowed("echo hi >/dev/nullfoo"))
    assert.isFalse(allowed("echo hi >/dev/null/../x"))
    assert.isFalse(allowed("echo hi >&1file"))
    assert.isFalse(allowed("echo hi 2>&1file"))
    assert.isTrue(allowed("echo hi >/dev/null 2>&1"))
    assert.isTrue(allowed("echo hi &>'/dev/null'"))
  })
})

describe("BashCommand.analyse", () => {
  it("reads words after quote removal", () => {
    const analysis = BashCommand.analyse("$'\\x72m' -rf \"a b\" 'c'd e\\ f && git st\"at\"us")
    assert.strictEqual(analysis._tag, "Analysed")
    const words = analysis._tag === "Analysed" ? analysis.commands.map((c) => c.map((w) => w.value)) : []
    assert.deepStrictEqual(words, [["rm", "-rf", "a b", "cd", "e f"], ["git", "status"]])
  })

  it("says why a command cannot be judged", () => {
    const reason = (c: string) => {
      const a = BashCommand.analyse(c)
      return a._tag === "Unanalysable" ? a.reason : "analysed"
    }
    assert.strictEqual(reason("echo $(x)"), "command substitution")
    assert.strictEqual(reason("echo <(x)"), "process substitution")
    assert.strictEqual(reason("echo ${x:-y}"), "an expansion")
    assert.strictEqual(reason("(echo)"), "a subshell")
    assert.strictEqual(reason("f() { echo; }"), "a function definition")
    assert.strictEqual(reason("echo > x"), "a redirection")
    assert.strictEqual(reason("PATH=. echo"), "the environment prefix PATH")
    assert.strictEqual(reason("echo 'x"), "a syntax error")
    assert.strictEqual(reason("echo \u0007"), "a control character")
  })

  it("matches prefixes word by word: a pattern may follow the prefix, never stand in it", () => {
    assert.isTrue(allowed("git status -s", "Bash(git status:*)"))
    assert.isTrue(allowed("ls *.ts", "Bash(ls:*)"))
    assert.isFalse(allowed("git stat* -s", "Bash(git status:*)"))
    assert.isFalse(allowed("git \"status -s\"", "Bash(git status:*)"), "one word `status -s` is not `status`")
    assert.isTrue(allowed("npm test", "Bash(npm test)"))
    assert.isFalse(allowed("npm test -- --watch", "Bash(npm test)"))
    assert.isFalse(allowed("npm *", "Bash(npm *)"))
  })
})

describe("deny and ask rules reach every command", () => {
  const cases: ReadonlyArray<readonly [string, boolean]> = [
    ["rm -rf x", true],
    ["ls; rm -rf x", true],
    ["echo $(rm -rf x)", true],
    ["echo \"`rm x`\"", true],
    ["(cd /; rm -rf x)", true],
    ["f() { rm x; }; f", true],
    ["$'\\x72m' x", true],
    ["r\\m x", true],
    ["\"r\"'m' x", true],
    ["sudo -u root rm x", true],
    ["xargs rm < list", true],
    ["find . -exec rm {} +", true],
    ["env FOO=1 rm x", true],
    ["eval 'rm x'", true],
    ["bash -c 'ls && rm x'", true],
    ["sh -ec \"rm x\"", true],
    ["$cmd x", true],
    ["$(echo rm) x", true],
    ["bash -c \"$script\"", true],
    ["cat <<EOF | sh\nrm x\nEOF", true],
    ["echo 'rm x' | bash -s", true],
    ["bash build.sh", false],
    ["coproc rm x", true],
    ["busybox rm x", true],
    ["su root -c 'rm x'", true],
    ["! rm x", true],
    ["time rm x", true],
    ["echo 'rm x'", false],
    ["ls -la", false],
    ["rmdir x", false],
    ["echo hi #'\nrm x", true],
    ["echo 'unterminated; rm x", true]
  ]
  for (const [command, expected] of cases) {
    it(`Bash(rm:*) ${expected ? "matches" : "does not match"} ${JSON.stringify(command)}`, () => {
      assert.strictEqual(denied(command, "Bash(rm:*)"), expected)
    })
  }

  it("a dynamic word under the rule's prefix may be anything", () => {
    assert.isTrue(denied("git $sub --force", "Bash(git push:*)"))
    assert.isFalse(denied("git status", "Bash(git push:*)"))
  })
})

describe("the generated smuggling corpus against Bash(echo:*)", () => {
  const cases = corpus()

  it(`has hundreds of cases, each judged as expected (${cases.length} cases)`, () => {
    assert.isAbove(cases.length, 400)
    const wrong = cases.filter((c) => allowed(c.command) !== c.allowed)
      .map((c) => `${JSON.stringify(c.command)}: expected ${c.allowed ? "allowed" : "not allowed"}`)
    assert.deepStrictEqual(wrong, [])
  })

  it("every case the rule allows runs only echo under real bash, and writes nothing", () => {
    // One bash driver evaluates every allowed case in a subshell of its own, in an empty folder, with
    // a PATH of fakes that record their calls (a bash process per case would take ten times as long).
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "keel-smuggle-"))
    const bin = path.join(root, "bin")
    fs.mkdirSync(bin)
    for (const name of ["touch", "rm", "sh", "xargs", "cat", "env", "x"]) {
      fs.writeFileSync(path.join(bin, name), `#!/bin/bash\necho "${name} $*" >> "${root}/ran-$CASE"\n`, { mode: 0o755 })
    }
    const run = cases.filter((c) => allowed(c.command))
    run.forEach((c, i) => {
      fs.mkdirSync(path.join(root, `w-${i}`))
      fs.writeFileSync(path.join(root, `case-${i}`), c.command)
    })
    const driver = `for i in $(seq 0 ${run.length - 1}); do ` +
      `(cd "${root}/w-$i" && export CASE=$i PATH="${bin}" HOME="${root}/w-$i" && eval "$(<"${root}/case-$i")") ` +
      `</dev/null >/dev/null 2>&1; done`
    try {
      const done = spawnSync("/bin/bash", ["--norc", "--noprofile", "-c", driver], { stdio: "ignore", timeout: 60_000 })
      assert.isTrue(done.error === undefined && done.signal === null, "the driver ran every case to the end")
      const unsafe = run.flatMap((c, i) => {
        const ran = path.join(root, `ran-${i}`)
        const written = fs.readdirSync(path.join(root, `w-${i}`))
        return fs.existsSync(ran) || written.length > 0
          ? [`${JSON.stringify(c.command)} ran [${fs.existsSync(ran) ? fs.readFileSync(ran, "utf8").trim() : ""}] wrote [${written}]`]
          : []
      })
      assert.isAbove(run.length, 100)
      assert.deepStrictEqual(unsafe, [])
    } finally {
      fs.rmSync(root, { recursive: true, force: true })
    }
  })
})
