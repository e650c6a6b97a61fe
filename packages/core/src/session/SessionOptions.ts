/**
 * What a session is made with: its options, the options of one `submit`, and the defaults.
 *
 * @since 0.1.0
 */
import type { Message } from "../message/Message.js"
import { DEFAULT_OUTPUT } from "../model/ModelCapabilities.js"
import type * as ModelCapabilities from "../model/ModelCapabilities.js"
import type { ModelRequest } from "../model/ModelRequest.js"
import type * as Thinking from "../model/Thinking.js"
import type * as StructuredOutput from "../output/StructuredOutput.js"
import type * as DurableTurn from "../record/DurableTurn.js"
import type * as SystemPrompt from "../prompt/SystemPrompt.js"
import type * as Tool from "../tool/Tool.js"
import type * as TurnPolicy from "../turn/TurnPolicy.js"
import type * as Pricing from "./Pricing.js"
import type * as Transcript from "./Transcript.js"
import type * as TurnEnvelope from "./TurnEnvelope.js"

/** The Keel version reported in `system`/`init`. @category Constants */
export const VERSION = "0.1.0"

/**
 * Output-token cap per request of a model the capability table does not know (each known model has
 * its own default, see `ModelCapabilities`). @category Constants
 */
export const DEFAULT_MAX_TOKENS = DEFAULT_OUTPUT.default

/**
 * Default budget of model calls in one turn. A turn is bounded even when nobody set a limit: an
 * agent that loops on tool calls stops with `error_max_turns` instead of running up cost unattended.
 *
 * @category Constants
 */
export const DEFAULT_MAX_TURNS = 500

/**
 * Default context window (tokens). Results report each model's own (`TokenEstimate.windowFor`).
 *
 * @category Constants
 */
export const DEFAULT_CONTEXT_WINDOW = 200_000

/**
 * What the conversation says after a turn interrupted while the model was answering (Claude Code's
 * words), so the next request tells the model its last answer was cut by the user.
 *
 * @category Constants
 */
export const INTERRUPTED_NOTE = "[Request interrupted by user]"

