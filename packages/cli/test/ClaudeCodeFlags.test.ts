/**
 * Every flag the Claude Agent SDK can pass (its `sdk.mjs` builds the CLI's argv from its options)
 * is either honoured or refused with exit 2 and a message naming it: never an unknown option,
 * never silently ignored.
 */
import { assert, describe, it } from "@effect/vitest"
import { Flags } from "@keel/cli"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const exitOf = (argv: ReadonlyArray<string>) => {
  const parsed = Flags.parse(argv, "0.0.0")
  if (parsed._tag !== "Exit") throw new Error(`expected an exit for ${argv.join(" ")}`)
  return parsed
}

const flagsOf = (argv: ReadonlyArray<string>) => {
  const parsed = Flags.parse(argv, "0.0.0")
  if (parsed._tag !== "Run") throw new Error(`expected flags, got exit ${parsed.code}: ${parsed.stderr}`)
  return parsed.flags
}

/** The SDK's argv flags (from its bundled source), as `--name`. */
const sdkFlags = (): Array<string> => {
  const source = fs.readFileSync(
    path.resolve(import.meta.dirname, "..", "..", "..", "node_modules", "@anthropic-ai", "claude-agent-sdk", "sdk.mjs"),
    "utf8"
  )
  // The argv builder pushes `et("--flag", value)`, `"--flag"` or `"--flag=value"`.
  const start = source.indexOf(`["--output-format","stream-json","--verbose"`)
  const built = source.slice(start, source.indexOf(`CLAUDE_CODE_ENTRYPOINT`, start))
  // `settings` goes through the SDK's extra args (`--settings <json>`), not a literal.
  return [...new Set([...[...built.matchAll(/"(--[a-z][a-z-]*)/g)].map((m) => m[1]!), "--settings"])]
}

describe("the Claude Agent SDK's flags", () => {
  it("each one the SDK can pass is a flag keel parses (honoured or refused by name), none unknown", () => {
    const flags = sdkFlags()
    assert.isAbove(flags.length, 30, "the SDK's argv builder was found")
    const known = new Set([
      ...Flags.program("0").options.flatMap((o) => [o.long, ...(o.short !== undefined ? [o.short] : [])]),
      ...Flags.REFUSED.map((r) => r.flag)
    ])
    // `--allowed`/`--disallowed` are prefixes of --allowedTools/--disallowedTools in the source.
    const unknown = flags.filter((f) => !known.has(f) && !["--allowed", "--disallowed"].includes(f))
    assert.deepStrictEqual(unknown, [])
  })

  it("a refused flag exits 2 naming it and why", () => {
    for (const r of Flags.REFUSED) {
      const argv = r.value === "none" ? ["-p", "x", r.flag] : ["-p", "x", r.flag, "v"]
      const exit = exitOf(argv)
      assert.strictEqual(exit.code, 2, r.flag)
      assert.include(exit.stderr, `${r.flag} (${r.why})`)
      assert.include(exit.stderr, "Claude Code option that Keel does not support")
    }
  })

  it("refused flags stay out of --help", () => {
    const help = exitOf(["--help"])
    assert.strictEqual(help.code, 0)
    assert.notInclude(help.stdout, "--betas")
    assert.include(help.stdout, "--system-prompt-file")
  })

  it("--tools default is every tool; --debug-to-stderr and --debug-file turn on --debug", () => {
    assert.strictEqual(flagsOf(["-p", "x", "--tools=default"]).tools, undefined)
    assert.isTrue(flagsOf(["-p", "x", "--debug-to-stderr"]).debug)
    const file = flagsOf(["-p", "x", "--debug-file", "/tmp/keel-debug.log"])
    assert.isTrue(file.debug)
    assert.strictEqual(file.debugFile, "/tmp/keel-debug.log")
  })

  it("--system-prompt-file and --append-system-prompt-file read their files; unreadable or doubled is a usage error", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keel-flags-"))
    fs.writeFileSync(path.join(dir, "s.md"), "You are a file.")
    fs.writeFileSync(path.join(dir, "a.md"), "Appended.")
    const flags = flagsOf(["-p", "x", "--system-prompt-file", path.join(dir, "s.md"), "--append-system-prompt-file", path.join(dir, "a.md")])
    assert.strictEqual(flags.systemPrompt, "You are a file.")
    assert.strictEqual(flags.appendSystemPrompt, "Appended.")
    const missing = exitOf(["-p", "x", "--system-prompt-file", path.join(dir, "nope.md")])
    assert.strictEqual(missing.code, 2)
    assert.include(missing.stderr, "--system-prompt-file")
    assert.include(missing.stderr, "ENOENT")
    const both = exitOf(["-p", "x", "--system-prompt", "a", "--system-prompt-file", path.join(dir, "s.md")])
    assert.include(both.stderr, "use one")
  })
})
