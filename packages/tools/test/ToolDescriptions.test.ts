/**
 * The built-in tools' definitions as the API receives them (name, description, input schema),
 * pinned: the descriptions come from `src/text/<Tool>.md` with their figures filled in from each
 * tool's constants. A change to a text or a limit shows up here as a snapshot diff to review
 * (`vitest -u` accepts it).
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, expect, it } from "@effect/vitest"
import { type ModelRequest, Tool } from "@keel/core"
import { AskUserQuestion, Bash, BuiltinTools, Glob, Grep, Read, Subagents } from "@keel/tools"
import { Effect } from "effect"
import * as path from "node:path"

const snapshot = (name: string) => path.join(import.meta.dirname, "__snapshots__", name)

const definitions = Effect.map(BuiltinTools.all, (tools) => tools.map(Tool.toDefinition)).pipe(Effect.provide(NodeContext.layer))

const byName = (defs: ReadonlyArray<ModelRequest.ToolDefinition>) => new Map(defs.map((d) => [d.name, d.description ?? ""]))

describe("built-in tool definitions", () => {
  it.effect("are pinned as sent: the JSON, and the descriptions as Markdown for review", () =>
    Effect.gen(function*() {
      const defs = yield* definitions
      assert.deepStrictEqual(defs.map((d) => d.name), BuiltinTools.names)
      yield* Effect.promise(() => expect(JSON.stringify(defs, null, 2)).toMatchFileSnapshot(snapshot("tool-definitions.json")))
      const markdown = defs.map((d) => `<!-- tool: ${d.name} -->\n${d.description}`).join("\n\n")
      yield* Effect.promise(() => expect(markdown).toMatchFileSnapshot(snapshot("tool-descriptions.md")))
    }))

  it.effect("each says when to use the tool and when not to, with no placeholder left", () =>
    Effect.gen(function*() {
      for (const [name, text] of byName(yield* definitions)) {
        assert.match(text, /\b(Use it|Call it)\b/, `${name}: when to use it`)
        assert.match(text, /\bDo not\b/, `${name}: when not to`)
        assert.notMatch(text, /\{\{|\}\}|undefined|NaN/, `${name}: a placeholder left`)
      }
    }))

  it.effect("the figures are the tools' own constants", () =>
    Effect.gen(function*() {
      const text = byName(yield* definitions)
      const n = (value: number) => value.toLocaleString("en-US")
      assert.include(text.get("Read"), `the first ${n(Read.DEFAULT_LIMIT)} lines`)
      assert.include(text.get("Read"), `longer than ${n(Read.MAX_LINE_LENGTH)} characters`)
      assert.include(text.get("Read"), `at most about ${n(Read.DEFAULT_MAX_OUTPUT_TOKENS)} tokens`)
      assert.include(text.get("Read"), `${n(Read.MAX_PDF_PAGES)} pages`)
      assert.include(text.get("Bash"), `${n(Bash.DEFAULT_TIMEOUT_MS)} ms`)
      assert.include(text.get("Bash"), `${n(Bash.MAX_TIMEOUT_MS)} ms`)
      assert.include(text.get("Bash"), `Output over ${n(Bash.MAX_OUTPUT_CHARS)} characters`)
      assert.include(text.get("Glob"), `At most ${n(Glob.MAX_RESULTS)} paths`)
      assert.include(text.get("Grep"), `At most ${n(Grep.DEFAULT_HEAD_LIMIT)} lines or paths`)
      for (const type of Object.keys(Grep.TYPES)) assert.include(text.get("Grep"), `\`${type}\``)
      assert.include(text.get("AskUserQuestion"), `1 to ${AskUserQuestion.MAX_QUESTIONS} multiple-choice questions`)
      assert.include(text.get("AskUserQuestion"), `at most ${AskUserQuestion.MAX_HEADER_CHARS} characters`)
    }))

  it("the built-in subagents' system prompts (from src/text/agent-*.md) are pinned too", async () => {
    const prompts = Subagents.builtin.map((a) => `<!-- agent: ${a.agentType} -->\n${a.systemPrompt("/work/project")}`).join("\n\n")
    await expect(prompts).toMatchFileSnapshot(snapshot("subagent-prompts.md"))
    for (const agent of Subagents.builtin) assert.isTrue(agent.systemPrompt("/w").endsWith(Subagents.reportNote("/w")))
  })
})
