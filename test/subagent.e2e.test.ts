/**
 * End to end: the real `keel` binary against the loopback fake API, where the model starts a
 * subagent with `Task`: the fake tells the parent's requests from the subagent's by their system
 * prompt; the output carries the subagent's messages with `parent_tool_use_id`, its answer comes back
 * as the tool result, and the result's `modelUsage` and cost count both models. And `TodoWrite`
 * runs headless without a permission rule.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, lines, run, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const SUBAGENT = "You are a Keel subagent"
/** The system prompt's text (a string, or text blocks once prompt caching marks it). */
const systemText = (body: any): string =>
  typeof body.system === "string" ? body.system : (body.system ?? []).map((b: any) => b.text).join("")
const isSubagent = (body: any) => systemText(body).startsWith(SUBAGENT)
/** Whether the request ends with tool results. */
const afterTools = (body: any) => {
  const last = body.messages.at(-1)
  return Array.isArray(last.content) && last.content.some((b: any) => b.type === "tool_result")
}

const prompt = "Which file says what this project counts? Quote it."

/** The parent starts an Explore agent on Haiku; the agent reads README.md and answers; the parent answers. */
const route: FakeAnthropic.ScriptFunction = (body) => {
  const usage = (input_tokens: number, output_tokens: number) => ({ model: body.model, usage: { input_tokens, output_tokens } })
  if (isSubagent(body)) {
    return afterTools(body)
      ? FakeAnthropic.textReply("README.md line 3: \"It counts sheep.\"", usage(2_000, 200))
      : FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "README.md" }, id: "toolu_sub_read" }], usage(1_000, 100))
  }
  return afterTools(body)
    ? FakeAnthropic.textReply("It counts sheep (README.md).", usage(300, 30))
    : FakeAnthropic.toolUseReply([{
      name: "Task",
      input: { description: "Find what is counted", prompt, subagent_type: "Explore", model: "haiku" },
      id: "toolu_task"
    }], usage(100, 10))
}

