/**
 * End to end: structured output through the built `keel` binary (`-p --json-schema`, in each output
 * format) and through Keel's own `query()` (`outputFormat`), against the loopback fake Messages API
 * with scripted answers. The request offers the `StructuredOutput` tool whose input schema is the
 * schema; a refused call is retried with the mismatch in its tool result; the result carries
 * `structured_output`; after the retries the result is `error_max_structured_output_retries` (exit
 * 1); an invalid schema is exit 2 before any request.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as path from "node:path"
import { query, QueryError } from "@keel/cli"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, lines, run, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const TIMEOUT = 60_000

const SCHEMA = {
  type: "object",
  properties: { city: { type: "string" }, population: { type: "integer", minimum: 0 } },
  required: ["city", "population"],
  additionalProperties: false
}

/** An answer that calls StructuredOutput with `input`. */
const output = (input: unknown, id: string) => FakeAnthropic.toolUseReply([{ name: "StructuredOutput", input, id }])

const GOOD = { city: "Lyon", population: 522_000 }

/** Runs `keel -p <prompt> --json-schema SCHEMA args` against `script` in a fresh project. */
const keelRun = async (script: ReadonlyArray<FakeAnthropic.ScriptItem>, args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const dir = workdir()
  const server = await fake(script)
  const r = await run(["-p", "Which city, and how many live there?", "--json-schema", JSON.stringify(SCHEMA), ...args], {
    env: { ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home"), ...env },
    cwd: dir
  })
  return { ...r, server }
}

const refusal = (problems: string) =>
  `<tool_use_error>The input does not match the required schema: ${problems}. ` +
  "Call StructuredOutput again with input that matches it.</tool_use_error>"

describe("keel -p --json-schema", () => {
  it("json: a refused call, then an accepted one; the result carries structured_output and its JSON", async () => {
    const { code, server, stderr, stdout } = await keelRun([
      output({ city: "Lyon", population: "many" }, "toolu_1"),
      output(GOOD, "toolu_2")
    ], ["--output-format", "json"])
    assert.strictEqual(code, 0, stderr)
    const result = JSON.parse(stdout)
    assert.strictEqual(result.type, "result")
    assert.strictEqual(result.subtype, "success")
    assert.deepStrictEqual(result.structured_output, GOOD)
    assert.strictEqual(result.result, JSON.stringify(GOOD))
    assert.strictEqual(result.num_turns, 2)
    assert.strictEqual(server.requests.length, 2)
    // The tool offered is the schema itself; the second request carries the refusal.
    const tool = server.requests[0]!.body.tools.find((t: any) => t.name === "StructuredOutput")
    assert.deepStrictEqual(tool.input_schema, SCHEMA)
    const refused = server.requests[1]!.body.messages.at(-1).content.find((b: any) => b.tool_use_id === "toolu_1")
    assert.deepStrictEqual([refused.content, refused.is_error], [refusal("/population: must be integer"), true])
  }, TIMEOUT)

  it("text: prints the structured output as JSON", async () => {
    const { code, stderr, stdout } = await keelRun([output(GOOD, "toolu_1")], ["--output-format", "text"])
    assert.strictEqual(code, 0, stderr)
    assert.strictEqual(stdout, `${JSON.stringify(GOOD)}\n`)
  }, TIMEOUT)

  it("stream-json: an answer without the call gets the synthetic reminder; the result line carries structured_output", async () => {
    const { code, server, stderr, stdout } = await keelRun([
      FakeAnthropic.textReply("Lyon, about half a million."),
      output(GOOD, "toolu_1")
    ], ["--output-format", "stream-json", "--verbose"])
    assert.strictEqual(code, 0, stderr)
    const out = lines(stdout)
    const reminder = out.find((m) => m.type === "user" && m.isSynthetic === true)
    assert.include(reminder.message.content, "Call StructuredOutput now")
    assert.strictEqual(server.requests[1]!.body.messages.at(-1).content.at(-1).text, reminder.message.content)
    const result = out.at(-1)
    assert.deepStrictEqual([result.type, result.subtype, result.structured_output], ["result", "success", GOOD])
  }, TIMEOUT)

  it("exhausted: five refused answers, exactly five requests, error_max_structured_output_retries, exit 1", async () => {
    const bad = (_: unknown, i: number) => output({ city: "Lyon" }, `toolu_${i + 1}`)
    const { code, server, stdout } = await keelRun(Array.from({ length: 8 }, () => bad), ["--output-format", "json"])
    assert.strictEqual(code, 1)
    assert.strictEqual(server.requests.length, 5)
    const result = JSON.parse(stdout)
    assert.strictEqual(result.subtype, "error_max_structured_output_retries")
    assert.strictEqual(result.is_error, true)
    assert.strictEqual(result.terminal_reason, "structured_output_retry_exhausted")
    assert.deepStrictEqual(result.errors, [
      "No valid structured output after 5 attempts; the last StructuredOutput call did not match the schema: " +
      "root: must have required property 'population'"
    ])
    assert.notProperty(result, "structured_output")
  }, TIMEOUT)

  it("KEEL_MAX_STRUCTURED_OUTPUT_RETRIES bounds the attempts; text mode says why on stderr", async () => {
    const { code, server, stderr, stdout } = await keelRun(
      [FakeAnthropic.textReply("one"), FakeAnthropic.textReply("two"), FakeAnthropic.textReply("three")],
      ["--output-format", "text"],
      { KEEL_MAX_STRUCTURED_OUTPUT_RETRIES: "2" }
    )
    assert.strictEqual(code, 1)
    assert.strictEqual(server.requests.length, 2)
    assert.strictEqual(stdout, "")
    assert.include(stderr, "No valid structured output after 2 attempts: the answers did not call StructuredOutput")
  }, TIMEOUT)

  it("an invalid schema, or a bad retry budget, is exit 2 with what is wrong; nothing is sent", async () => {
    const dir = workdir()
    const server = await fake([FakeAnthropic.textReply("never")])
    const env = { ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home") }
    const notJson = await run(["-p", "q", "--json-schema", "{city"], { env, cwd: dir })
    assert.strictEqual(notJson.code, 2)
    assert.match(notJson.stderr, /^keel: --json-schema is not valid JSON \(/)
    const notObject = await run(["-p", "q", "--json-schema", `{"type":"array","items":{"type":"string"}}`], { env, cwd: dir })
    assert.strictEqual(notObject.code, 2)
    assert.include(notObject.stderr, `keel: --json-schema must describe an object ("type": "object" at its top, got "array")`)
    const unknownKeyword = await run(["-p", "q", "--json-schema", `{"type":"object","propertys":{}}`], { env, cwd: dir })
    assert.strictEqual(unknownKeyword.code, 2)
    assert.include(unknownKeyword.stderr, `keel: --json-schema is not a valid JSON Schema: strict mode: unknown keyword: "propertys"`)
    const budget = await run(["-p", "q", "--json-schema", JSON.stringify(SCHEMA)], {
      env: { ...env, KEEL_MAX_STRUCTURED_OUTPUT_RETRIES: "0" },
      cwd: dir
    })
    assert.strictEqual(budget.code, 2)
    assert.include(budget.stderr, "KEEL_MAX_STRUCTURED_OUTPUT_RETRIES")
    const repl = await run(["--json-schema", JSON.stringify(SCHEMA)], { env, cwd: dir })
    assert.strictEqual(repl.code, 2)
    assert.include(repl.stderr, "--json-schema works with -p")
    assert.strictEqual(server.requests.length, 0)
  }, TIMEOUT)
})

describe("stream-json initialize's jsonSchema", () => {
  it("other than --json-schema's is refused by name with exit 2; nothing runs", async () => {
    const dir = workdir()
    const server = await fake([FakeAnthropic.textReply("never")])
    const initialize = (id: string, jsonSchema: unknown) =>
      JSON.stringify({ type: "control_request", request_id: id, request: { subtype: "initialize", jsonSchema } })
    const prompt = JSON.stringify({ type: "user", message: { role: "user", content: "q" } })
    const r = await run(["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"], {
      env: { ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home") },
      cwd: dir,
      stdin: `${initialize("init-1", SCHEMA)}\n${prompt}\n`
    })
    assert.strictEqual(r.code, 2)
    const response = lines(r.stdout).find((m) => m.type === "control_response")
    assert.deepStrictEqual([response.response.subtype, response.response.request_id], ["error", "init-1"])
    assert.include(response.response.error, "jsonSchema (outputFormat) without --json-schema")
    assert.strictEqual(server.requests.length, 0)
  }, TIMEOUT)
})

describe("query() with outputFormat", () => {
  it("the result carries structured_output; an invalid schema rejects the query with code 2", async () => {
    const dir = workdir()
    const server = await fake([output({ city: 3 }, "toolu_1"), output(GOOD, "toolu_2")])
    const env = { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test-key", KEEL_HOME: path.join(dir, ".keel-home") }
    const messages: Array<any> = []
    for await (const m of query({ prompt: "Which city?", options: { cwd: dir, env, outputFormat: { type: "json_schema", schema: SCHEMA } } })) {
      messages.push(m)
    }
    const result = messages.at(-1)
    assert.deepStrictEqual([result.type, result.subtype, result.structured_output], ["result", "success", GOOD])
    assert.strictEqual(server.requests.length, 2)

    const invalid = query({
      prompt: "q",
      options: { cwd: dir, env, outputFormat: { type: "json_schema", schema: { type: "object", properties: { n: { type: "numbr" } } } } }
    })
    const error = await invalid.next().then(() => undefined, (e: unknown) => e)
    assert.instanceOf(error, QueryError)
    assert.strictEqual((error as QueryError).code, 2)
    assert.include((error as QueryError).message, "query(): outputFormat.schema is not a valid JSON Schema: schema/properties/n/type must be equal to one of the allowed values")
    const shape = query({ prompt: "q", options: { cwd: dir, env, outputFormat: { type: "json", schema: SCHEMA } as never } })
    const shapeError = await shape.next().then(() => undefined, (e: unknown) => e)
    assert.include((shapeError as Error).message, `outputFormat must be { type: "json_schema", schema: <a JSON Schema object> }`)
    assert.strictEqual(server.requests.length, 2)
  }, TIMEOUT)
})
