/**
 * The OpenTelemetry exporter (`Telemetry.layerConfig`) against the loopback OTLP receiver: spans,
 * their links and attributes, the resource, headers, and what happens without an endpoint, with a
 * bad variable and with a receiver that is down.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import * as Telemetry from "../packages/cli/src/Telemetry.js"
import * as OtlpReceiver from "./support/OtlpReceiver.js"
import { unusedPort } from "./support/Ports.js"

const receivers: Array<OtlpReceiver.OtlpReceiver> = []
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()))
})
const receiver = async (options?: OtlpReceiver.StartOptions) => {
  const started = await OtlpReceiver.start(options)
  receivers.push(started)
  return started
}

/** The environment as `query()`'s `env` option provides it. */
const providerOf = (env: Record<string, string>) =>
  ConfigProvider.fromMap(new Map(Object.entries(env)), { pathDelim: "_", seqDelim: "," })

/** A parent span with two children, with attributes; returns the tracer it ran under. */
const program = Effect.gen(function*() {
  yield* Effect.sleep("5 millis").pipe(
    Effect.withSpan("child-read", {
      attributes: {
        "tool.name": "Read",
        "tool.lines": 42,
        "tool.ok": true,
        "tool.ratio": 0.25,
        "tool.tags": ["a", "b"]
      }
    })
  )
  yield* Effect.void.pipe(Effect.withSpan("child-grep", { attributes: { "tool.name": "Grep" } }))
  return yield* Effect.tracer
}).pipe(Effect.withSpan("turn", { attributes: { "session.id": "s-1" } }))

const runWith = <A, E>(effect: Effect.Effect<A, E>, env: Record<string, string>) =>
  Effect.runPromiseExit(effect.pipe(Effect.provide(Telemetry.layerConfig), Effect.withConfigProvider(providerOf(env))))

const byName = (spans: ReadonlyArray<OtlpReceiver.ReceivedSpan>, name: string) => {
  const span = spans.find((s) => s.name === name)
  assert.isDefined(span, `span ${name} among ${JSON.stringify(spans.map((s) => s.name))}`)
  return span!
}

