/**
 * Renders a session's messages in the terminal as they arrive: the answer streams as Markdown,
 * each tool call is a line (tool and short input) followed by its outcome and time (timed from the
 * permission answer when one was asked; a denial is said once, on the outcome line), long calls show
 * their progress in place, and compactions are short notices. After each turn, errors in red, then
 * the status line (`statusLine`, once the REPL knows what a command changed). Under a live input
 * line (`Output.live`), the answer's unfinished line and the working line (elapsed time and output
 * tokens, redrawn each second), a retry's countdown, or a tool's progress show in the live area
 * below the output; elsewhere a retry is a notice.
 *
 * @since 0.1.0
 */
import type { SdkMessage } from "@keel/core"
import { MarkdownStream } from "./Markdown.js"
import * as Notice from "./Notice.js"
import type * as PermissionPrompt from "./PermissionPrompt.js"
import * as StatusLine from "./StatusLine.js"
import type { Style } from "./Style.js"
import { describeDenial, ToolCalls } from "./ToolCalls.js"
import * as ToolLine from "./ToolLine.js"
import * as Working from "./Working.js"

/** Where the REPL writes. @category Models */
export interface Output {
  readonly write: (text: string) => void
  /** Whether lines can be rewritten in place (a terminal). */
  readonly isTTY: boolean
  /** The terminal's width in columns. */
  readonly columns: () => number
  /**
   * The live area under the output, when the input line stays open below it (`Screen`): the
   * answer's unfinished line and the working indicator show there instead of being written and
   * rewritten in place.
   */
  readonly live?: Live | undefined
}

/** The parts of the live area the renderer fills. @category Models */
export interface Live {
  readonly partial: (text: string) => void
  readonly status: (text: string | undefined) => void
}

/** What the renderer is built with. @category Models */
export interface Options {
  readonly out: Output
  readonly style: Style
  readonly cwd: string
  /** A fresh Markdown stream for each answer. */
  readonly markdown: () => MarkdownStream
  /** The context window of a model (for the status line until a result reports it). */
  readonly contextWindow: (model: string) => number
  /** Milliseconds now (for tool times). */
  readonly now: () => number
  /**
   * Calls `f` every `ms` until the returned function is called (the live working line and retry
   * countdown redraw each second); `setInterval` when not given.
   */
  readonly every?: ((ms: number, f: () => void) => () => void) | undefined
}

const intervals = (ms: number, f: () => void): () => void => {
  const timer = setInterval(f, ms)
  timer.unref()
  return () => clearInterval(timer)
}

/**
 * The rendering state of a REPL: feed it every message of every turn with `render`.
 *
 * @category Models
 */
export class Renderer implements PermissionPrompt.Calls {
  private markdown: MarkdownStream | undefined = undefined
  /** The raw text of the answer's unfinished line, as shown (terminals only). */
  private partialShown = ""
  /** The text of a line written without its newline (a progress line, to be replaced). */
  private transient = false
  /** Whether the last thing written ended a line. */
  private atLineStart = true
  private readonly calls = new ToolCalls()
  private model = ""
  private contextTokens = 0
  private contextWindow = 0
  private costUsd = 0
  /** The turn the working line counts (live area only). */
  private turn: Working.Turn | undefined = undefined
  /** A failed request waiting to be retried (live area only): its countdown replaces the working line. */
  private retry: Working.Retry | undefined = undefined
  /** Whether a tool's progress holds the live status (the working line waits for its result). */
  private toolShown = false
  private stopTicking: (() => void) | undefined = undefined
  /** The live status as last drawn (not drawn again while it reads the same). */
  private liveStatus: string | undefined = undefined

  constructor(private readonly options: Options) {}

  /** The status line's text now. */
  status(): string {
    return StatusLine.format({
      model: this.model,
      contextTokens: this.contextTokens,
      contextWindow: this.contextWindow || this.options.contextWindow(this.model),
      costUsd: this.costUsd
    })
  }

  /** Prints the status line (after each turn, once the figures a command changes are known). */
  statusLine(): void {
    this.endAnswer()
    this.line(this.options.style.dim(this.status()))
  }

  /** Sets the model shown (at start, after `/model` or a resume). */
  setModel(model: string): void {
    this.model = model
  }

  /** Sets the context figure (after a compaction, from its boundary's post-compaction tokens). */
  setContextTokens(tokens: number): void {
    this.contextTokens = tokens
  }

  /** Forgets the conversation's figures (after `/clear`). */
  reset(): void {
    this.contextTokens = 0
    this.costUsd = 0
    this.calls.clear()
  }

  /** Writes text, first clearing a progress line and closing an open answer line as needed. */
  write(text: string): void {
    if (text === "") return
    const { out } = this.options
    if (this.transient) {
      out.write("\r\x1b[2K")
      this.transient = false
    }
    out.write(text)
    this.atLineStart = text.endsWith("\n")
  }

