/**
 * End to end: budgets, cost and input processing of the real `keel` binary against the loopback
 * fake API: `--max-turns`, `--max-budget-usd` (both leave every tool call answered), prices from
 * `KEEL_PRICING_FILE` and the warning for a model without one, slash commands and `@path` mentions.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, lines, run, runStreamJson, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const kinds = (messages: ReadonlyArray<any>): Array<string> =>
  messages.map((m) => (m.subtype !== undefined ? `${m.type}/${m.subtype}` : m.type))

/** Every tool_use in the output is answered by a tool_result in a later user message. */
const assertAllAnswered = (messages: ReadonlyArray<any>) => {
  const uses = messages.filter((m) => m.type === "assistant").flatMap((m) =>
    m.message.content.filter((b: any) => b.type === "tool_use").map((b: any) => b.id)
  )
  const answered = messages.filter((m) => m.type === "user").flatMap((m) =>
    (m.message.content as Array<any>).filter((b) => b.type === "tool_result").map((b) => b.tool_use_id)
  )
  assert.isAbove(uses.length, 0)
  assert.deepStrictEqual(answered, uses)
}

const sonnet = { model: "claude-sonnet-4-6", usage: { input_tokens: 1_000, output_tokens: 100 } } as const

describe("keel budgets", () => {
  it("keel -p --max-turns 2: error_max_turns after two model calls, every tool call answered, exit code 1", async () => {
    const dir = workdir()
    const again = () => FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "README.md" } }], sonnet)
    const t = await runStreamJson(dir, [again, again, again], ["--max-turns", "2"])
    assert.strictEqual(t.code, 1)
    assert.strictEqual(t.server.requests.length, 2)
    assert.deepStrictEqual(kinds(t.messages), ["system/init", "assistant", "user", "assistant", "user", "result/error_max_turns"])
    assertAllAnswered(t.messages)
    const result = t.messages.at(-1)
    assert.strictEqual(result.is_error, true)
    assert.strictEqual(result.num_turns, 2)
    assert.strictEqual(result.terminal_reason, "max_turns")
    assert.deepStrictEqual(result.errors, ["Reached max turns (2)"])
    assert.closeTo(result.total_cost_usd, 2 * 0.0045, 1e-12)
  })

  it("keel -p --max-budget-usd: the response that crosses it ends the run with error_max_budget_usd; its running call is stopped and answered", async () => {
    const dir = workdir()
    // $0.0045 (1,000 input and 100 output tokens of Sonnet) against a budget of $0.001. The Bash call
    // starts while the answer streams; the budget check after the answer stops it before it writes.
    const t = await runStreamJson(dir, [
      FakeAnthropic.toolUseReply([{
        name: "Bash",
        input: { command: "sleep 3 && touch ran.txt" },
        id: "toolu_bash"
      }], sonnet),
      FakeAnthropic.textReply("never asked", sonnet)
    ], ["--max-budget-usd", "0.001", "--dangerously-skip-permissions"])
    assert.strictEqual(t.code, 1)
    assert.strictEqual(t.server.requests.length, 1)
    assert.deepStrictEqual(kinds(t.messages), ["system/init", "assistant", "user", "result/error_max_budget_usd"])
    assertAllAnswered(t.messages)
    assert.deepStrictEqual(t.messages[2].message.content, [{
      type: "tool_result",
      tool_use_id: "toolu_bash",
      content:
        "<tool_use_error>Reached maximum budget ($0.001): the turn ended before this tool call ran to completion.</tool_use_error>",
      is_error: true
    }])
    const result = t.messages.at(-1)
    assert.strictEqual(result.is_error, true)
    assert.strictEqual(result.terminal_reason, "budget_exhausted")
    assert.deepStrictEqual(result.errors, ["Reached maximum budget ($0.001)"])
    assert.closeTo(result.total_cost_usd, 0.0045, 1e-12)
    assert.closeTo(result.modelUsage["claude-sonnet-4-6"].costUSD, 0.0045, 1e-12)
    await new Promise((resolve) => setTimeout(resolve, 3_500))
    assert.isFalse(fs.existsSync(path.join(dir, "ran.txt")))
  })

  it("keel -p --max-budget-usd in text mode prints the reason on stderr; under the budget the run succeeds", async () => {
    const over = await fake([FakeAnthropic.textReply("An answer.", sonnet)])
    const r = await run(["-p", "hi", "--max-budget-usd", "0.004"], { env: envFor(over) })
    assert.strictEqual(r.code, 1)
    assert.strictEqual(r.stdout, "")
    assert.strictEqual(r.stderr, "Reached maximum budget ($0.004)\n")
    const under = await fake([FakeAnthropic.textReply("An answer.", sonnet)])
    const ok = await run(["-p", "hi", "--max-budget-usd", "0.005"], { env: envFor(under) })
    assert.strictEqual(ok.code, 0)
    assert.strictEqual(ok.stdout, "An answer.\n")
  })

  it("--max-budget-usd must be an amount above 0 (exit code 2)", async () => {
    for (const bad of ["0", "-1", "ten", ""]) {
      const r = await run(["-p", "hi", "--max-budget-usd", bad])
      assert.strictEqual(r.code, 2)
      assert.include(r.stderr, `--max-budget-usd must be an amount of USD above 0, e.g. 0.50, got "${bad}".`)
    }
  })
})