describe("Telemetry.layerConfig", () => {
  it("exports a parent and two children, linked, with their attributes and the resource", async () => {
    const otlp = await receiver()
    const exit = await runWith(program, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url })
    assert.isTrue(Exit.isSuccess(exit))
    // The layer's close sent them: they are there when the run ends.
    const spans = await otlp.waitForSpans((spans) => spans.length >= 3, 1000)
    assert.strictEqual(spans.length, 3)
    const turn = byName(spans, "turn")
    const read = byName(spans, "child-read")
    const grep = byName(spans, "child-grep")
    assert.isUndefined(turn.parentSpanId)
    assert.strictEqual(read.parentSpanId, turn.spanId)
    assert.strictEqual(grep.parentSpanId, turn.spanId)
    assert.strictEqual(read.traceId, turn.traceId)
    assert.strictEqual(grep.traceId, turn.traceId)
    assert.notStrictEqual(read.spanId, grep.spanId)
    assert.deepStrictEqual(turn.attributes, { "session.id": "s-1" })
    assert.deepStrictEqual(read.attributes, {
      "tool.name": "Read",
      "tool.lines": 42,
      "tool.ok": true,
      "tool.ratio": 0.25,
      "tool.tags": ["a", "b"]
    })
    assert.deepStrictEqual(grep.attributes, { "tool.name": "Grep" })
    assert.isTrue(BigInt(read.endTimeUnixNano) > BigInt(read.startTimeUnixNano))
    assert.isTrue(BigInt(turn.startTimeUnixNano) <= BigInt(read.startTimeUnixNano))
    assert.strictEqual(turn.status.code, 1)
    for (const span of spans) {
      assert.strictEqual(span.resource["service.name"], "keel")
      assert.strictEqual(span.resource["service.version"], "0.1.0")
    }
    const request = otlp.requests()[0]!
    assert.strictEqual(request.path, "/v1/traces")
    assert.strictEqual(request.contentType, "application/json")
  })

  it("installs nothing without an endpoint: the program runs on the default tracer, nothing is sent", async () => {
    const otlp = await receiver()
    const outside = await Effect.runPromise(Effect.tracer)
    const exit = await runWith(program, { OTEL_SERVICE_NAME: "unused", OTEL_EXPORTER_OTLP_HEADERS: "not a header" })
    assert.isTrue(Exit.isSuccess(exit))
    if (Exit.isSuccess(exit)) assert.strictEqual(exit.value, outside)
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.strictEqual(otlp.requests().length, 0)
  })

  it("installs nothing with OTEL_SDK_DISABLED=true", async () => {
    const otlp = await receiver()
    const exit = await runWith(program, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_SDK_DISABLED: "TRUE" })
    assert.isTrue(Exit.isSuccess(exit))
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.strictEqual(otlp.requests().length, 0)
  })

  it("sends OTEL_EXPORTER_OTLP_HEADERS, values URL-decoded, and OTEL_SERVICE_NAME", async () => {
    const otlp = await receiver()
    const exit = await runWith(program, {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Bearer%20abc%3D%3D, x-tenant = keel-tests ,",
      OTEL_SERVICE_NAME: "keel-under-test"
    })
    assert.isTrue(Exit.isSuccess(exit))
    await otlp.waitForSpans((spans) => spans.length >= 3, 1000)
    const request = otlp.requests()[0]!
    assert.strictEqual(request.headers["authorization"], "Bearer abc==")
    assert.strictEqual(request.headers["x-tenant"], "keel-tests")
    assert.strictEqual(otlp.spans()[0]!.resource["service.name"], "keel-under-test")
  })

  it("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT wins over the base, and a base's path is kept", async () => {
    const otlp = await receiver()
    const down = await unusedPort()
    await runWith(program, {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${down}`,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: otlp.tracesUrl
    })
    assert.strictEqual((await otlp.waitForSpans((spans) => spans.length >= 3, 1000)).length, 3)

    const prefixed = await receiver()
    await runWith(program, { OTEL_EXPORTER_OTLP_ENDPOINT: `${prefixed.url}/otlp/` })
    assert.deepStrictEqual(prefixed.requests().map((r) => r.path), ["/otlp/v1/traces"])
  })

  it("sends protobuf with OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", async () => {
    const otlp = await receiver()
    const exit = await runWith(program, {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf"
    })
    assert.isTrue(Exit.isSuccess(exit))
    const [request] = otlp.requests()
    assert.strictEqual(request?.contentType, "application/x-protobuf")
    assert.isTrue(request!.body.length > 0)
    // The receiver records protobuf without decoding it.
    assert.strictEqual(otlp.spans().length, 0)
    assert.isTrue(request!.body.includes(Buffer.from("child-grep")))
  })

  it("completes when the receiver is down (connection refused)", async () => {
    const down = await unusedPort()
    const exit = await runWith(program, { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${down}` })
    assert.isTrue(Exit.isSuccess(exit))
  })

  it("completes when the receiver answers 503", async () => {
    const otlp = await receiver({ status: 503 })
    const exit = await runWith(program, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url })
    assert.isTrue(Exit.isSuccess(exit))
    assert.isTrue(otlp.requests().length >= 1)
  })

  it("fails with InvalidTelemetryConfig naming the variable, without header values", async () => {
    const cases: Array<[Record<string, string>, string, RegExp]> = [
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: "localhost:4318" }, "OTEL_EXPORTER_OTLP_ENDPOINT", /http:\/\/ or https:\/\//],
      [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http//x" }, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", /not a URL/],
      [
        { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1", OTEL_EXPORTER_OTLP_HEADERS: "a=1,secret-token" },
        "OTEL_EXPORTER_OTLP_HEADERS",
        /entry 2 has no "="/
      ],
      [
        {
          OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1",
          OTEL_EXPORTER_OTLP_HEADERS: "authorization=%E0%A4%Asecret"
        },
        "OTEL_EXPORTER_OTLP_HEADERS",
        /authorization is not validly URL-encoded/
      ],
      [
        { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        /not supported/
      ]
    ]
    for (const [env, variable, message] of cases) {
      const exit = await runWith(program, env)
      assert.isTrue(Exit.isFailure(exit), variable)
      if (Exit.isFailure(exit)) {
        const error = Option.getOrUndefined(Cause.failureOption(exit.cause))
        assert.instanceOf(error, Telemetry.InvalidTelemetryConfig)
        const invalid = error as Telemetry.InvalidTelemetryConfig
        assert.strictEqual(invalid._tag, "InvalidTelemetryConfig")
        assert.strictEqual(invalid.variable, variable)
        assert.match(invalid.message, new RegExp(`^invalid environment: ${variable}: `))
        assert.match(invalid.message, message)
        assert.notMatch(invalid.message, /secret/)
      }
    }
  })

  it("layer installs a tracer other than the default", async () => {
    const otlp = await receiver()
    const tracer = await Effect.runPromise(
      Effect.tracer.pipe(Effect.provide(Telemetry.layer({ url: otlp.tracesUrl })))
    )
    assert.notStrictEqual(tracer, await Effect.runPromise(Effect.tracer))
    assert.isTrue(Tracer.TracerTypeId in tracer)
  })
})
