/**
 * The assembled system prompt, pinned: the stable part (the base instructions from
 * `src/prompt/text/*.md`) verbatim, and the dynamic part (instruction files, environment, git) with
 * every fact fixed through the assembly's inputs (working directory, host, date, model, git facts).
 * A change to the wording shows up here as a snapshot diff to review; `vitest -u` accepts it.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, expect, it } from "@effect/vitest"
import { BaseInstructions, ContextAssembly, ContextSnapshot, GitContext, ModelFacts, SystemPrompt } from "@keel/core"
import { Effect, TestClock } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const snapshot = (name: string) => path.join(import.meta.dirname, "__snapshots__", name)

/** A project outside any repository, holding an AGENTS.md; its path shows as `/work/project`. */
const project = () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "keel-prompt-snapshot-")))
  fs.writeFileSync(path.join(dir, "AGENTS.md"), "Run `npm test` before you say a change works.\n")
  return dir
}

const assembled = (cwd: string, model: string) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(Date.parse("2026-03-04T12:00:00Z"))
    const assembly = yield* ContextAssembly.make({
      git: false,
      home: path.join(cwd, "no-home"),
      host: { platform: "linux", osVersion: "Linux 6.8.0", shell: "bash" }
    })
    const prompt = yield* assembly.assemble(cwd, { model })
    assert.instanceOf(prompt, SystemPrompt.SystemPrompt)
    return prompt as SystemPrompt.SystemPrompt
  }).pipe(Effect.provide(NodeContext.layer))

describe("the assembled system prompt", () => {
  it.effect("stable part: the base instructions, verbatim, and nothing that varies by session", () =>
    Effect.gen(function*() {
      const cwd = project()
      const prompt = yield* assembled(cwd, "claude-sonnet-4-6")
      assert.deepStrictEqual(prompt.stable.map((s) => s.name), ["base"])
      const base = prompt.stable[0]!.text
      assert.strictEqual(base, BaseInstructions.text)
      yield* Effect.promise(() => expect(base).toMatchFileSnapshot(snapshot("base-instructions.md")))
      // Identical for another directory and model: no path, model or date in it.
      const other = yield* assembled(project(), "claude-opus-4-6")
      assert.strictEqual(other.stable[0]!.text, base)
      assert.notInclude(base, cwd)
      assert.notMatch(base, /\d{4}-\d{2}-\d{2}|claude-/)
      // The sections the base instructions promise, in their order.
      const headings = base.split("\n").filter((l) => l.startsWith("#"))
      assert.deepStrictEqual(headings, [
        "# Tone and style",
        "# Doing tasks",
        "# When to ask and when to act",
        "# Acting with care",
        "## Git",
        "# Security",
        "# Reporting",
        "# Planning and delegating",
        "# Using tools",
        "# Context"
      ])
    }))

  it.effect("dynamic part: instruction files, then the environment with the session's model and cutoff", () =>
    Effect.gen(function*() {
      const cwd = project()
      const prompt = yield* assembled(cwd, "claude-sonnet-4-6")
      assert.deepStrictEqual(prompt.dynamic.map((s) => s.name), ["instructions", "environment"])
      const dynamic = prompt.dynamic.map((s) => `<!-- section: ${s.name} -->\n${s.text}`).join("\n\n").replaceAll(cwd, "/work/project")
      yield* Effect.promise(() => expect(dynamic).toMatchFileSnapshot(snapshot("dynamic-part.md")))
      // The facts it was built from, as /context shows them.
      assert.include(
        ContextSnapshot.describe(prompt.context!),
        `Environment: ${cwd} · Linux 6.8.0 · bash · 2026-03-04 · claude-sonnet-4-6`
      )
      // A model without a known cutoff: named by its id, no cutoff line.
      const unknown = yield* assembled(cwd, "claude-custom-1")
      const environment = unknown.dynamic.find((s) => s.name === "environment")!.text
      assert.include(environment, "- Model: you run on claude-custom-1 (model id `claude-custom-1`)")
      assert.notInclude(environment, "Knowledge cutoff")
    }))

  it("the git section, from fixed git facts", async () => {
    const git = new GitContext.GitContext({
      root: "/work/project",
      branch: "feature/retry",
      defaultBranch: "main",
      status: " M src/client.ts\n?? notes.txt",
      statusCut: false,
      recentCommits: "a1b2c3d Retry uploads on 503\ne4f5a6b Add the upload client",
      user: "Ada Lovelace"
    })
    await expect(GitContext.render(git)).toMatchFileSnapshot(snapshot("git-section.md"))
  })
})

describe("ModelFacts", () => {
  it("names a model and its cutoff by the longest key its id contains; an unknown id is its own name", () => {
    assert.deepStrictEqual(ModelFacts.of("claude-sonnet-4-6"), { name: "Sonnet 4.6", cutoff: "August 2025" })
    assert.deepStrictEqual(ModelFacts.of("claude-sonnet-4-5-20250929"), { name: "Sonnet 4.5", cutoff: "January 2025" })
    assert.deepStrictEqual(ModelFacts.of("claude-sonnet-4-20250514"), { name: "Sonnet 4", cutoff: "January 2025" })
    assert.deepStrictEqual(ModelFacts.of("us.anthropic.claude-haiku-4-5-20251001-v1:0").name, "Haiku 4.5")
    assert.deepStrictEqual(ModelFacts.of("claude-3-7-sonnet-latest"), { name: "Claude 3.7 Sonnet" })
    assert.deepStrictEqual(ModelFacts.of("my-proxy-model"), { name: "my-proxy-model" })
    assert.deepStrictEqual(ModelFacts.of("my-proxy-model", { "my-proxy": { name: "Proxy", cutoff: "May 2025" } }), {
      name: "Proxy",
      cutoff: "May 2025"
    })
  })
})
