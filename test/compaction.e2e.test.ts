/**
 * End to end: compaction in the real `keel` binary against the loopback fake of the Messages API,
 * with a small context window (`KEEL_AUTO_COMPACT_WINDOW`): autocompact over a long tool-calling turn,
 * reactive compaction after the API's "prompt is too long", and the circuit breaker.
 *
 * keel's output cap is `Session.DEFAULT_MAX_TOKENS` (32,000; no flag changes it), so autocompact fires
 * at window − min(32,000, 20,000) − 13,000 tokens: 37,000 for the 70,000-token window used here (a
 * window under 33,000 makes that negative: see the skipped test below; the 50-call test uses 60,000,
 * where autocompact comes before microcompact). The stages before it stay out
 * of the way: every file is read once (snip drops only unchanged re-reads), each result is under the
 * 50,000 characters of the tool result budget, and the conversations stay under microcompact's 50 %
 * (35,000 tokens; it would clear all but 5 results anyway) and context collapse's 60 % (a `keel -p`
 * run is one turn, which it never folds). Large results would be saved under `KEEL_HOME`: each run
 * gets its own.
 *
 * The fake reports as `usage.input_tokens` a token per four characters of the request's JSON (system
 * prompt, tools, messages), as the API would roughly count it: that is what the kernel's estimate
 * starts from. The tests run concurrently; servers are closed after the file.
 */
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Autocompact, Message, Session, SummaryPrompt } from "@keel/core"
import * as fs from "node:fs"
import * as path from "node:path"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { envFor, lines, run, workdir } from "./support/KeelProcess.js"

const WINDOW = 70_000
const THRESHOLD = Autocompact.threshold(WINDOW, Session.DEFAULT_MAX_TOKENS)

const servers: Array<FakeAnthropic.FakeAnthropic> = []
afterAll(() => Promise.all(servers.splice(0).map((s) => s.close())))

/** A fake that answers `script`, then `fallback` for every later request. */
const serve = async (
  script: ReadonlyArray<FakeAnthropic.ScriptItem>,
  fallback?: FakeAnthropic.ScriptFunction
): Promise<FakeAnthropic.FakeAnthropic> => {
  const server = await FakeAnthropic.start(script, fallback !== undefined ? { fallback } : {})
  servers.push(server)
  return server
}

/**
 * Runs `keel -p <prompt> --output-format stream-json --max-turns 100` in `cwd` with `window` (default
 * the small one) and `KEEL_HOME` in `cwd`.
 */
const keel = async (server: FakeAnthropic.FakeAnthropic, cwd: string, prompt: string, window = WINDOW) => {
  const r = await run(["-p", prompt, "--output-format", "stream-json", "--max-turns", "100"], {
    env: { ...envFor(server), KEEL_AUTO_COMPACT_WINDOW: String(window), KEEL_HOME: path.join(cwd, ".keel-home") },
    cwd
  })
  assert.strictEqual(r.stderr, "")
  const messages = lines(r.stdout)
  assert.deepStrictEqual(messages.filter((m) => m.type === "result").length, 1)
  return {
    code: r.code,
    messages,
    result: messages.at(-1),
    requests: server.requests.map((q) => q.body),
    recorded: server.requests
  }
}

/** Writes `text` to `name` in `dir`. */
const write = (dir: string, name: string, text: string) => fs.writeFileSync(path.join(dir, name), text)

/** A text file of `lines` distinct lines of 99 characters (plus the newline), tagged with `tag`. */
const textFile = (tag: string, lines: number): string =>
  Array.from({ length: lines }, (_, i) => `${tag} line ${i + 1}: `.padEnd(99, "lorem ipsum dolor sit amet ") + "\n").join("")

/**
 * Four files of ~8,000 tokens each (as Read numbers them: under the tool result budget), whose reads
 * take the conversation over the threshold: after the fourth, and not before.
 */
const LARGE = ["a.txt", "b.txt", "c.txt", "d.txt"]
const writeLarge = (dir: string) => LARGE.forEach((name) => write(dir, name, textFile(name, 300)))

