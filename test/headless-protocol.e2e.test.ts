/**
 * End to end: the headless protocol of the real `keel` binary against the loopback fake of the
 * Messages API.
 *
 * - `stream-json` output, checked against the Claude Agent SDK's own type definitions (sdk.d.ts, see
 *   support/SdkConformance.ts) over a run with tool calls, tool progress, a denied call, a retry and
 *   a compaction, and over a `--input-format stream-json` session.
 * - `--input-format stream-json`: one long-lived process, a turn per user message line as it arrives,
 *   a result after each, a malformed line answered by an error result, interrupts.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, lines, live, run, userLine, workdir } from "./support/KeelProcess.js"
import * as SdkConformance from "./support/SdkConformance.js"

afterEach(() => closeServers())

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** Asserts that every message carries a UUID `uuid` of its own and the session's `session_id`. */
const assertStamped = (messages: ReadonlyArray<any>, sessionId: string) => {
  const uuids = new Set<string>()
  for (const [i, m] of messages.entries()) {
    assert.match(m.uuid, UUID, `message ${i} (${SdkConformance.kindOf(m)}) has a uuid`)
    assert.strictEqual(m.session_id, sessionId, `message ${i} (${SdkConformance.kindOf(m)}) has the session id`)
    uuids.add(m.uuid)
  }
  assert.strictEqual(uuids.size, messages.length, "every uuid is new")
}

/** Asserts the messages typecheck against the SDK's types, listing every diagnostic if not. */
const assertConforms = (messages: ReadonlyArray<unknown>) => {
  const problems = SdkConformance.check(messages)
  assert.deepStrictEqual(problems, [], `messages that do not fit the SDK's types:\n${problems.join("\n")}`)
}

/** A text file of `count` distinct 100-character lines (large enough for a compaction to shrink the conversation). */
const bigFile = (count: number) =>
  Array.from({ length: count }, (_, i) => `big line ${i + 1}: `.padEnd(99, "lorem ipsum dolor sit amet ") + "\n").join("")

const sonnet = { model: "claude-sonnet-4-6" }

