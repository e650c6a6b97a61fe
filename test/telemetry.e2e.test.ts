/**
 * End to end: `keel -p` with `OTEL_EXPORTER_OTLP_ENDPOINT` pointing at a loopback OTLP receiver
 * delivers the run's spans before it exits: the session, the turn, each iteration, each stage, each
 * model call (model, attempts, tokens) and each tool call (name, outcome), linked parent to child.
 * Without the variable nothing is sent.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, run, workdir } from "./support/KeelProcess.js"
import * as OtlpReceiver from "./support/OtlpReceiver.js"

const receivers: Array<OtlpReceiver.OtlpReceiver> = []
afterEach(async () => {
  await closeServers()
  await Promise.all(receivers.splice(0).map((r) => r.close()))
})

const receiver = async () => {
  const started = await OtlpReceiver.start()
  receivers.push(started)
  return started
}

/** A Read of README.md, retried once after a 529, then the answer. */
const script = [
  FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "README.md" } }], {
    model: "claude-sonnet-4-6",
    usage: { input_tokens: 120, output_tokens: 30 }
  }),
  FakeAnthropic.errorReply(529, "overloaded_error", "Overloaded"),
  FakeAnthropic.textReply("It counts sheep.", { model: "claude-sonnet-4-6", usage: { input_tokens: 200, output_tokens: 8 } })
]

describe("keel -p with OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  it("delivers spans for the session, the turn, each iteration, stage, model call and tool call, linked", async () => {
    const otlp = await receiver()
    const server = await fake(script)
    const r = await run(["-p", "what does the README say?"], {
      env: { ...envFor(server), OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_SERVICE_NAME: "keel-e2e", KEEL_MAX_RETRIES: "2" },
      cwd: workdir()
    })
    assert.strictEqual(r.code, 0, r.stderr)
    assert.strictEqual(r.stdout, "It counts sheep.\n")
    // Delivered before the process exited: no waiting here.
    const spans = otlp.spans()
    const named = (name: string) => spans.filter((s) => s.name === name)
    const one = (name: string) => {
      const found = named(name)
      assert.strictEqual(found.length, 1, `one ${name} span, got ${found.length} (${spans.map((s) => s.name).join(", ")})`)
      return found[0]!
    }
    const session = one("keel.session")
    const turn = one("keel.turn")
    const iterations = named("keel.iteration")
    const calls = named("keel.model.call")
    const tool = one("keel.tool")
    assert.strictEqual(session.resource["service.name"], "keel-e2e")
    assert.strictEqual(turn.parentSpanId, session.spanId)
    assert.deepStrictEqual(iterations.map((s) => s.parentSpanId), [turn.spanId, turn.spanId])
    assert.deepStrictEqual(iterations.map((s) => s.attributes["keel.iteration"]), [1, 2])
    assert.isTrue(spans.every((s) => s.traceId === session.traceId), "one trace")

    // The model calls: one per iteration, the second retried once after the 529.
    assert.strictEqual(calls.length, 2)
    assert.deepStrictEqual(calls.map((c) => c.parentSpanId), iterations.map((i) => i.spanId))
    assert.deepStrictEqual(calls.map((c) => c.attributes["keel.model"]), ["claude-sonnet-4-6", "claude-sonnet-4-6"])
    assert.deepStrictEqual(calls.map((c) => c.attributes["keel.attempts"]), [1, 2])
    assert.deepStrictEqual(calls.map((c) => c.attributes["keel.tokens.input"]), [120, 200])
    assert.deepStrictEqual(calls.map((c) => c.attributes["keel.tokens.output"]), [30, 8])
    // Each request is an attempt, under its model call: one for the first call, two for the retried one.
    const attempts = named("keel.model.attempt")
    assert.deepStrictEqual(attempts.map((a) => [a.parentSpanId, a.attributes["keel.attempt"]]), [
      [calls[0]!.spanId, 1],
      [calls[1]!.spanId, 1],
      [calls[1]!.spanId, 2]
    ])

    // The tool call, under the iteration that asked for it.
    assert.strictEqual(tool.parentSpanId, iterations[0]!.spanId)
    assert.strictEqual(tool.attributes["keel.tool.name"], "Read")
    assert.strictEqual(tool.attributes["keel.tool.outcome"], "ok")
    assert.isAbove(Number(BigInt(tool.endTimeUnixNano) - BigInt(tool.startTimeUnixNano)), 0)

    // The context stages, before each call.
    const stages = named("keel.stage")
    assert.deepStrictEqual(
      [...new Set(stages.map((s) => s.attributes["keel.stage.id"]))],
      ["tool-result-budget", "snip", "microcompact", "context-collapse", "autocompact"]
    )
    assert.isTrue(stages.every((s) => iterations.some((i) => i.spanId === s.parentSpanId)))
  })

  it("a denied tool call's span says so", async () => {
    const otlp = await receiver()
    const server = await fake([
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "touch x" } }]),
      FakeAnthropic.textReply("ok")
    ])
    const r = await run(["-p", "touch x"], { env: { ...envFor(server), OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url }, cwd: workdir() })
    assert.strictEqual(r.code, 0, r.stderr)
    const tool = otlp.spans().find((s) => s.name === "keel.tool")
    assert.strictEqual(tool?.attributes["keel.tool.name"], "Bash")
    assert.strictEqual(tool?.attributes["keel.tool.outcome"], "denied")
  })

  it("without the variable nothing is sent", async () => {
    const otlp = await receiver()
    const server = await fake([FakeAnthropic.textReply("hi")])
    const r = await run(["-p", "hello"], { env: envFor(server), cwd: workdir() })
    assert.strictEqual(r.code, 0, r.stderr)
    assert.strictEqual(otlp.requests().length, 0)
  })
})
