/**
 * End to end: the resilience of the real `keel` binary against a misbehaving loopback fake of the
 * Messages API: retries (429, 529, mid-stream errors, broken and stalled streams), model fallback,
 * the credentials refresh on 401, errors that are not retried, and bad retry configuration. Each test
 * checks both what the server received and what keel printed.
 *
 * The tests run concurrently (keel takes most of two seconds to start), so servers are closed after
 * the whole file rather than after each test; the one test that times a stall runs on its own.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, lines, run } from "./support/KeelProcess.js"
import * as SdkConformance from "./support/SdkConformance.js"

afterAll(() => closeServers())

/** The server asks for no wait: the retry still waits the backoff (the floor of every delay). */
const now = { "retry-after": "0" }

const overloaded = () => FakeAnthropic.errorReply(529, "overloaded_error", "Overloaded", now)

/** `type/subtype` of each message, `stream_event/<event type>` for partial messages. */
/** Message kinds in order (`system/informational`: the one-time warning that the fake's model has no price). */
const kinds = (messages: ReadonlyArray<any>): Array<string> =>
  messages.map((m) =>
    m.type === "stream_event"
      ? `stream_event/${m.event.type}`
      : m.subtype === "notification"
      ? `system/notification:${m.key}`
      : m.subtype === "informational" && m.fallback_model !== undefined
      ? "system/informational:fallback"
      : m.subtype !== undefined
      ? `${m.type}/${m.subtype}`
      : m.type
  )

const ofSubtype = (messages: ReadonlyArray<any>, subtype: string): Array<any> =>
  messages.filter((m) => m.type === "system" && m.subtype === subtype)

/** The texts of the `assistant` messages. */
const assistantTexts = (messages: ReadonlyArray<any>): Array<string> =>
  messages.filter((m) => m.type === "assistant").flatMap((m) =>
    m.message.content.filter((b: any) => b.type === "text").map((b: any) => b.text)
  )

/**
 * Runs `keel -p hi --output-format stream-json ...args` against a fake with `script`; checks that the
 * output is JSON lines that end with exactly one `result`, and returns it with the messages.
 */
/** Every message of every run in this file, checked against the Agent SDK's types at the end. */
const seen: Array<unknown> = []

afterAll(() => {
  // Retries, retractions, stalls and fallbacks: each message Keel emits for them is one the SDK declares.
  assert.deepStrictEqual(SdkConformance.check(seen), [])
}, 60_000)

const streamJson = async (
  script: ReadonlyArray<FakeAnthropic.ScriptItem>,
  args: ReadonlyArray<string> = [],
  env: Record<string, string> = {}
) => {
  const server = await fake(script)
  const r = await run(["-p", "hi", "--output-format", "stream-json", ...args], {
    env: { ...envFor(server), ...env }
  })
  assert.strictEqual(r.stderr, "")
  const messages = lines(r.stdout)
  seen.push(...messages)
  assert.deepStrictEqual(messages.map((m) => m.type).filter((t) => t === "result"), ["result"])
  const result = messages.at(-1)
  assert.strictEqual(result.type, "result")
  assert.strictEqual(result.num_turns, 1)
  for (const m of messages) assert.strictEqual(m.session_id, messages[0].session_id)
  return { server, code: r.code, messages, result }
}

/** Asserts a successful turn whose one answer is `text`. */
const assertSuccess = (t: { code: number | null; messages: ReadonlyArray<any>; result: any }, text: string) => {
  assert.strictEqual(t.code, 0)
  assert.deepStrictEqual(
    [t.result.subtype, t.result.is_error, t.result.result, t.result.terminal_reason],
    ["success", false, text, "completed"]
  )
  assert.deepStrictEqual(assistantTexts(t.messages), [text])
}

/**
 * Asserts that `messages[at]` retracts the partial answer of message `messageId` and that the first
 * retry follows it, for an `error` without an HTTP status; returns that `api_retry` message.
 */
const assertRetractedThenRetried = (messages: ReadonlyArray<any>, at: number, messageId: string, error: string) => {
  const [retracted, retry] = [messages[at], messages[at + 1]]
  assert.deepStrictEqual(
    [retracted.subtype, retracted.key, retracted.reason, retracted.message_id],
    ["notification", "message_retracted", "retry", messageId]
  )
  assert.deepStrictEqual([retry.subtype, retry.attempt, retry.error_status, retry.error], ["api_retry", 1, null, error])
  return retry
}

/** Asserts that every request went to `/v1/messages` with the same body. */
const assertSameRequests = (server: FakeAnthropic.FakeAnthropic, count: number) => {
  assert.strictEqual(server.requests.length, count)
  for (const request of server.requests) {
    assert.strictEqual(request.path, "/v1/messages")
    assert.deepStrictEqual(request.body, server.requests[0]!.body)
  }
}

