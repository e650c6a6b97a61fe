/**
 * End to end: the real `keel` binary's requests take each model's output limits from the capability
 * table: `max_tokens` is the model's default (Opus 4.6 64,000, Sonnet 4.6 32,000, a model the table
 * does not know 32,000), `CLAUDE_CODE_MAX_OUTPUT_TOKENS` up to the model's upper limit, a fallback
 * model's request its own default (its thinking budget below it), and `KEEL_MODELS_FILE` adds models.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, lines, run } from "./support/KeelProcess.js"

afterAll(() => closeServers())

const TIMEOUT = 60_000

/** Runs `keel -p hi --output-format stream-json ...args` against `script`: the requests' bodies and headers, and the messages. */
const requestsOf = async (
  args: ReadonlyArray<string>,
  script: ReadonlyArray<FakeAnthropic.ScriptItem> = [FakeAnthropic.textReply("ok")],
  env: Record<string, string> = {}
) => {
  const server = await fake(script)
  const r = await run(["-p", "hi", "--output-format", "stream-json", ...args], { env: { ...envFor(server), ...env } })
  return { ...r, requests: server.requests, messages: r.code === 2 ? [] : lines(r.stdout) }
}

describe.concurrent("keel -p: max_tokens per model", () => {
  for (
    const [model, expected] of [
      ["claude-opus-4-6", 64_000],
      ["claude-sonnet-4-6", 32_000],
      ["claude-haiku-4-5-20251001", 32_000],
      ["claude-unknown-model-x", 32_000]
    ] as const
  ) {
    it(`--model ${model} sends max_tokens ${expected}, and the result reports it as the model's maxOutputTokens`, async () => {
      const r = await requestsOf(["--model", model], [FakeAnthropic.textReply("ok", { model })])
      assert.strictEqual(r.code, 0, r.stderr)
      assert.deepStrictEqual(r.requests.map((q) => q.body.max_tokens), [expected])
      assert.strictEqual(r.messages.at(-1).modelUsage[model].maxOutputTokens, expected)
    }, TIMEOUT)
  }

  it("CLAUDE_CODE_MAX_OUTPUT_TOKENS is sent as given up to the model's upper limit", async () => {
    const env = { CLAUDE_CODE_MAX_OUTPUT_TOKENS: "100000" }
    const sonnet = await requestsOf(["--model", "claude-sonnet-4-6"], undefined, env)
    const opus41 = await requestsOf(["--model", "claude-opus-4-1"], undefined, env)
    assert.deepStrictEqual(sonnet.requests.map((q) => q.body.max_tokens), [100_000])
    assert.deepStrictEqual(opus41.requests.map((q) => q.body.max_tokens), [32_000])
    const bad = await requestsOf(["--model", "claude-sonnet-4-6"], undefined, { CLAUDE_CODE_MAX_OUTPUT_TOKENS: "0" })
    assert.strictEqual(bad.code, 2)
    assert.include(bad.stderr, "CLAUDE_CODE_MAX_OUTPUT_TOKENS")
    assert.strictEqual(bad.requests.length, 0)
  }, TIMEOUT)

  it("after three 529s the fallback model's request carries its own max_tokens, its thinking budget below it", async () => {
    const overloaded = () => FakeAnthropic.errorReply(529, "overloaded_error", "Overloaded", { "retry-after": "0" })
    const r = await requestsOf(
      ["--model", "claude-opus-4-6", "--fallback-model", "claude-haiku-4-5"],
      [overloaded(), overloaded(), overloaded(), FakeAnthropic.textReply("From the fallback", { model: "claude-haiku-4-5" })]
    )
    assert.strictEqual(r.code, 0, r.stderr)
    assert.deepStrictEqual(r.requests.map((q) => [q.body.model, q.body.max_tokens]), [
      ["claude-opus-4-6", 64_000],
      ["claude-opus-4-6", 64_000],
      ["claude-opus-4-6", 64_000],
      ["claude-haiku-4-5", 32_000]
    ])
    assert.deepStrictEqual(r.requests[3]!.body.thinking, { type: "enabled", budget_tokens: 31_999 })
    assert.strictEqual(r.messages.at(-1).modelUsage["claude-haiku-4-5"].maxOutputTokens, 32_000)
  }, TIMEOUT)

  it("KEEL_MODELS_FILE adds a model: its default max_tokens, its betas; an invalid file stops with exit 2", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keel-models-"))
    const file = path.join(dir, "models.json")
    fs.writeFileSync(
      file,
      JSON.stringify({ "my-proxy-model": { maxOutputTokens: { default: 12_000, upper: 16_000 }, betas: ["proxy-beta-2025-01-01"] } })
    )
    const r = await requestsOf(["--model", "my-proxy-model"], undefined, { KEEL_MODELS_FILE: file })
    assert.strictEqual(r.code, 0, r.stderr)
    assert.deepStrictEqual(r.requests.map((q) => q.body.max_tokens), [12_000])
    assert.strictEqual(r.requests[0]!.headers["anthropic-beta"], "proxy-beta-2025-01-01")
    const broken = path.join(dir, "broken.json")
    fs.writeFileSync(broken, JSON.stringify({ "my-proxy-model": { maxOutputTokens: { default: -1 } } }))
    const bad = await requestsOf(["--model", "my-proxy-model"], undefined, { KEEL_MODELS_FILE: broken })
    assert.strictEqual(bad.code, 2)
    assert.include(bad.stderr, `${broken} is not a valid models file`)
    assert.strictEqual(bad.requests.length, 0)
  }, TIMEOUT)
})