/** Options of a session. @category Models */
export interface Options {
  readonly model: string
  readonly cwd: string
  /** The id of a new session (or of a fork); default a new id from the `Ids` service. */
  readonly sessionId?: string | undefined
  /** Earlier conversation to continue from (ignored when resuming). */
  readonly history?: ReadonlyArray<Message> | undefined
  /**
   * Continue a saved session: its id (loaded from the `SessionStore`, transcripts of `cwd`), or a
   * transcript already loaded with `SessionStore.load`. The conversation, token totals, file read
   * state and model are restored; a `tool_use` left without a result gets an "interrupted" one.
   * The session keeps its id and appends to its file, unless `forkSession`.
   */
  readonly resume?: string | Transcript.Loaded | undefined
  /** Continue the most recently written session of `cwd` (as `resume`). */
  readonly continue?: boolean | undefined
  /** With `resume` or `continue`: a new session (`sessionId`, or a new id) carrying the history, in a new file. */
  readonly forkSession?: boolean | undefined
  /**
   * With `resume` or `continue`: the uuid of one of the session's `user` or `assistant` messages
   * (as its SDK messages and transcript entries carry it), the history to end at (Agent SDK
   * `resumeSessionAt`). The session is a fork (as with `forkSession`) of the transcript cut after
   * that message (`TranscriptCut`: totals, file read state and envelopes as they were then; an
   * answer's tool calls answered as interrupted, not with their later results, as Claude Code
   * does); a uuid that is no such message fails with `MessageNotFound`, nothing written.
   */
  readonly resumeSessionAt?: string | undefined
  /**
   * The id of a session whose write lock the caller already holds in the session's scope (taken
   * with `SessionStore.lock` before it loaded `resume`; see `Resume.lockedTranscriptOf`). Any other
   * session this one writes is locked by the session itself.
   */
  readonly locked?: string | undefined
  /**
   * Write the transcript to the `SessionStore` (default true; `SessionStore.layerNoop` keeps
   * nothing). `false` writes nothing, and still lets `resume` read one.
   */
  readonly persist?: boolean | undefined
  /** The most model calls per turn (default {@link DEFAULT_MAX_TURNS}). */
  readonly maxTurns?: number | undefined
  /**
   * The `max_tokens` of every request (`CLAUDE_CODE_MAX_OUTPUT_TOKENS`), capped at each model's upper
   * limit; default each model's own (see `ModelCapabilities`), for a fallback model too.
   */
  readonly maxTokens?: number | undefined
  /**
   * What each model can do: context window, output limits, thinking, betas (default
   * {@link ModelCapabilities.defaultTable}; `ModelCapabilities.merge` adds to it, `KEEL_MODELS_FILE`
   * for the CLI).
   */
  readonly models?: ModelCapabilities.Table | undefined
  /** After an answer cut at the output limit (default Claude Code's, `TurnPolicy.claudeCode`). */
  readonly continuation?: TurnPolicy.Continuation | undefined
  /** After the API said the prompt is too long (default Claude Code's, `TurnPolicy.claudeCode`). */
  readonly promptTooLong?: TurnPolicy.PromptTooLong | undefined
  /**
   * Replaces the `ContextAssembly`'s system prompt. A string or text blocks are sent as given (all
   * of it the stable part); a `SystemPrompt` as its two parts.
   */
  readonly systemPrompt?: ModelRequest["system"] | SystemPrompt.SystemPrompt | undefined
  /** Added after the system prompt (the assembled one or `systemPrompt`), as its last section. */
  readonly appendSystemPrompt?: string | undefined
  /**
   * The prompt and context snapshot a recorded session sent (`TurnEnvelope.recordedOf`), sent again
   * instead of assembling one: a replay (`keel replay`) asks for exactly what was recorded, on any
   * machine, any day. A resumed transcript's own recorded prompt wins over it.
   */
  readonly recordedPrompt?: TurnEnvelope.Recorded | undefined
  /**
   * With `resume`: what the session's journal recorded (`DurableTurn.recover`): the tool calls a
   * crash cut off from the transcript keep their recorded results instead of being answered
   * "interrupted", and a turn the crash left open runs on when the session's runtime resumes
   * (`SessionRuntime.resume`; not for a fork).
   */
  readonly recovered?: DurableTurn.Recovered | undefined
  /** Emit `stream_event` messages with the raw model events. */
  readonly includePartialMessages?: boolean | undefined
  /** The MCP servers of this session and how their start went, as `system`/`init` reports them. */
  readonly mcpServers?: ReadonlyArray<{ readonly name: string; readonly status: string }> | undefined
  /** The agent types the session's `Task` tool offers, by name, as `system`/`init` reports them. */
  readonly agents?: ReadonlyArray<string> | undefined
  /**
   * Prices per model (default {@link Pricing.defaultTable}; `Pricing.merge` adds to it). A model it
   * does not know counts as $0, and the session warns about it once (`system`/`informational`).
   */
  readonly pricing?: Pricing.Table | undefined
  /**
   * Ends the turn with `error_max_budget_usd` once the session's total cost reaches this many USD:
   * checked after each model response (a soft cap: the response that crosses it is kept, its tool
   * calls are not run).
   */
  readonly maxBudgetUsd?: number | undefined
  /**
   * The Read-shaped tool that attaches the files a prompt mentions with `@path` (default: the
   * registry's `Read`; without one, mentions stay text).
   */
  readonly mentionReader?: Tool.Any | undefined
  /** Further Messages API parameters for every request. */
  readonly params?: Readonly<Record<string, unknown>> | undefined
  /**
   * Thinking and effort (`--thinking`, `--max-thinking-tokens`, `--effort`), resolved per model at
   * each request (see `Thinking`); changeable with `Session.setThinking`. Default: each model's own
   * (`Thinking.modelDefault`).
   */
  readonly thinking?: Thinking.Setting | undefined
  /**
   * Why `model` is the session's model, as each turn's envelope records it (`TurnEnvelope`):
   * `default` (the configured default; the default), `flag` (the user named it, `--model`) or
   * `resumed` (the resumed transcript's).
   */
  readonly modelSource?: "default" | "flag" | "resumed" | undefined
  /**
   * The fallback models the `ModelClient` is decorated with (`Fallback`), as each turn's envelope
   * records them; the fallback layer, not this option, does the switching.
   */
  readonly fallbackModels?: ReadonlyArray<string> | undefined
  /**
   * The JSON Schema every turn's final answer must match (`--json-schema`, `outputFormat`): the
   * model answers through the `StructuredOutput` tool, which the registry must hold for this schema
   * (`StructuredOutputTool.layer`); a mismatch is retried, at most `maxAttempts` answers a turn, and
   * the `result` carries `structured_output` (see `StructuredOutput`).
   */
  readonly structuredOutput?: StructuredOutput.Options | undefined
}

/** Options that start a new session (no `resume`, no `continue`): making it cannot fail. @category Models */
export interface NewSession {
  readonly resume?: undefined
  readonly continue?: false | undefined
}

/** Options of one `submit`. @category Models */
export interface SubmitOptions {
  /** Aborting it stops the turn, as `interrupt` does (for embedders outside Effect). */
  readonly signal?: AbortSignal | undefined
  /** The turn's id in its envelope (`TurnEnvelope`); default a new id from the `Ids` service. */
  readonly turnId?: string | undefined
  /** What the caller wants recorded with the turn, in its envelope (JSON values). */
  readonly metadata?: Readonly<Record<string, unknown>> | undefined
}