/** A summary request: the autocompact's model call, told apart by its system prompt. */
const isSummary = (body: any): boolean => JSON.stringify(body.messages.at(-1)).includes(SummaryPrompt.HEADING)

/** The request's size as the fake reports it: a token per four characters of its JSON. */
const tokensOf = (body: any): number => Math.ceil(JSON.stringify([body.system, body.tools, body.messages]).length / 4)

const usageOf = (body: any) => ({ usage: { input_tokens: tokensOf(body), output_tokens: 40 } })

const promptTooLong = () =>
  FakeAnthropic.errorReply(400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum")

const blocksOf = (message: any): Array<any> =>
  typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content

/** A message as the model reads it: content as blocks, without prompt-caching marks. */
const asRead = (message: any) => ({
  role: message.role,
  content: blocksOf(message).map(({ cache_control: _, ...block }: any) => block)
})

const toolUseIds = (message: any): Array<string> =>
  message?.role === "assistant" ? blocksOf(message).filter((b) => b.type === "tool_use").map((b) => b.id) : []

const toolResultIds = (message: any): Array<string> =>
  message?.role === "user" ? blocksOf(message).filter((b) => b.type === "tool_result").map((b) => b.tool_use_id) : []

/** The `file_path`s of the Read calls in `messages`, most recent first, each once. */
const readPaths = (messages: ReadonlyArray<any>): Array<string> => [
  ...new Set(
    messages.filter((m) => m.role === "assistant").flatMap((m) =>
      blocksOf(m).filter((b) => b.type === "tool_use" && b.name === "Read").map((b) => b.input.file_path as string)
    ).reverse()
  )
]

/**
 * Asserts that the API would accept these messages: a user message first, roles alternating, every
 * `tool_use` answered by a `tool_result` in the next message and every `tool_result` answering one
 * of the message before.
 */
const assertValid = (body: any, label: string) => {
  const ms = body.messages
  assert.strictEqual(ms[0]?.role, "user", `${label}: the first message`)
  for (let i = 0; i < ms.length; i++) {
    if (i > 0) assert.notStrictEqual(ms[i].role, ms[i - 1].role, `${label}: roles at ${i}`)
    if (ms[i].role === "assistant") {
      assert.deepStrictEqual(toolResultIds(ms[i + 1]), toolUseIds(ms[i]), `${label}: the results of message ${i}`)
    } else if (toolResultIds(ms[i]).length > 0) {
      assert.deepStrictEqual(toolResultIds(ms[i]), toolUseIds(ms[i - 1]), `${label}: the calls of message ${i}`)
    }
  }
}

/** The JSON of a request's cache prefix (tools, system, messages: the API's order) up to message `n`. */
const prefixJson = (body: any, n: number) => JSON.stringify([body.tools, body.system, body.messages.slice(0, n)])

/**
 * Asserts that `summary` shares `previous`'s cached prefix: the same model, `max_tokens`, thinking
 * parameters, betas, tools and system prompt (breakpoints included), and `previous`'s messages, byte
 * for byte with its tail breakpoint, followed by the rest of the conversation (no breakpoint: nothing
 * new is written) and the summary instruction last.
 */
const assertSharedPrefix = (previous: FakeAnthropic.RecordedRequest, summary: FakeAnthropic.RecordedRequest) => {
  const [p, s] = [previous.body, summary.body]
  for (const key of ["model", "max_tokens", "thinking", "output_config", "context_management", "tools", "system"]) {
    assert.deepStrictEqual(s[key], p[key], key)
  }
  assert.strictEqual(summary.headers["anthropic-beta"], previous.headers["anthropic-beta"])
  const n = p.messages.length
  assert.include(JSON.stringify(p.messages.at(-1)), "cache_control")
  const [a, b] = [prefixJson(s, n), prefixJson(p, n)]
  if (a !== b) {
    let i = 0
    while (a[i] === b[i]) i++
    assert.fail(`the prefixes differ at ${i} of ${b.length}: ${JSON.stringify(a.slice(i - 200, i + 200))} vs ${JSON.stringify(b.slice(i - 200, i + 200))}`)
  }
  assert.notInclude(JSON.stringify(s.messages.slice(n)), "cache_control")
  const instruction = blocksOf(s.messages.at(-1)).at(-1)
  assert.strictEqual(instruction.type, "text")
  assert.isTrue(instruction.text.startsWith(SummaryPrompt.HEADING))
}

/** `type/subtype` of each stream-json message (`system/status:compacting` for statuses). */
/**
 * The kinds of messages, in order, without `tool_progress` (sent while a tool runs past the progress
 * interval: whether a Read gets one depends on the machine's load).
 */
const kinds = (messages: ReadonlyArray<any>): Array<string> =>
  messages.filter((m) => m.type !== "tool_progress").map((m) =>
    m.subtype === "status" ? `system/status:${m.status}` : m.subtype !== undefined ? `${m.type}/${m.subtype}` : m.type
  )

/** The estimated tokens of a compacted conversation's one message, as `TokenEstimate.ofMessage` counts text blocks. */
const estimateOf = (message: any): number =>
  Math.ceil(blocksOf(message).reduce((n, b) => n + b.text.length, 0) / 4)

describe.concurrent("keel compaction", () => {
  it("a 50-call conversation keeps going after compaction; stream-json shows each boundary", { timeout: 60_000 }, async () => {
    // A window under 66,000 tokens, so that autocompact (at window - 33,000) comes before microcompact (at half).
    const window = 60_000
    const threshold = Autocompact.threshold(window, Session.DEFAULT_MAX_TOKENS)
    const dir = workdir()
    for (let i = 1; i < 50; i++) write(dir, `notes-${i}.txt`, textFile(`notes-${i}`, 60))
    let calls = 0
    const summaries: Array<string> = []
    const server = await serve([], (body) => {
      if (isSummary(body)) {
        summaries.push(`SUMMARY-${summaries.length + 1}: the user asked to read the notes; ${calls} calls so far.`)
        return FakeAnthropic.textReply(`<analysis>scratch ${calls}</analysis>\n<summary>\n${summaries.at(-1)}\n</summary>`, usageOf(body))
      }
      calls++
      return calls < 50
        ? FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: `notes-${calls}.txt` } }], usageOf(body))
        : FakeAnthropic.textReply("Read all the notes.", usageOf(body))
    })
    const t = await keel(server, dir, "read the notes one by one", window)

    assert.strictEqual(t.code, 0)
    assert.deepStrictEqual(
      [t.result.subtype, t.result.is_error, t.result.result, t.result.terminal_reason, t.result.num_turns],
      ["success", false, "Read all the notes.", "completed", 50]
    )
    const summaryAt = t.requests.flatMap((body, i) => (isSummary(body) ? [i] : []))
    assert.isAtLeast(summaryAt.length, 3)
    assert.strictEqual(t.requests.length, 50 + summaryAt.length)

    // stream-json: each compaction is status(compacting) → status(null, success) → compact_boundary → the next assistant message.
    const k = kinds(t.messages)
    const boundaries = k.flatMap((kind, i) => (kind === "system/compact_boundary" ? [i] : []))
    assert.strictEqual(boundaries.length, summaryAt.length)
    assert.strictEqual(k.filter((kind) => kind === "system/status:compacting").length, summaryAt.length)
    for (const at of boundaries) {
      assert.deepStrictEqual(k.slice(at - 2, at + 2), [
        "system/status:compacting",
        "system/status:null",
        "system/compact_boundary",
        "assistant"
      ])
      assert.strictEqual(t.messages[at - 1].compact_result, "success")
      const meta = t.messages[at].compact_metadata
      assert.strictEqual(meta.trigger, "auto")
      assert.isAtLeast(meta.pre_tokens, threshold)
      assert.isBelow(meta.post_tokens, meta.pre_tokens)
      assert.isAtLeast(meta.duration_ms, 0)
    }

    summaryAt.forEach((at, n) => {
      // The summary request is the conversation's request plus the instruction, reading its cached prefix.
      assertSharedPrefix(t.recorded[at - 1]!, t.recorded[at]!)
      const summary = t.requests[at]
      // The next request is the compacted conversation: the summary (its tags stripped), the pointer
      // to the transcript, the files read before (small: attached as on disk now, most recent first),
      // and the last tool round verbatim.
      const next = t.requests[at + 1]
      assert.isFalse(isSummary(next))
      assert.deepStrictEqual(next.messages.map((m: any) => m.role), ["user", "assistant", "user"])
      assert.deepStrictEqual(next.messages.slice(1).map(asRead), [
        asRead(summary.messages.at(-2)),
        { role: "user", content: asRead(summary.messages.at(-1)).content.slice(0, -1) }
      ])
      const kept = readPaths(next.messages.slice(1))
      const attached = readPaths(summary.messages).filter((p) => !kept.includes(p)).slice(0, 5).map((p) =>
        SummaryPrompt.attachedFile(p, fs.readFileSync(path.join(dir, p), "utf8"))
      )
      assert.strictEqual(attached.length, 5)
      const opening = blocksOf(next.messages[0]).map((b) => b.text)
      assert.strictEqual(opening[0], SummaryPrompt.continuation(summaries[n]!))
      assert.include(opening[1], "transcript")
      assert.deepStrictEqual(opening.slice(2), attached)
      assert.notInclude(JSON.stringify(next.messages[0]), "<summary>")
      // The boundary's size counts the opening (a token per 4 characters) and the tool round kept.
      assert.isAbove(t.messages[boundaries[n]!].compact_metadata.post_tokens, estimateOf(next.messages[0]))
    })

    t.requests.forEach((body, i) => assertValid(body, `request ${i + 1}`))
    // No request went out at or over the threshold (so none over the window), by a proxy of the kernel's
    // estimate: a token per 4 characters of the messages' JSON (the usage the fake reports, which the
    // estimate starts from, also counts the system prompt and the tools).
    for (const body of t.requests.filter((b) => !isSummary(b))) {
      assert.isBelow(JSON.stringify(body.messages).length / 4, threshold)
    }
  })

  it("after reading large files: the summary without its tags, the last tool round, the transcript, the files by name", async () => {
    const dir = workdir()
    // Files of ~20,000 characters: over the budget for attaching a file again after the compaction.
    const files = Array.from({ length: 8 }, (_, i) => `big-${i + 1}.txt`)
    files.forEach((name) => write(dir, name, textFile(name, 200)))
    let reads = 0
    let compacted = false
    const server = await serve([], (body) => {
      if (isSummary(body)) {
        compacted = true
        return FakeAnthropic.textReply(
          "<analysis>The user wants the big files read; I read them in order.</analysis>\n" +
            "<summary>\n1. Primary Request and Intent: \"read every big file\"\n</summary>",
          usageOf(body)
        )
      }
      const file = files[reads]
      if (compacted || file === undefined) return FakeAnthropic.textReply("Read them.", usageOf(body))
      reads++
      return FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: file } }], usageOf(body))
    })
    const t = await keel(server, dir, "read every big file")

    assert.strictEqual(t.code, 0)
    const at = t.requests.findIndex(isSummary)
    assert.isAbove(at, 2)
    assertSharedPrefix(t.recorded[at - 1]!, t.recorded[at]!)
    const summary = t.requests[at]
    const next = t.requests[at + 1]
    // The last tool round, verbatim.
    assert.deepStrictEqual(next.messages.slice(1).map(asRead), [
      asRead(summary.messages.at(-2)),
      { role: "user", content: asRead(summary.messages.at(-1)).content.slice(0, -1) }
    ])
    const opening = blocksOf(next.messages[0]).map((b) => b.text)
    // The summary, its analysis dropped and its tags stripped.
    assert.strictEqual(opening[0], SummaryPrompt.continuation("1. Primary Request and Intent: \"read every big file\""))
    assert.notInclude(opening.join("\n"), "<summary>")
    assert.notInclude(opening.join("\n"), "analysis")
    // The transcript, where it is.
    const sessionId = t.messages[0].session_id
    const transcript = opening[1].match(/transcript, (\S+\.jsonl)/)?.[1]
    assert.isDefined(transcript)
    assert.include(transcript!, sessionId)
    assert.isTrue(fs.existsSync(transcript!))
    // The files read before the tool round kept: named with their size, not attached.
    const kept = readPaths(next.messages.slice(1))
    const earlier = readPaths(summary.messages).filter((p) => !kept.includes(p)).slice(0, 5)
    assert.isAtLeast(earlier.length, 2)
    assert.deepStrictEqual(opening.slice(2), [SummaryPrompt.listedFiles(earlier.map((p) => ({
      path: p,
      bytes: fs.statSync(path.join(dir, p)).size
    })))])
    assert.notInclude(JSON.stringify(next.messages[0]), " line 1: ")
    t.requests.forEach((body, i) => assertValid(body, `request ${i + 1}`))
  })

  it("a prompt-too-long from the API triggers one reactive compaction and one retry", async () => {
    const dir = workdir()
    const big = textFile("big", 400)
    write(dir, "big.txt", big)
    const server = await serve([
      FakeAnthropic.toolUseReply([{ id: "toolu_big", name: "Read", input: { file_path: "big.txt" } }], {
        usage: { input_tokens: 900, output_tokens: 40 }
      }),
      promptTooLong(),
      FakeAnthropic.textReply("SUMMARY-R: big.txt was read."),
      FakeAnthropic.textReply("Done after the compaction.")
    ])
    const t = await keel(server, dir, "read big.txt")

    assert.strictEqual(t.code, 0)
    assert.deepStrictEqual(
      [t.result.subtype, t.result.is_error, t.result.result, t.result.terminal_reason],
      ["success", false, "Done after the compaction.", "completed"]
    )
    assert.deepStrictEqual(kinds(t.messages), [
      "system/init",
      "assistant",
      "user",
      "system/status:compacting",
      "system/status:null",
      "system/compact_boundary",
      "assistant",
      "system/informational",
      "result/success"
    ])
    assert.deepStrictEqual(t.requests.map(isSummary), [false, false, true, false])
    const [, tooLong, summary, retried] = t.requests
    // The request that was too long was not made smaller by autocompact (it is under its threshold) ...
    assert.deepStrictEqual(tooLong.messages.map((m: any) => m.role), ["user", "assistant", "user"])
    assert.isBelow(900 + 40 + Math.ceil(tooLong.messages[2].content[0].content.length / 4), THRESHOLD)
    // ... the summary covers all of it, reading the prefix the last request that succeeded cached ...
    assertSharedPrefix(t.recorded[0]!, t.recorded[2]!)
    assert.deepStrictEqual(summary.messages.map(asRead).slice(0, 2), tooLong.messages.slice(0, 2).map(asRead))
    // ... and the retry carries the summary, the transcript, and the tool round (big.txt's Read) verbatim.
    assert.deepStrictEqual(retried.messages.slice(1).map(asRead), tooLong.messages.slice(1).map(asRead))
    const blocks = blocksOf(retried.messages[0]).map((b) => b.text)
    assert.strictEqual(blocks.length, 2)
    assert.strictEqual(blocks[0], SummaryPrompt.continuation("SUMMARY-R: big.txt was read."))
    assert.include(blocks[1], path.join(dir, ".keel-home"))
    assert.notInclude(JSON.stringify(retried.messages[0]), "big line 1:")
    const boundary = t.messages[5].compact_metadata
    assert.strictEqual(boundary.trigger, "auto")
    assert.isBelow(boundary.post_tokens, boundary.pre_tokens)
    t.requests.forEach((body, i) => assertValid(body, `request ${i + 1}`))
  })

  // A summary request whose stream breaks after its second text block started (a mid-stream
  // `api_error`, retried) and whose retry answers with one block: only the retry's text is the summary.
  it("a summary answer the retry layer retracted leaves nothing of itself in the summary", async () => {
    const dir = workdir()
    writeLarge(dir)
    let calls = 0
    let summaries = 0
    const server = await serve([], (body) => {
      if (isSummary(body)) {
        return ++summaries === 1
          ? FakeAnthropic.sseFromMessage(
            FakeAnthropic.message([new Message.TextBlock({ text: "SUMMARY-VOID" }), new Message.TextBlock({ text: "STALE-PART" })]),
            { chunkSize: 100, truncateAfter: 6, midStreamError: { type: "api_error", message: "Internal server error" } }
          )
          : FakeAnthropic.textReply("SUMMARY-GOOD")
      }
      const file = LARGE[calls++]
      return file !== undefined
        ? FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: file } }], usageOf(body))
        : FakeAnthropic.textReply("Done.", usageOf(body))
    })
    const t = await keel(server, dir, "read the four files")

    assert.strictEqual(t.code, 0)
    assert.deepStrictEqual(t.requests.map(isSummary), [false, false, false, false, true, true, false])
    assert.strictEqual(blocksOf(t.requests[6].messages[0])[0].text, SummaryPrompt.continuation("SUMMARY-GOOD"))
    assert.notInclude(JSON.stringify(t.requests[6]), "SUMMARY-VOID")
  })

  // With a window under keel's output reserve and buffer (30,000 < 20,000 + 13,000) the threshold is
  // half the window, so a conversation far below it is not compacted.
  it("a window under the output reserve and buffer does not compact a tiny conversation", async () => {
    let calls = 0
    const server = await serve([], (body) => {
      if (isSummary(body)) return FakeAnthropic.textReply("SUMMARY")
      return ++calls < 6
        ? FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: "README.md" } }], usageOf(body))
        : FakeAnthropic.textReply("Done.", usageOf(body))
    })
    const dir = workdir()
    const r = await run(["-p", "hi", "--output-format", "stream-json"], {
      env: { ...envFor(server), KEEL_AUTO_COMPACT_WINDOW: "30000", KEEL_HOME: path.join(dir, ".keel-home") },
      cwd: dir
    })
    assert.strictEqual(r.code, 0)
    assert.strictEqual(lines(r.stdout).at(-1).result, "Done.")
    assert.deepStrictEqual(server.requests.map((q) => isSummary(q.body)), [false, false, false, false, false, false])
  })

  it("the circuit breaker ends the turn when the conversation cannot be made to fit", async () => {
    const dir = workdir()
    writeLarge(dir)
    let calls = 0
    const server = await serve([], (body) => {
      if (isSummary(body)) return promptTooLong()
      const file = LARGE[calls++] ?? "README.md"
      return FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: file } }], usageOf(body))
    })
    const t = await keel(server, dir, "read the four files")

    assert.strictEqual(t.code, 1)
    assert.deepStrictEqual(
      [t.result.subtype, t.result.is_error, t.result.terminal_reason],
      ["error_during_execution", true, "prompt_too_long"]
    )
    assert.include(t.result.result, "Compaction failed 3 times in a row")
    assert.include(t.result.result, "/clear")
    // After the fourth Read the conversation is over the threshold. The summary request is itself too
    // long, and with one turn there are no older turns to drop, so each compaction fails after one
    // summary request, and the request goes out uncompacted. The third failure in a row (maxFailures)
    // opens the breaker and ends the turn: 4 + 3 summary requests + 2 requests between them = 9.
    assert.deepStrictEqual(t.requests.map(isSummary), [false, false, false, false, true, false, true, false, true])
    assert.deepStrictEqual(kinds(t.messages), [
      "system/init",
      ...Array(4).fill(["assistant", "user"]).flat(),
      "system/status:compacting",
      "system/status:null",
      "assistant",
      "user",
      "system/status:compacting",
      "system/status:null",
      "assistant",
      "user",
      "system/status:compacting",
      "system/status:null",
      "system/informational",
      "result/error_during_execution"
    ])
    t.requests.forEach((body, i) => assertValid(body, `request ${i + 1}`))
    const failed = t.messages.filter((m) => m.subtype === "status" && m.status === null)
    assert.deepStrictEqual(failed.map((m) => m.compact_result), ["failed", "failed", "failed"])
    assert.include(failed[0].compact_error, "the summary request is too long")
  })
})