describe("keel subagents (Task)", () => {
  it("stream-json shows the subagent's messages under the Task call; its answer is the tool result; modelUsage counts both models", async () => {
    const server = await fake(Array.from({ length: 8 }, () => route))
    const dir = workdir()
    const r = await run(
      ["-p", "what does this project count?", "--output-format", "stream-json", "--verbose", "--model", "claude-sonnet-4-6"],
      { env: envFor(server), cwd: dir }
    )
    assert.strictEqual(r.code, 0, r.stderr)
    const messages = lines(r.stdout).filter((m) => m.type !== "tool_progress")
    const sessionId = messages[0].session_id
    assert.deepStrictEqual(
      messages.map((m) => `${m.subtype ? `${m.type}/${m.subtype}` : m.type}${m.parent_tool_use_id ? ` <${m.parent_tool_use_id}` : ""}`),
      [
        "system/init",
        "assistant",
        "user <toolu_task",
        "assistant <toolu_task",
        "user <toolu_task",
        "assistant <toolu_task",
        "user",
        "assistant",
        "result/success"
      ]
    )
    assert.isTrue(messages.every((m) => m.session_id === sessionId), "the subagent's messages carry the parent's session id")
    assert.includeMembers(messages[0].tools, ["TodoWrite", "Task"])

    // The subagent's transcript as forwarded: its prompt, its Read, the file, its answer.
    assert.deepStrictEqual(messages[2].message, { role: "user", content: prompt })
    assert.strictEqual(messages[3].message.content[0].name, "Read")
    assert.strictEqual(messages[3].message.model, "claude-haiku-4-5")
    assert.include(messages[4].message.content[0].content, "It counts sheep.")
    assert.strictEqual(messages[5].message.content[0].text, "README.md line 3: \"It counts sheep.\"")
    // Its answer is the Task call's result in the parent's conversation.
    assert.deepStrictEqual(messages[6].message.content, [
      { type: "tool_result", tool_use_id: "toolu_task", content: "README.md line 3: \"It counts sheep.\"" }
    ])

    const result = messages.at(-1)
    assert.strictEqual(result.result, "It counts sheep (README.md).")
    assert.strictEqual(result.num_turns, 2)
    assert.deepStrictEqual(Object.keys(result.modelUsage).sort(), ["claude-haiku-4-5", "claude-sonnet-4-6"])
    assert.strictEqual(result.modelUsage["claude-haiku-4-5"].inputTokens, 3_000)
    assert.strictEqual(result.modelUsage["claude-haiku-4-5"].outputTokens, 300)
    assert.strictEqual(result.modelUsage["claude-sonnet-4-6"].inputTokens, 400)
    // Haiku $1/$5, Sonnet $3/$15 per million tokens.
    assert.closeTo(result.total_cost_usd, (3_000 * 1 + 300 * 5 + 400 * 3 + 40 * 15) / 1e6, 1e-12)
    assert.strictEqual(result.usage.input_tokens, 400, "usage is the main loop's only, as in Claude Code")

    // What the API saw: the subagent's own conversation, system prompt, tools and model.
    const sub = server.requests.filter((q) => isSubagent(q.body)).map((q) => q.body)
    const parent = server.requests.filter((q) => !isSubagent(q.body)).map((q) => q.body)
    assert.strictEqual(sub.length, 2)
    assert.strictEqual(parent.length, 2)
    // Only its own prompt (as a text block, marked as the cached conversation tail).
    assert.deepStrictEqual(sub[0].messages, [
      { role: "user", content: [{ type: "text", text: prompt, cache_control: { type: "ephemeral" } }] }
    ])
    assert.deepStrictEqual(sub[0].tools.map((t: any) => t.name), ["Read", "Glob", "Grep"])
    assert.strictEqual(sub[0].model, "claude-haiku-4-5")
    assert.include(systemText(sub[0]), "read-only")
    assert.includeMembers(parent[0].tools.map((t: any) => t.name), ["Read", "Bash", "TodoWrite", "Task"])
    assert.notInclude(JSON.stringify(sub), "what does this project count?")
  })

  it("a general-purpose subagent inherits --model, and its calls go through the parent's permissions", async () => {
    const server = await fake(Array.from({ length: 8 }, () => (body: any) => {
      if (isSubagent(body)) {
        return afterTools(body)
          ? FakeAnthropic.textReply("I was not allowed to delete it.", { model: body.model })
          : FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "rm README.md" }, id: "toolu_sub_bash" }], {
            model: body.model
          })
      }
      return afterTools(body)
        ? FakeAnthropic.textReply("The subagent could not delete it.", { model: body.model })
        : FakeAnthropic.toolUseReply([{ name: "Task", input: { description: "Delete the readme", prompt: "Delete README.md" }, id: "toolu_task" }], {
          model: body.model
        })
    }))
    const dir = workdir()
    const r = await run(["-p", "delete the readme", "--output-format", "stream-json", "--verbose", "--model", "claude-opus-4-6"], {
      env: envFor(server),
      cwd: dir
    })
    assert.strictEqual(r.code, 0, r.stderr)
    const sub = server.requests.filter((q) => isSubagent(q.body)).map((q) => q.body)
    assert.strictEqual(sub[0].model, "claude-opus-4-6")
    assert.notInclude(sub[0].tools.map((t: any) => t.name), "Task")
    assert.include(sub[0].tools.map((t: any) => t.name), "Bash")
    const denied = sub[1].messages.at(-1).content[0]
    assert.isTrue(denied.is_error)
    assert.include(denied.content, "Permission to use Bash was denied")
    const result = lines(r.stdout).at(-1)
    assert.deepStrictEqual(result.permission_denials, [
      { tool_name: "Bash", tool_use_id: "toolu_sub_bash", tool_input: { command: "rm README.md" } }
    ])
  })

  it("TodoWrite runs headless without a permission rule", async () => {
    const todos = [{ content: "Count the sheep", status: "in_progress", activeForm: "Counting the sheep" }]
    const server = await fake([
      FakeAnthropic.toolUseReply([{ name: "TodoWrite", input: { todos }, id: "toolu_todo" }]),
      FakeAnthropic.textReply("planned")
    ])
    const r = await run(["-p", "plan", "--output-format", "stream-json", "--verbose"], { env: envFor(server), cwd: workdir() })
    assert.strictEqual(r.code, 0, r.stderr)
    const result = server.requests[1]!.body.messages.at(-1).content[0]
    assert.notStrictEqual(result.is_error, true)
    assert.match(result.content, /^Todos have been modified successfully\./)
    assert.deepStrictEqual(lines(r.stdout).at(-1).permission_denials, [])
  })
})
