import { assert, describe, it } from "@effect/vitest"
import type { SdkMessage } from "@keel/core"
import { blockRenderer, codeHighlighter, MarkdownStream } from "../../src/repl/Markdown.js"
import * as Notice from "../../src/repl/Notice.js"
import { type Live, Renderer } from "../../src/repl/Renderer.js"
import * as Style from "../../src/repl/Style.js"

const stamp = { uuid: "u", session_id: "s" }

const renderer = (isTTY: boolean, columns = 80, live?: Live) => {
  let out = ""
  let now = 0
  let tick: (() => void) | undefined
  const r = new Renderer({
    out: { write: (t) => (out += t), isTTY, columns: () => columns, live },
    style: Style.make(false),
    cwd: "/p",
    markdown: () => new MarkdownStream(blockRenderer({ color: false, width: columns }), codeHighlighter(false)),
    contextWindow: () => 200_000,
    now: () => now,
    every: (_, f) => {
      tick = f
      return () => (tick = undefined)
    }
  })
  return {
    r,
    out: () => out,
    advance: (ms: number) => (now += ms),
    /** What the renderer's one-second timer does, if it runs. */
    tick: () => tick?.(),
    ticking: () => tick !== undefined
  }
}

const delta = (text: string): SdkMessage.SdkMessage =>
  ({
    type: "stream_event",
    event: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } },
    parent_tool_use_id: null,
    ...stamp
  }) as SdkMessage.SdkMessage

// The fields the status line reads (the rest of the API's usage does not matter here).
const usage = {
  input_tokens: 1000,
  output_tokens: 200,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 8800,
  server_tool_use: { web_search_requests: 0, web_fetch_requests: 0 },
  service_tier: "standard",
  cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 0 }
} as unknown as SdkMessage.NonNullableUsage

/** A tool's progress after `seconds`. */
const progress = (seconds: number): SdkMessage.SdkMessage => ({
  type: "tool_progress",
  tool_use_id: "t1",
  tool_name: "Bash",
  parent_tool_use_id: null,
  elapsed_time_seconds: seconds,
  ...stamp
})

/** The result of tool call `t1`. */
const toolResult = (content: string): SdkMessage.SdkMessage =>
  ({
    type: "user",
    message: { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content }] },
    parent_tool_use_id: null,
    ...stamp
  }) as SdkMessage.SdkMessage

const assistant = (content: Array<unknown>): SdkMessage.SdkMessage =>
  ({
    type: "assistant",
    message: { id: "m", type: "message", role: "assistant", model: "claude-x", content, stop_reason: "tool_use", stop_sequence: null, usage },
    parent_tool_use_id: null,
    ...stamp
  }) as SdkMessage.SdkMessage