describe.concurrent("keel retries", () => {
  it("retries a 429 after the server's retry-after, with one api_retry line", async () => {
    const t = await streamJson([
      FakeAnthropic.errorReply(429, "rate_limit_error", "Number of request tokens has exceeded your rate limit", now),
      FakeAnthropic.textReply("Hello after the rate limit")
    ])
    assertSameRequests(t.server, 2)
    assert.deepStrictEqual(kinds(t.messages), ["system/init", "system/api_retry", "assistant", "system/informational", "result/success"])
    const retry = t.messages[1]
    assert.deepStrictEqual(
      [retry.attempt, retry.max_retries, retry.retry_delay_ms, retry.error_status, retry.error],
      [1, 10, retry.retry_delay_ms, 429, "rate_limit"]
    )
    // retry-after: 0 does not shorten the backoff: 500 ms plus up to 25 % jitter.
    assert.isAtLeast(retry.retry_delay_ms, 500)
    assert.isAtMost(retry.retry_delay_ms, 625)
    assert.strictEqual(
      retry.error_message,
      "RateLimited (HTTP 429): Number of request tokens has exceeded your rate limit [request req_1]"
    )
    assertSuccess(t, "Hello after the rate limit")
  })

  it("after three 529s, switches to the --fallback-model and says so", async () => {
    const t = await streamJson(
      [overloaded(), overloaded(), overloaded(), FakeAnthropic.textReply("From the fallback", { model: "claude-fallback-x" })],
      ["--model", "claude-primary-x", "--fallback-model", "claude-fallback-x"]
    )
    assert.deepStrictEqual(t.server.requests.map((r) => r.body.model), [
      "claude-primary-x",
      "claude-primary-x",
      "claude-primary-x",
      "claude-fallback-x"
    ])
    const withoutModel = t.server.requests.map(({ body: { model: _, ...rest } }) => rest)
    for (const body of withoutModel) assert.deepStrictEqual(body, withoutModel[0])
    assert.deepStrictEqual(kinds(t.messages), [
      "system/init",
      "system/api_retry",
      "system/api_retry",
      "system/informational:fallback",
      "assistant",
      "system/informational",
      "result/success"
    ])
    assert.strictEqual(t.messages[0].model, "claude-primary-x")
    assert.deepStrictEqual(ofSubtype(t.messages, "api_retry").map((m) => [m.attempt, m.error_status, m.error]), [
      [1, 529, "overloaded"],
      [2, 529, "overloaded"]
    ])
    const switched = t.messages[3]
    assert.deepStrictEqual(
      [switched.original_model, switched.fallback_model, switched.content, switched.error_status],
      [
        "claude-primary-x",
        "claude-fallback-x",
        "Switched to claude-fallback-x due to high demand for claude-primary-x",
        529
      ]
    )
    assert.strictEqual(t.messages[4].message.model, "claude-fallback-x")
    assertSuccess(t, "From the fallback")
  })

  it("without a fallback model, gives up on 529s when KEEL_MAX_RETRIES is spent", async () => {
    const t = await streamJson([overloaded(), overloaded(), overloaded()], [], { KEEL_MAX_RETRIES: "2" })
    assertSameRequests(t.server, 3)
    assert.strictEqual(t.code, 1)
    assert.deepStrictEqual(kinds(t.messages), ["system/init", "system/api_retry", "system/api_retry", "result/success"])
    assert.deepStrictEqual(ofSubtype(t.messages, "api_retry").map((m) => [m.attempt, m.max_retries, m.error_status]), [
      [1, 2, 529],
      [2, 2, 529]
    ])
    assert.deepStrictEqual([t.result.is_error, t.result.api_error_status, t.result.terminal_reason], [
      true,
      529,
      "model_error"
    ])
    assert.include(t.result.result, "Repeated 529 Overloaded errors")
    assert.include(t.result.result, "after 3 attempts")
    assert.include(t.result.result, "[request req_3]")
  })

  it("an overloaded_error event after a 200 retracts the partial answer with a tombstone, then retries", async () => {
    const t = await streamJson(
      [
        FakeAnthropic.textReply("This partial answer is void", {
          id: "msg_void",
          chunkSize: 100,
          truncateAfter: 3,
          midStreamError: { type: "overloaded_error", message: "Overloaded" }
        }),
        FakeAnthropic.textReply("The answer", { id: "msg_good", chunkSize: 100 })
      ],
      ["--include-partial-messages"]
    )
    assertSameRequests(t.server, 2)
    assert.deepStrictEqual(kinds(t.messages), [
      "system/init",
      "stream_event/message_start",
      "stream_event/content_block_start",
      "stream_event/content_block_delta",
      "system/notification:message_retracted",
      "system/api_retry",
      "stream_event/message_start",
      "stream_event/content_block_start",
      "stream_event/content_block_delta",
      "stream_event/content_block_stop",
      "stream_event/message_delta",
      "stream_event/message_stop",
      "assistant",
      "system/informational",
      "result/success"
    ])
    assert.strictEqual(t.messages[1].event.message.id, "msg_void")
    assert.strictEqual(t.messages[3].event.delta.text, "This partial answer is void")
    const retry = assertRetractedThenRetried(t.messages, 4, "msg_void", "overloaded")
    assert.include(retry.error_message, "Overloaded")
    assert.isAtLeast(retry.retry_delay_ms, 500)
    assert.isAtMost(retry.retry_delay_ms, 625)
    assert.strictEqual(t.messages[6].event.message.id, "msg_good")
    assert.strictEqual(t.messages.at(-3).message.id, "msg_good")
    assertSuccess(t, "The answer")
  })

  it("a connection reset mid-stream is a truncated stream, retried", async () => {
    const t = await streamJson([
      FakeAnthropic.textReply("Cut off in the middle", { id: "msg_cut", truncateAfter: 3, truncateMode: "destroy" }),
      FakeAnthropic.textReply("Whole answer")
    ])
    assertSameRequests(t.server, 2)
    assert.deepStrictEqual(kinds(t.messages), [
      "system/init",
      "system/notification:message_retracted",
      "system/api_retry",
      "assistant",
      "system/informational",
      "result/success"
    ])
    assert.include(assertRetractedThenRetried(t.messages, 1, "msg_cut", "unknown").error_message, "StreamTruncated")
    assertSuccess(t, "Whole answer")
  })

  it("529 with retry-after: 0 twice, then success: each retry waits at least the backoff floor (0.5 s, then 1 s)", async () => {
    const t = await streamJson([overloaded(), overloaded(), FakeAnthropic.textReply("Served at last")])
    assertSameRequests(t.server, 3)
    const at = t.server.requests.map((r) => r.receivedAt)
    // Wall-clock lower bounds only: the request goes out after the wait, so each gap is at least it.
    assert.isAtLeast(at[1]! - at[0]!, 500)
    assert.isAtLeast(at[2]! - at[1]!, 1_000)
    assert.deepStrictEqual(ofSubtype(t.messages, "api_retry").map((m) => [m.attempt, m.error_status, m.retry_delay_ms >= 500 * m.attempt]), [
      [1, 529, true],
      [2, 529, true]
    ])
    assertSuccess(t, "Served at last")
  })

  it("a 401 re-reads the credentials and retries at once, with the same authorization", async () => {
    const t = await streamJson(
      [FakeAnthropic.errorReply(401, "authentication_error", "invalid x-api-key"), FakeAnthropic.textReply("Authorized")]
    )
    assertSameRequests(t.server, 2)
    assert.deepStrictEqual(t.server.requests.map((r) => r.headers.authorization), ["Bearer test-key", "Bearer test-key"])
    assert.deepStrictEqual(kinds(t.messages), ["system/init", "system/api_retry", "assistant", "system/informational", "result/success"])
    const retry = t.messages[1]
    assert.deepStrictEqual(
      [retry.attempt, retry.retry_delay_ms, retry.error_status, retry.error],
      [1, 0, 401, "authentication_failed"]
    )
    assertSuccess(t, "Authorized")
  })

  it("a second 401 ends the turn with Authentication failed and exit code 1", async () => {
    const unauthorized = () => FakeAnthropic.errorReply(401, "authentication_error", "invalid x-api-key")
    const t = await streamJson([unauthorized(), unauthorized()])
    assertSameRequests(t.server, 2)
    assert.deepStrictEqual(t.server.requests.map((r) => r.headers.authorization), ["Bearer test-key", "Bearer test-key"])
    assert.strictEqual(t.code, 1)
    assert.deepStrictEqual(kinds(t.messages), ["system/init", "system/api_retry", "result/success"])
    assert.strictEqual(t.messages[1].error_status, 401)
    assert.deepStrictEqual([t.result.is_error, t.result.api_error_status], [true, 401])
    assert.match(t.result.result, /^API Error: Authentication failed after 2 attempts: .*invalid x-api-key \[request req_2\]/)
  })

  it("a 400 invalid_request_error is not retried: one request, a readable error, exit code 1", async () => {
    const server = await fake([
      FakeAnthropic.errorReply(400, "invalid_request_error", "max_tokens: Field required"),
      FakeAnthropic.textReply("never sent")
    ])
    const r = await run(["-p", "hi"], { env: envFor(server) })
    assert.strictEqual(server.requests.length, 1)
    assert.strictEqual(r.code, 1)
    assert.strictEqual(r.stdout, "")
    assert.strictEqual(r.stderr, "API Error: InvalidRequest (HTTP 400): max_tokens: Field required [request req_1]\n")
  })

  it("in text mode, retries and fallbacks are told on stderr; stdout keeps only the answer", async () => {
    const server = await fake([
      FakeAnthropic.errorReply(429, "rate_limit_error", "slow down", now),
      overloaded(),
      overloaded(),
      overloaded(),
      FakeAnthropic.textReply("Answer from the fallback")
    ])
    const r = await run(["-p", "hi", "--model", "claude-primary-t", "--fallback-model", "claude-fallback-t"], {
      env: envFor(server)
    })
    assert.strictEqual(r.code, 0)
    assert.strictEqual(r.stdout, "Answer from the fallback\n")
    // The delays are the backoff's (500 ms, 1 s, 2 s, each plus up to 25 % jitter), rounded to a tenth.
    const delays = [...r.stderr.matchAll(/retrying in ([\d.]+) s/g)].map((m) => Number(m[1]))
    assert.strictEqual(delays.length, 3)
    delays.forEach((d, i) => assert.isTrue(d >= 0.5 * 2 ** i && d <= 0.65 * 2 ** i, `delay ${i + 1}: ${d} s`))
    assert.strictEqual(
      r.stderr.replace(/retrying in [\d.]+ s/g, "retrying in … s"),
      [
        "keel: RateLimited (HTTP 429): slow down [request req_1]; retrying in … s (retry 1/10)",
        "keel: Overloaded (HTTP 529): Overloaded [request req_2]; retrying in … s (retry 2/10)",
        "keel: Overloaded (HTTP 529): Overloaded [request req_3]; retrying in … s (retry 3/10)",
        "keel: Switched to claude-fallback-t due to high demand for claude-primary-t",
        "keel: No price is known for model claude-fake: its tokens count as $0 in total_cost_usd. " +
        "Give its prices in a pricing file named by KEEL_PRICING_FILE (or, embedding Keel, the Session's pricing option).",
        ""
      ].join("\n")
    )
  })

  it("a bad KEEL_* variable stops keel before any request with exit code 2, naming the variable", async () => {
    const server = await fake([FakeAnthropic.textReply("never sent")])
    const cases = [
      ["KEEL_STREAM_IDLE_TIMEOUT_MS", "abc", "Expected an integer value but received \"abc\""],
      ["KEEL_MAX_RETRIES", "-1", "must be a whole number from 0 to 100"],
      ["KEEL_UNATTENDED_RETRY", "maybe", "Expected a boolean value but received \"maybe\""]
    ] as const
    for (const [name, value, problem] of cases) {
      const r = await run(["-p", "hi", "--output-format", "stream-json"], { env: { ...envFor(server), [name]: value } })
      assert.strictEqual(r.code, 2)
      assert.strictEqual(r.stdout, "")
      assert.strictEqual(r.stderr, `keel: invalid environment: ${name}: ${problem}\n`)
    }
    assert.strictEqual(server.requests.length, 0)
  })
})

describe("keel idle watchdog", () => {
  it("a stalled stream warns at half the idle timeout, is aborted at the timeout, and retried", async () => {
    const t = await streamJson(
      [
        FakeAnthropic.textReply("Stalled answer", { id: "msg_stalled", stallAfter: 2 }),
        FakeAnthropic.textReply("Fresh answer")
      ],
      [],
      { KEEL_STREAM_IDLE_TIMEOUT_MS: "1500" }
    )
    assertSameRequests(t.server, 2)
    assert.strictEqual(t.server.aborted, 1)
    assert.deepStrictEqual(kinds(t.messages), [
      "system/init",
      "system/notification:stream_stalled",
      "system/notification:message_retracted",
      "system/api_retry",
      "assistant",
      "system/informational",
      "result/success"
    ])
    const stalled = t.messages[1]
    assert.deepStrictEqual([stalled.priority, stalled.idle_ms, stalled.timeout_ms], ["medium", 750, 1500])
    assert.strictEqual(stalled.text, "No data from the API for 0.8 s; the request is retried at 1.5 s")
    assert.include(assertRetractedThenRetried(t.messages, 2, "msg_stalled", "unknown").error_message, "StreamIdle")
    assertSuccess(t, "Fresh answer")
  })
})