  /** Writes a whole line, starting a new one first if the cursor is mid-line. */
  line(text: string): void {
    this.write(`${this.atLineStart ? "" : "\n"}${text}\n`)
  }

  /** A dim notice line. */
  notice(text: string): void {
    this.endAnswer()
    this.line(this.options.style.dim(`  ${text}`))
  }

  private endAnswer(): void {
    if (this.markdown !== undefined) {
      this.options.out.live?.partial("")
      this.erasePartial()
      this.write(this.markdown.end())
      this.markdown = undefined
    }
  }

  /** Takes the shown unfinished line off the screen (it may have wrapped over several rows). */
  private erasePartial(): void {
    if (this.partialShown === "") return
    const rows = Math.max(1, Math.ceil([...this.partialShown].length / Math.max(1, this.options.out.columns())))
    this.partialShown = ""
    this.write(`\r${rows > 1 ? `\x1b[${rows - 1}A` : ""}\x1b[J`)
    this.atLineStart = true
  }

  /**
   * Adds answer text: complete lines are rendered as Markdown; on a terminal the line still coming
   * shows raw as it grows, and is replaced by its rendering once complete.
   */
  private answer(text: string): void {
    this.markdown ??= this.options.markdown()
    const rendered = this.markdown.push(text)
    if (!this.options.out.isTTY) return this.write(rendered)
    const partial = this.markdown.partial().replace(/\t/g, "  ")
    const { live } = this.options.out
    if (live !== undefined) {
      this.write(rendered)
      return live.partial(partial)
    }
    if (rendered === "" && partial.startsWith(this.partialShown)) {
      this.write(partial.slice(this.partialShown.length))
      this.partialShown = partial
      return
    }
    this.erasePartial()
    this.write(rendered)
    this.write(partial)
    this.partialShown = partial
  }

  private progress(text: string): void {
    if (!this.options.out.isTTY) return
    if (this.options.out.live !== undefined) return this.setLiveStatus(text)
    this.endAnswer()
    if (!this.atLineStart && !this.transient) this.write("\n")
    this.write(`\r\x1b[2K${text}`)
    this.transient = true
    this.atLineStart = true
  }

  /**
   * While the model works: the working line. In the live area it counts the turn's time and output
   * tokens, redrawn each second until {@link idle}; elsewhere a transient line (terminals only).
   */
  waiting(): void {
    const { live } = this.options.out
    if (live === undefined) return this.progress(this.options.style.dim("✻ working… (Esc or Ctrl+C to interrupt)"))
    this.turn ??= Working.start(this.options.now())
    this.toolShown = false
    this.stopTicking ??= (this.options.every ?? intervals)(1_000, () => this.showStatus())
    this.showStatus()
  }

  /** Draws the live status: a retry's countdown while it waits, else the working line (unless a tool's progress shows). */
  private showStatus(): void {
    if (this.options.out.live === undefined || this.turn === undefined) return
    const now = this.options.now()
    const countdown = this.retry === undefined ? undefined : Working.countdown(this.retry, now)
    if (countdown !== undefined) return this.setLiveStatus(this.options.style.yellow(`  ${countdown}`))
    this.retry = undefined
    if (!this.toolShown) this.setLiveStatus(this.options.style.dim(Working.line(this.turn, now)))
  }

  private setLiveStatus(text: string | undefined): void {
    if (text === this.liveStatus) return
    this.liveStatus = text
    this.options.out.live?.status(text)
  }

  /** The turn is over: the working indicator goes (live area only; elsewhere the next write replaces it). */
  idle(): void {
    this.stopTicking?.()
    this.stopTicking = undefined
    this.turn = undefined
    this.retry = undefined
    this.toolShown = false
    this.liveStatus = undefined
    this.options.out.live?.status(undefined)
  }

  /** A call's line, shown once (`startedAt` `undefined`: it waits for a permission answer). */
  private callLine(id: string, name: string, input: unknown, startedAt: number | undefined): void {
    const label = ToolLine.describeCall(name, input, this.options.cwd)
    this.calls.add(id, label, startedAt)
    this.line(`${this.options.style.cyan("●")} ${this.options.style.bold(label)}`)
  }

  /** A permission question about a call is shown next: the call's line first, and no progress or time while it waits. */
  asking(toolUseId: string, toolName: string, input: unknown): void {
    this.endAnswer()
    if (this.calls.get(toolUseId) === undefined) this.callLine(toolUseId, toolName, input, undefined)
    else this.calls.waiting(toolUseId)
    this.options.out.live?.status(undefined)
  }

  /** The question was answered: an allowed call's time starts now; a denial waits for the call's outcome line. */
  answered(toolUseId: string, answered: PermissionPrompt.Answered): void {
    if (answered._tag === "Allowed") this.calls.started(toolUseId, this.options.now())
    else this.calls.denied(toolUseId, { _tag: "ByUser", reason: answered.reason })
  }

  /** Renders one message of the session. */
  render(message: SdkMessage.SdkMessage): void {
    const { style } = this.options
    switch (message.type) {
      case "stream_event": {
        if (message.parent_tool_use_id !== null) return
        const event = message.event
        // A command that runs a model turn (`/init`, a Markdown command) was not shown as working:
        // its response starting is.
        if (this.turn === undefined && event.type === "message_start") this.waiting()
        if (this.turn !== undefined) {
          // A response streams: a retry waiting before it has started.
          this.retry = undefined
          this.turn = Working.onEvent(this.turn, event)
          this.showStatus()
        }
        if (event.type === "content_block_start" && event.content_block.type === "thinking") {
          this.endAnswer()
          this.line(style.dim(style.italic("✻ thinking…")))
        }
        if (event.type === "content_block_delta" && event.delta.type === "text_delta") this.answer(event.delta.text)
        if (event.type === "content_block_stop" || event.type === "message_stop") this.endAnswer()
        return
      }
      case "assistant": {
        if (message.parent_tool_use_id !== null) return
        this.endAnswer()
        this.model = message.message.model || this.model
        this.contextTokens = StatusLine.contextTokens(message.message.usage)
        for (const block of message.message.content as ReadonlyArray<{ type: string; id?: string; name?: string; input?: unknown }>) {
          // A call asked about is shown already (its question came first).
          if (block.type !== "tool_use" || block.id === undefined || this.calls.get(block.id) !== undefined) continue
          this.callLine(block.id, block.name ?? "tool", block.input, this.options.now())
        }
        return
      }
      case "user": {
        if (message.parent_tool_use_id !== null) return
        const content = message.message.content
        if (typeof content === "string") return
        const several = this.calls.size > 1
        for (const block of content as ReadonlyArray<{ type: string; tool_use_id?: string; content?: unknown; is_error?: boolean }>) {
          if (block.type !== "tool_result" || block.tool_use_id === undefined) continue
          const call = this.calls.finish(block.tool_use_id)
          const prefix = several && call !== undefined ? `${call.label}: ` : ""
          if (call?.denial !== undefined) {
            this.line(`  ${style.dim("⎿")} ${style.yellow(`${prefix}${describeDenial(call.denial)}`)}`)
            continue
          }
          const elapsed = call?.startedAt === undefined ? undefined : this.options.now() - call.startedAt
          const outcome = ToolLine.describeOutcome(block, elapsed)
          const text = `${prefix}${outcome.text}`
          this.line(`  ${style.dim("⎿")} ${outcome.error ? style.red(text) : style.dim(text)}`)
        }
        // The results go back to the model: it is working again.
        if (this.calls.size === 0) this.waiting()
        return
      }
      case "tool_progress": {
        if (message.parent_tool_use_id !== null) return
        const call = this.calls.get(message.tool_use_id)
        // A call waiting for a permission answer is not running.
        if (call !== undefined && call.startedAt === undefined) return
        const elapsed = call?.asked === true && call.startedAt !== undefined
          ? (this.options.now() - call.startedAt) / 1000
          : message.elapsed_time_seconds
        this.toolShown = true
        this.progress(style.dim(`  ⎿ ${call?.label ?? message.tool_name} ${ToolLine.describeProgress(elapsed)}`))
        return
      }
      case "system": {
        if (message.subtype === "local_command_output") {
          this.endAnswer()
          this.line(message.content)
          return
        }
        if (message.subtype === "compact_boundary") this.contextTokens = message.compact_metadata.post_tokens
        if (this.turn !== undefined && message.subtype === "api_retry") {
          // Live: a countdown in place of the working line, gone once the retry starts.
          this.retry = Working.retry(message, this.options.now())
          return this.showStatus()
        }
        // The countdown already says how long the wait has left.
        if (this.turn !== undefined && message.subtype === "notification" && message.key === "api_retry_wait") return
        // A shown call's denial is said once, on its outcome line.
        if (message.subtype === "permission_denied" && this.calls.get(message.tool_use_id) !== undefined) {
          return this.calls.denied(message.tool_use_id, { _tag: "ByPolicy", message: message.message })
        }
        const notice = Notice.describe(message)
        if (notice === undefined) return
        const warn = message.subtype === "api_retry" || message.subtype === "permission_denied" ||
          (message.subtype === "notification" && message.key === "stream_stalled") ||
          (message.subtype === "informational" && message.level === "warning")
        this.endAnswer()
        this.line(warn ? style.yellow(`  ⚠ ${notice}`) : style.dim(`  ✻ ${notice}`))
        return
      }
      case "result": {
        this.endAnswer()
        this.calls.clear()
        this.costUsd = message.total_cost_usd
        const usage = message.modelUsage[this.model]
        if (usage !== undefined && usage.contextWindow > 0) this.contextWindow = usage.contextWindow
        if (message.is_error) {
          const text = message.terminal_reason === "aborted_streaming" || message.terminal_reason === "aborted_tools"
            ? "Interrupted."
            : message.result ?? message.errors?.join("\n") ?? "The turn failed."
          this.line(style.red(text))
        }
        return
      }
    }
  }
}