describe("Renderer", () => {
  it("on a terminal, shows the unfinished line raw and replaces it (all its rows) with its rendering", () => {
    const { out, r } = renderer(true, 10)
    r.render(delta("Hello **big"))
    assert.strictEqual(out(), "Hello **big")
    r.render(delta(" world**\n"))
    // 11 characters on 10 columns took 2 rows: back up one row, clear, then the rendered line.
    assert.strictEqual(out(), "Hello **big" + "\r\x1b[1A\x1b[J" + "Hello big world\n")
  })

  it("under a live input line, the unfinished line and the progress go to the live area; only finished lines are written", () => {
    const area: Array<string> = []
    const { advance, out, r } = renderer(true, 80, {
      partial: (text) => area.push(`partial:${text}`),
      status: (text) => area.push(`status:${text ?? "-"}`)
    })
    r.waiting()
    r.render(delta("Hello **big"))
    r.render(delta("** world\nand"))
    r.render(assistant([{ type: "tool_use", id: "t1", name: "Bash", input: { command: "make" } }]))
    r.render(progress(1))
    advance(1_200)
    r.render(toolResult("ok"))
    r.idle()
    assert.strictEqual(out(), "Hello big world\nand\n● Bash(make)\n  ⎿ ok · 1.2 s\n")
    assert.deepStrictEqual(area, [
      "status:✻ working… 0 s · Esc or Ctrl+C to interrupt",
      "status:✻ working… 0 s · ↓ 3 tokens · Esc or Ctrl+C to interrupt",
      "partial:Hello **big",
      "status:✻ working… 0 s · ↓ 6 tokens · Esc or Ctrl+C to interrupt",
      "partial:and",
      "partial:",
      "status:  ⎿ Bash(make) running… 1 s",
      "status:✻ working… 1 s · ↓ 6 tokens · Esc or Ctrl+C to interrupt",
      "status:-"
    ])
  })

  it("through a pipe, prints only complete rendered lines", () => {
    const { out, r } = renderer(false)
    r.render(delta("Hello **big"))
    assert.strictEqual(out(), "")
    r.render(delta("**\nrest"))
    r.render({ type: "stream_event", event: { type: "content_block_stop", index: 0 }, parent_tool_use_id: null, ...stamp } as SdkMessage.SdkMessage)
    assert.strictEqual(out(), "Hello big\nrest\n")
  })

  it("a tool call is a line, its progress replaces itself in place, and its outcome follows with the time", () => {
    const { advance, out, r } = renderer(true)
    r.render(assistant([{ type: "tool_use", id: "t1", name: "Bash", input: { command: "make" } }]))
    r.render(progress(1))
    r.render(progress(2))
    advance(2_500)
    r.render(toolResult("built\nok"))
    assert.strictEqual(
      out(),
      "● Bash(make)\n" +
        "\r\x1b[2K  ⎿ Bash(make) running… 1 s" +
        "\r\x1b[2K\r\x1b[2K  ⎿ Bash(make) running… 2 s" +
        "\r\x1b[2K  ⎿ 2 lines · 2.5 s\n" +
        // The results go back to the model: a transient "working" line until its answer comes.
        "\r\x1b[2K✻ working… (Esc or Ctrl+C to interrupt)"
    )
  })

  it("the status line after a result: the answering model, context used and left, cost", () => {
    const { out, r } = renderer(false)
    r.render(assistant([{ type: "text", text: "hi" }]))
    r.render({
      type: "result",
      subtype: "success",
      is_error: false,
      result: "hi",
      duration_ms: 1,
      duration_api_ms: 1,
      num_turns: 1,
      stop_reason: "end_turn",
      total_cost_usd: 0.0123,
      usage,
      modelUsage: {},
      permission_denials: [],
      terminal_reason: "completed",
      ...stamp
    })
    assert.strictEqual(out(), "", "the REPL prints it once it knows what a command changed")
    r.statusLine()
    assert.strictEqual(out(), "claude-x · 10.0k/200.0k tokens · 95% context left · $0.0123\n")
    r.render({
      type: "system",
      subtype: "compact_boundary",
      compact_metadata: { trigger: "manual", pre_tokens: 10_000, post_tokens: 1_500 },
      ...stamp
    } as SdkMessage.SdkMessage)
    r.statusLine()
    assert.match(out(), /\nclaude-x · 1\.5k\/200\.0k tokens · 99% context left · \$0\.0123\n$/)
  })

  it("the working line counts the turn's seconds and output tokens, each second, until the turn ends", () => {
    const area: Array<string> = []
    const { advance, r, tick, ticking } = renderer(true, 80, { partial: () => {}, status: (text) => area.push(text ?? "-") })
    r.waiting()
    advance(1_000)
    tick()
    r.render(delta("12345678"))
    advance(1_000)
    tick()
    // The API's count, once the response reports it, replaces the estimate.
    r.render(event({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 40 } }))
    r.render(event({ type: "message_stop" }))
    advance(60_000)
    tick()
    assert.deepStrictEqual(area, [
      "✻ working… 0 s · Esc or Ctrl+C to interrupt",
      "✻ working… 1 s · Esc or Ctrl+C to interrupt",
      "✻ working… 1 s · ↓ 2 tokens · Esc or Ctrl+C to interrupt",
      "✻ working… 2 s · ↓ 2 tokens · Esc or Ctrl+C to interrupt",
      "✻ working… 2 s · ↓ 40 tokens · Esc or Ctrl+C to interrupt",
      "✻ working… 1 m 02 s · ↓ 40 tokens · Esc or Ctrl+C to interrupt"
    ])
    r.idle()
    assert.isFalse(ticking())
    assert.strictEqual(area.at(-1), "-")
  })

  it("a turn not shown as working (a slash command's model turn) shows it once its response starts", () => {
    const area: Array<string> = []
    const { r } = renderer(true, 80, { partial: () => {}, status: (text) => area.push(text ?? "-") })
    r.render(event({ type: "message_stop" }))
    assert.deepStrictEqual(area, [])
    r.render(event({ type: "message_start", message: { id: "m", type: "message", role: "assistant", model: "claude-test", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 0 } } }))
    assert.deepStrictEqual(area, ["✻ working… 0 s · Esc or Ctrl+C to interrupt"])
    r.idle()
  })

  it("a retry counts down in the live area instead of a line, and is gone once the retry starts", () => {
    const area: Array<string> = []
    const { advance, out, r, tick } = renderer(true, 80, { partial: () => {}, status: (text) => area.push(text ?? "-") })
    r.waiting()
    r.render(retry(2_500))
    advance(1_000)
    tick()
    advance(1_000)
    tick()
    advance(600)
    tick()
    assert.deepStrictEqual(area, [
      "✻ working… 0 s · Esc or Ctrl+C to interrupt",
      "  ⚠ retrying in 3 s (2/10): overloaded",
      "  ⚠ retrying in 2 s (2/10): overloaded",
      "  ⚠ retrying in 1 s (2/10): overloaded",
      "✻ working… 2 s · Esc or Ctrl+C to interrupt"
    ])
    // A response streaming ends the countdown at once, even before its time is up.
    r.render(retry(5_000))
    r.render(event({ type: "message_start" }))
    assert.strictEqual(area.at(-1), "✻ working… 2 s · Esc or Ctrl+C to interrupt")
    assert.strictEqual(out(), "", "nothing is left in the scrollback")
  })

  it("without a live area, a retry is a notice line", () => {
    const { out, r } = renderer(false)
    r.render(retry(2_500))
    assert.strictEqual(out(), "  ⚠ retrying in 2.5 s (2/10): overloaded\n")
  })
})