describe("keel cost", () => {
  it("a model without a price is warned about once (a system/informational line; stderr in text mode) and costs $0", async () => {
    const dir = workdir()
    const t = await runStreamJson(dir, [
      FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "README.md" } }]),
      FakeAnthropic.textReply("done")
    ], [])
    assert.deepStrictEqual(kinds(t.messages), ["system/init", "assistant", "user", "assistant", "system/informational", "result/success"])
    assert.include(t.messages[4].content, "No price is known for model claude-fake")
    assert.strictEqual(t.messages[4].level, "warning")
    assert.strictEqual(t.messages.at(-1).total_cost_usd, 0)

    const server = await fake([FakeAnthropic.textReply("done")])
    const text = await run(["-p", "hi"], { env: envFor(server) })
    assert.strictEqual(text.stdout, "done\n")
    assert.match(text.stderr, /^keel: No price is known for model claude-fake: its tokens count as \$0 in total_cost_usd\. .*\n$/)
  })

  it("KEEL_PRICING_FILE prices models over the defaults; a bad file is exit code 2 naming it", async () => {
    const dir = workdir()
    const file = path.join(dir, "prices.json")
    fs.writeFileSync(file, JSON.stringify({ "claude-fake": { input: 2, output: 10 } }))
    const server = await fake([FakeAnthropic.textReply("done"), FakeAnthropic.textReply("done")])
    const priced = await run(["-p", "hi", "--output-format", "json"], { env: { ...envFor(server), KEEL_PRICING_FILE: file }, cwd: dir })
    const result = JSON.parse(priced.stdout)
    // The fake's answer: 10 input and 5 output tokens at $2 and $10 per million.
    assert.closeTo(result.total_cost_usd, (10 * 2 + 5 * 10) / 1e6, 1e-15)
    assert.strictEqual(priced.stderr, "")

    fs.writeFileSync(file, JSON.stringify({ "claude-fake": { input: "two", output: 10 } }))
    const bad = await run(["-p", "hi"], { env: { ...envFor(server), KEEL_PRICING_FILE: file }, cwd: dir })
    assert.strictEqual(bad.code, 2)
    assert.include(bad.stderr, `keel: ${file} is not a valid pricing file:`)
    assert.strictEqual(server.requests.length, 1)
  })
})

describe("keel input processing", () => {
  it("slash commands answer without calling the model; an unknown one is an error (exit code 1)", async () => {
    const server = await fake([])
    const cost = await run(["-p", "/cost"], { env: envFor(server) })
    assert.strictEqual(cost.code, 0)
    assert.include(cost.stdout, "Total cost:            $0.0000")
    const context = await run(["-p", "/context", "--output-format", "stream-json"], { env: envFor(server) })
    assert.deepStrictEqual(kinds(lines(context.stdout)), ["system/init", "system/local_command_output", "result/success"])
    assert.include(lines(context.stdout)[1].content, "Free space:")
    const unknown = await run(["-p", "/frobnicate"], { env: envFor(server) })
    assert.strictEqual(unknown.code, 1)
    assert.include(unknown.stderr, "Unknown command: /frobnicate.")
    assert.strictEqual(server.requests.length, 0)
  })

  it("@path attaches the file after the prompt; a missing one stays text with a warning on stderr", async () => {
    const dir = workdir()
    const server = await fake([FakeAnthropic.textReply("ok", sonnet)])
    const r = await run(["-p", "summarise @README.md and @nope.md"], { env: envFor(server), cwd: dir })
    assert.strictEqual(r.code, 0)
    assert.match(r.stderr, /^keel: @nope\.md was not attached \(File does not exist: .*nope\.md\. .*\); it was sent as text\.\n$/)
    const content = server.requests[0]!.body.messages[0].content
    assert.strictEqual(content[0].text, "summarise @README.md and @nope.md")
    assert.strictEqual(
      content[1].text,
      `Called the Read tool with the following input: {"file_path":"${path.join(fs.realpathSync(dir), "README.md")}"}`
    )
    assert.strictEqual(
      content[2].text,
      "Result of calling the Read tool:\n     1\t# Demo project\n     2\t\n     3\tIt counts sheep.\n     4\tThree lines."
    )
  })
})