describe("stream-json output against the Claude Agent SDK's types", () => {
  it("a run with tool calls, tool progress, a denied call, a retry and a compaction: every message typechecks", async () => {
    const dir = workdir()
    fs.writeFileSync(path.join(dir, "big.txt"), bigFile(400))
    const server = await fake([
      FakeAnthropic.toolUseReply([
        { name: "Read", input: { file_path: "big.txt" }, id: "toolu_read" },
        { name: "Bash", input: { command: "sleep 1.3", description: "wait a little" }, id: "toolu_bash" },
        { name: "Write", input: { file_path: "x.txt", content: "x" }, id: "toolu_write" }
      ], { ...sonnet, usage: { input_tokens: 900, output_tokens: 40 } }),
      FakeAnthropic.errorReply(529, "overloaded_error", "Overloaded"),
      FakeAnthropic.errorReply(400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum"),
      FakeAnthropic.textReply("SUMMARY: big.txt was read.", sonnet),
      FakeAnthropic.textReply("Done.", sonnet)
    ])
    const r = await run([
      "-p",
      "read big.txt",
      "--output-format",
      "stream-json",
      "--verbose",
      "--include-partial-messages",
      "--allowedTools",
      "Bash(sleep:*)"
    ], { env: { ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home") }, cwd: dir })
    assert.strictEqual(r.stderr, "")
    assert.strictEqual(r.code, 0)
    const messages = lines(r.stdout)
    const kinds = messages.map(SdkConformance.kindOf)
    for (
      const kind of [
        "system/init",
        "stream_event",
        "assistant",
        "tool_progress",
        "system/permission_denied",
        "user",
        "system/api_retry",
        "system/status",
        "system/compact_boundary",
        "result"
      ]
    ) assert.include(kinds, kind)
    assert.strictEqual(kinds[0], "system/init")
    assert.deepStrictEqual(kinds.filter((k) => k === "result").length, 1)
    assert.strictEqual(kinds.at(-1), "result")
    assert.deepStrictEqual([messages.at(-1).subtype, messages.at(-1).result], ["success", "Done."])
    // The compaction, as Claude Code orders it: status compacting, its closing status (success), the boundary.
    const compacting = kinds.indexOf("system/status")
    assert.deepStrictEqual(kinds.slice(compacting, compacting + 3), ["system/status", "system/status", "system/compact_boundary"])
    assert.deepStrictEqual(
      messages.slice(compacting, compacting + 2).map((m) => [m.status, m.compact_result]),
      [["compacting", undefined], [null, "success"]]
    )
    assertStamped(messages, messages[0].session_id)
    assertConforms(messages)
    // A compaction that failed closes its status with the reason.
    const failed = { ...messages[compacting + 1], compact_result: "failed", compact_error: "the summary came back empty" }
    assertConforms([failed])
  }, 120_000)

  it("the check fails for messages that break the SDK's types, naming the message and the field", () => {
    const stamp = { uuid: "5a33ba10-8a43-45aa-97b3-4780fcfb4085", session_id: "s" }
    const usage = {
      input_tokens: 1,
      output_tokens: 1,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      server_tool_use: { web_search_requests: 0, web_fetch_requests: 0 },
      service_tier: "standard",
      cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 0 },
      output_tokens_details: { thinking_tokens: 0 },
      fallback_credit: null,
      inference_geo: "",
      iterations: [],
      speed: "standard"
    }
    const result = {
      type: "result",
      subtype: "success",
      is_error: false,
      result: "ok",
      duration_ms: 1,
      duration_api_ms: 1,
      num_turns: 1,
      stop_reason: "end_turn",
      total_cost_usd: 0,
      usage,
      modelUsage: {},
      permission_denials: [],
      terminal_reason: "completed",
      ...stamp
    }
    const { duration_ms: _, ...noDuration } = result
    const problems = SdkConformance.check([
      result, // m0: fine
      { ...result, keel_note: "extra fields at the top level are allowed" }, // m1: fine
      noDuration, // m2: a required field is missing
      { ...result, is_error: "no" }, // m3: a field of the wrong type
      { ...result, terminal_reason: "max_output_tokens" }, // m4: a value the SDK's union does not have
      { ...result, usage: { ...usage, unknown_counter: 1 } }, // m5: an unknown field inside a nested object
      { type: "system", subtype: "status", status: "stalled", ...stamp }, // m6: not an SDKStatus
      { type: "system", subtype: "tombstone", reason: "retry", ...stamp }, // m7: no such SDK message
      { ...result, uuid: "not-a-uuid" }, // m8: not UUID-shaped
      { type: "user", message: { role: "user", content: "hi" }, parent_tool_use_id: null, session_id: "s" }, // m9: no uuid
      { type: "assistant", message: { content: [{ type: "tool_use", id: "toolu_b", name: "Bash", input: {} }] }, ...stamp }, // m10: names the tool
      {
        type: "user",
        message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_b", content: "x" }] },
        parent_tool_use_id: null,
        tool_use_result: { stdout: 1, stderr: "", interrupted: false },
        ...stamp
      } // m11: its tool_use_result is not a BashOutput (checked as r11)
    ])
    const of = (m: string) => problems.filter((p) => p.startsWith(`${m} `))
    assert.deepStrictEqual([of("m0"), of("m1")], [[], []])
    assert.match(of("m2").join("\n"), /duration_ms/)
    assert.match(of("m3").join("\n"), /is_error/)
    assert.match(of("m4").join("\n"), /max_output_tokens/)
    assert.match(of("m5").join("\n"), /unknown_counter/)
    assert.match(of("m6").join("\n"), /"stalled"/)
    assert.deepStrictEqual(of("m7"), ["m7 (system/tombstone): the Claude Agent SDK defines no message of this type"])
    assert.match(of("m8").join("\n"), /not-a-uuid/)
    assert.match(of("m9").join("\n"), /uuid/)
    assert.deepStrictEqual(of("m11"), [])
    assert.match(of("r11").join("\n"), /stdout/)
  }, 60_000)
})

/** The text of the last user message of a request body, its blocks joined. */
const lastUserText = (body: any): string => {
  const content = body.messages.at(-1).content
  return typeof content === "string"
    ? content
    : content.filter((b: any) => b.type === "text").map((b: any) => b.text).join("")
}

/** A 1×1 transparent PNG. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="

const streamInput = ["-p", "--input-format", "stream-json", "--output-format", "stream-json"]

describe("--input-format stream-json", () => {
  it("three turns in one process, each started when its line arrives and answered by its result; end of input exits 0", async () => {
    const dir = workdir()
    const server = await fake([
      (body) => FakeAnthropic.textReply(`one: ${lastUserText(body)}`, sonnet),
      (body) => FakeAnthropic.textReply(`two: ${lastUserText(body)}`, sonnet),
      FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "README.md" }, id: "toolu_r" }], sonnet),
      FakeAnthropic.textReply("three: read it", sonnet)
    ])
    const keel = live(streamInput, { env: { ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home") }, cwd: dir })
    const results = (ms: Array<any>) => ms.filter((m) => m.type === "result")

    // Nothing happens before the first line: no request, no output.
    await new Promise((resolve) => setTimeout(resolve, 300))
    assert.deepStrictEqual([server.requests.length, keel.messages().length], [0, 0])

    keel.send(userLine("first question"))
    let ms = await keel.waitFor((m) => results(m).length === 1)
    assert.strictEqual(server.requests.length, 1)
    assert.strictEqual(results(ms)[0].result, "one: first question")

    // Content blocks go to the model as given: text and an image.
    keel.send(userLine([
      { type: "text", text: "second, with a picture" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } }
    ]))
    ms = await keel.waitFor((m) => results(m).length === 2)
    assert.strictEqual(server.requests.length, 2)
    assert.strictEqual(results(ms)[1].result, "two: second, with a picture")
    const sent = server.requests[1]!.body.messages.at(-1).content
    assert.deepStrictEqual(sent.map(({ cache_control: _, ...b }: any) => b), [
      { type: "text", text: "second, with a picture" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } }
    ])
    // The session goes on: the second request carries the first turn.
    assert.deepStrictEqual(server.requests[1]!.body.messages.map((m: any) => m.role), ["user", "assistant", "user"])

    keel.send(userLine("third: read README.md"))
    ms = await keel.waitFor((m) => results(m).length === 3)
    assert.strictEqual(results(ms)[2].result, "three: read it")
    assert.strictEqual(server.requests.length, 4)

    const ended = Date.now()
    keel.end()
    const r = await keel.done
    assert.strictEqual(r.code, 0)
    assert.isBelow(Date.now() - ended, 3_000, "exits promptly at the end of input")
    assert.strictEqual(r.stderr, "")

    const all = keel.messages()
    const kinds = all.map(SdkConformance.kindOf)
    // One session: init once, first; a result closes each turn; nothing after the last result.
    assert.deepStrictEqual(kinds.filter((k) => k === "system/init").length, 1)
    assert.strictEqual(kinds[0], "system/init")
    assert.strictEqual(kinds.at(-1), "result")
    assert.deepStrictEqual(
      kinds.filter((k) => k === "result" || k === "assistant" || k === "user"),
      ["assistant", "result", "assistant", "result", "assistant", "user", "assistant", "result"]
    )
    assertStamped(all, all[0].session_id)
    // Totals are cumulative across the session's results.
    assert.isBelow(results(all)[0].total_cost_usd, results(all)[2].total_cost_usd)
    assertConforms(all)
  }, 120_000)

  it("a malformed line gets an error result and a stderr line, and loses nothing: the next lines still run", async () => {
    const server = await fake([
      (body) => FakeAnthropic.textReply(`answer: ${lastUserText(body)}`, sonnet),
      (body) => FakeAnthropic.textReply(`answer: ${lastUserText(body)}`, sonnet)
    ])
    const input = [
      "this is not json",
      JSON.stringify(userLine("before")),
      JSON.stringify({ type: "user", message: { role: "assistant", content: "hi" } }),
      "",
      JSON.stringify({ type: "assistant", message: { role: "assistant", content: [] } }),
      JSON.stringify({ type: "control_request", request_id: "req_1", request: { subtype: "set_max_thinking_tokens" } }),
      JSON.stringify(userLine([{ type: "image", source: { type: "base64" } }])),
      JSON.stringify(userLine("after"))
    ].join("\n") + "\n"
    const r = await run(streamInput, { env: envFor(server), stdin: input })
    assert.strictEqual(r.code, 0, "the last result was a success")
    const messages = lines(r.stdout)
    const results = messages.filter((m) => m.type === "result")
    assert.deepStrictEqual(
      results.map((m) => [m.subtype, m.is_error, m.terminal_reason ?? null]),
      [
        ["error_during_execution", true, "turn_setup_failed"],
        ["success", false, "completed"],
        ["error_during_execution", true, "turn_setup_failed"],
        ["error_during_execution", true, "turn_setup_failed"],
        ["success", false, "completed"]
      ]
    )
    assert.deepStrictEqual(results.filter((m) => !m.is_error).map((m) => m.result), ["answer: before", "answer: after"])
    assert.deepStrictEqual(server.requests.map((q) => lastUserText(q.body)), ["before", "after"])
    const errors = results.filter((m) => m.is_error).map((m) => m.errors)
    assert.match(errors[0][0], /^stdin line 1 is not JSON \(.+\); nothing was sent to the model\. Send one user message a line: /)
    assert.match(errors[1][0], /^stdin line 3 is a user message whose role is "assistant", not "user"/)
    assert.match(errors[2][0], /^stdin line 7 is a user message with invalid content blocks \(content\[0\]\.source\.media_type: is missing\)/)
    // The control request is answered (with an error: it has no max_thinking_tokens), not left hanging.
    const control = messages.find((m) => m.type === "control_response")
    assert.deepStrictEqual(control.response.subtype, "error")
    assert.strictEqual(control.response.request_id, "req_1")
    // stderr: one line each for the three malformed lines, the control request and the ignored assistant line.
    const stderr = r.stderr.trimEnd().split("\n")
    assert.strictEqual(stderr.length, 5, r.stderr)
    assert.deepStrictEqual(stderr.map((l) => l.startsWith("keel: stdin line ")), [true, true, true, true, true])
    assert.include(r.stderr, "keel: stdin line 5: ignored a message of type \"assistant\" (only user messages start turns)")
    assert.notInclude(r.stderr, "    at ")
    assertStamped(messages.filter((m) => m.type !== "control_response"), messages[0].session_id ?? results[0].session_id)
  }, 60_000)

  it("the exit code is 1 when the last result is an error (as Claude Code), here a malformed last line", async () => {
    const server = await fake([FakeAnthropic.textReply("fine", sonnet)])
    const r = await run(streamInput, {
      env: envFor(server),
      stdin: `${JSON.stringify(userLine("hello"))}\n{"type":"user"}\n`
    })
    assert.strictEqual(r.code, 1)
    const results = lines(r.stdout).filter((m) => m.type === "result")
    assert.deepStrictEqual(results.map((m) => m.is_error), [false, true])
    assert.strictEqual(r.stderr.split("\n").filter((l) => l !== "").length, 1)
  })

  it("empty input: no turn, no output, exit 0", async () => {
    const server = await fake([])
    const r = await run(streamInput, { env: envFor(server), stdin: "" })
    assert.deepStrictEqual([r.code, r.stdout, r.stderr, server.requests.length], [0, "", "", 0])
  })

  it("an interrupt control request stops the running turn; the session takes the next line", async () => {
    const server = await fake([
      { ...FakeAnthropic.textReply("never finishes", sonnet), stallAfter: 3 },
      FakeAnthropic.textReply("second", sonnet)
    ])
    const keel = live(streamInput, { env: envFor(server) })
    keel.send(userLine("first"))
    await keel.waitFor(() => server.requests.length === 1)
    keel.send({ type: "control_request", request_id: "int_1", request: { subtype: "interrupt" } })
    let ms = await keel.waitFor((m) => m.some((x) => x.type === "result"))
    assert.deepStrictEqual(
      ms.find((m) => m.type === "control_response")?.response,
      { subtype: "success", request_id: "int_1", response: { still_queued: [] } }
    )
    const first = ms.find((m) => m.type === "result")
    assert.deepStrictEqual([first.subtype, first.terminal_reason], ["error_during_execution", "aborted_streaming"])
    keel.send(userLine("again"))
    ms = await keel.waitFor((m) => m.filter((x) => x.type === "result").length === 2)
    assert.strictEqual(ms.filter((m) => m.type === "result")[1].result, "second")
    keel.end()
    assert.strictEqual((await keel.done).code, 0)
  }, 60_000)

  it("lines that arrive while a turn runs wait their turn; priority now stops the running turn and runs next", async () => {
    const server = await fake([
      { ...FakeAnthropic.textReply("never finishes", sonnet), stallAfter: 3 },
      (body) => FakeAnthropic.textReply(`answer: ${lastUserText(body)}`, sonnet),
      (body) => FakeAnthropic.textReply(`answer: ${lastUserText(body)}`, sonnet)
    ])
    const keel = live(streamInput, { env: envFor(server) })
    keel.send(userLine("first"))
    await keel.waitFor(() => server.requests.length === 1)
    keel.send({ ...userLine("queued"), priority: "later" })
    keel.send({ ...userLine("urgent"), priority: "now" })
    const ms = await keel.waitFor((m) => m.filter((x) => x.type === "result").length === 3)
    const results = ms.filter((m) => m.type === "result")
    assert.deepStrictEqual(results.map((r) => r.terminal_reason), ["aborted_streaming", "completed", "completed"])
    // The urgent prompt follows the interrupted one's note, as after any interruption.
    const asked = server.requests.map((q) => lastUserText(q.body))
    assert.deepStrictEqual(asked, ["first", "first[Request interrupted by user]urgent", "queued"])
    assert.deepStrictEqual(results.slice(1).map((r) => r.result), [`answer: ${asked[1]}`, "answer: queued"])
    // Each turn's messages are together: nothing of one turn comes after the next turn's first message.
    const turnOf = ms.filter((m) => m.type === "assistant" || m.type === "result").map((m) => m.type)
    assert.deepStrictEqual(turnOf.slice(-4), ["assistant", "result", "assistant", "result"])
    keel.end()
    assert.strictEqual((await keel.done).code, 0)
  }, 60_000)

  it("a priority that is not now, next or later is a malformed line", async () => {
    const server = await fake([])
    const r = await run(streamInput, { env: envFor(server), stdin: `${JSON.stringify({ ...userLine("x"), priority: "soon" })}\n` })
    assert.strictEqual(r.code, 1)
    assert.include(r.stderr, "stdin line 1 is a user message whose priority is \"soon\", not \"now\", \"next\" or \"later\"")
    assert.strictEqual(server.requests.length, 0)
  })

  it("SIGINT interrupts the running turn, reads no more input, and exits 130 after its result", async () => {
    const server = await fake([{ ...FakeAnthropic.textReply("never finishes", sonnet), stallAfter: 3 }])
    const keel = live(streamInput, { env: envFor(server) })
    keel.send(userLine("first"))
    await keel.waitFor(() => server.requests.length === 1)
    keel.child.kill("SIGINT")
    const r = await keel.done
    assert.strictEqual(r.code, 130)
    const results = keel.messages().filter((m) => m.type === "result")
    assert.strictEqual(results.length, 1)
    assert.strictEqual(results[0].terminal_reason, "aborted_streaming")
  }, 60_000)
})