const event = (e: Record<string, unknown>): SdkMessage.SdkMessage =>
  ({ type: "stream_event", event: e, parent_tool_use_id: null, ...stamp }) as unknown as SdkMessage.SdkMessage

const retry = (delayMs: number): SdkMessage.SdkMessage =>
  ({
    type: "system",
    subtype: "api_retry",
    attempt: 2,
    max_retries: 10,
    retry_delay_ms: delayMs,
    error_status: 529,
    error: "overloaded",
    error_message: "Overloaded",
    ...stamp
  }) as SdkMessage.SdkMessage

describe("Notice", () => {
  it("says when and why a request is retried", () => {
    const text = Notice.describe({
      type: "system",
      subtype: "api_retry",
      attempt: 2,
      max_retries: 10,
      retry_delay_ms: 4000,
      error_status: 529,
      error: "overloaded",
      error_message: "Overloaded",
      ...stamp
    })
    assert.strictEqual(text, "retrying in 4 s (2/10): overloaded")
  })

  it("reports a compaction's before and after", () => {
    const text = Notice.describe({
      type: "system",
      subtype: "compact_boundary",
      compact_metadata: { trigger: "auto", pre_tokens: 150_000, post_tokens: 9_000, duration_ms: 1 },
      ...stamp
    })
    assert.strictEqual(text, "compacted the conversation (auto): ~150k → ~9k tokens")
  })

  it("reports a failed compaction with its reason, and nothing for one that succeeded", () => {
    const closing = (result: "success" | "failed", error?: string) =>
      Notice.describe({
        type: "system",
        subtype: "status",
        status: null,
        compact_result: result,
        ...(error !== undefined ? { compact_error: error } : {}),
        ...stamp
      })
    assert.strictEqual(closing("failed", "the summary came back empty"), "compaction failed: the summary came back empty")
    assert.isUndefined(closing("success"))
  })
})
