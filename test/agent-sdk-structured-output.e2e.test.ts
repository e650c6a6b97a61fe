/**
 * End to end: the real Claude Agent SDK's `query({ options: { outputFormat: { type: "json_schema",
 * schema } } })` (it passes `--json-schema` and the same schema as `initialize`'s `jsonSchema`)
 * against the loopback fake Messages API, run once on the built `keel` and once on Claude Code's own
 * binary from the SDK's optional dependency, with the same scripted answers: both offer the
 * `StructuredOutput` tool with the schema as its input schema, send a refused call's error back to
 * the model, end on an accepted call with `structured_output` on the result, and give up after five
 * refused answers (five requests) with `error_max_structured_output_retries`. The Claude Code runs
 * are skipped, saying why, when its binary is not installed.
 */
import { query } from "@anthropic-ai/claude-agent-sdk"
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, keel, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const TIMEOUT = 90_000

const claude = path.resolve(import.meta.dirname, "..", "node_modules", "@anthropic-ai", "claude-agent-sdk-linux-x64", "claude")
const claudeMissing = fs.existsSync(claude) ? undefined : `Claude Code's binary is not installed at ${claude}`

const SCHEMA = {
  type: "object",
  properties: { city: { type: "string" }, population: { type: "integer" } },
  required: ["city", "population"],
  additionalProperties: false
}
const GOOD = { city: "Lyon", population: 522000 }

const output = (input: unknown, id: string) => FakeAnthropic.toolUseReply([{ name: "StructuredOutput", input, id }])

/** How each CLI is run: `keel` with its home in the project; Claude Code with a fresh HOME and no extra traffic. */
const runners = [
  {
    name: "keel",
    skip: undefined,
    executable: keel,
    env: (server: FakeAnthropic.FakeAnthropic, dir: string) => ({
      ...process.env,
      ...envFor(server),
      KEEL_HOME: path.join(dir, ".keel-home")
    })
  },
  {
    name: "Claude Code",
    skip: claudeMissing,
    executable: claude,
    env: (server: FakeAnthropic.FakeAnthropic) => ({
      PATH: process.env.PATH ?? "",
      HOME: fs.mkdtempSync(path.join(os.tmpdir(), "claude-home-")),
      ...envFor(server),
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1"
    })
  }
] as const

/** Runs the SDK's `query()` with the output schema on `runner`, against `script`: its messages and the requests. */
const runOn = async (runner: (typeof runners)[number], script: ReadonlyArray<FakeAnthropic.ScriptItem>) => {
  const dir = workdir()
  const server = await fake(script)
  const messages: Array<any> = []
  let error: Error | undefined
  try {
    for await (
      const message of query({
        prompt: "Which city, and how many live there?",
        options: {
          pathToClaudeCodeExecutable: runner.executable,
          cwd: dir,
          env: runner.env(server, dir),
          outputFormat: { type: "json_schema", schema: SCHEMA }
        }
      })
    ) messages.push(message)
  } catch (e) {
    error = e as Error
  }
  return { messages, error, requests: server.requests, result: messages.find((m) => m.type === "result") }
}

for (const runner of runners) {
  describe(`the Agent SDK's outputFormat on ${runner.name}`, () => {
    it("a refused call goes back to the model; the accepted one ends the turn with structured_output", async (context) => {
      if (runner.skip !== undefined) {
        process.stderr.write(`skipped: ${runner.skip}\n`)
        return context.skip()
      }
      const { error, requests, result } = await runOn(runner, [
        output({ city: "Lyon", population: "many" }, "toolu_1"),
        output(GOOD, "toolu_2")
      ])
      assert.isUndefined(error)
      assert.strictEqual(requests.length, 2)
      const tool = requests[0]!.body.tools.find((t: any) => t.name === "StructuredOutput")
      assert.deepStrictEqual(tool.input_schema, SCHEMA)
      const refused = requests[1]!.body.messages.at(-1).content.find((b: any) => b.tool_use_id === "toolu_1")
      assert.strictEqual(refused.is_error, true)
      assert.include(JSON.stringify(refused.content), "/population: must be integer")
      assert.strictEqual(result.subtype, "success")
      assert.strictEqual(result.is_error, false)
      assert.deepStrictEqual(result.structured_output, GOOD)
      assert.deepStrictEqual(JSON.parse(result.result), GOOD)
      assert.strictEqual(result.terminal_reason, "completed")
    }, TIMEOUT)

    it("five refused answers: five requests, then error_max_structured_output_retries", async (context) => {
      if (runner.skip !== undefined) {
        process.stderr.write(`skipped: ${runner.skip}\n`)
        return context.skip()
      }
      const bad = (_: unknown, i: number) => output({ city: "Lyon" }, `toolu_${i + 1}`)
      const { requests, result } = await runOn(runner, Array.from({ length: 8 }, () => bad))
      assert.strictEqual(requests.length, 5)
      assert.strictEqual(result.subtype, "error_max_structured_output_retries")
      assert.strictEqual(result.is_error, true)
      assert.strictEqual(result.terminal_reason, "structured_output_retry_exhausted")
      assert.lengthOf(result.errors, 1)
      assert.include(result.errors[0], "after 5 attempts")
      assert.include(result.errors[0], "root: must have required property 'population'")
      assert.isUndefined(result.structured_output)
    }, TIMEOUT)
  })
}
