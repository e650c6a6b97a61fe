/**
 * The session: one engine per conversation. It owns the `SessionState` refs, runs one turn at a
 * time through the turn loop, and turns the loop's events into SDK-shaped messages (`system`/`init`,
 * `assistant`, `user`, `stream_event`, and exactly one `result` per turn).
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { Compactor } from "../context/Compactor.js"
import * as LocalCommands from "../input/LocalCommands.js"
import * as Mentions from "../input/Mentions.js"
import * as SlashCommand from "../input/SlashCommand.js"
import { type AssistantMessage, type Message, TextBlock, toParam, UserMessage } from "../message/Message.js"
import type { ModelClient } from "../model/ModelClient.js"
import { category, describe, statusOf } from "../model/ModelError.js"
import type { ModelNotice } from "../model/ModelNotice.js"
import { Permissions } from "../permission/Permissions.js"
import type { ModelRequest } from "../model/ModelRequest.js"
import { ContextAssembly } from "../prompt/ContextAssembly.js"
import * as SystemPrompt from "../prompt/SystemPrompt.js"
import type * as Tool from "../tool/Tool.js"
import { ToolRegistry } from "../tool/ToolRegistry.js"
import type { ToolRuntime } from "../tool/ToolRuntime.js"
import type { Pipeline } from "../turn/Pipeline.js"
import type { TurnEvent } from "../turn/TurnEvent.js"
import * as TurnLoop from "../turn/TurnLoop.js"
import * as Cost from "./Cost.js"
import * as Pricing from "./Pricing.js"
import * as SdkMessage from "./SdkMessage.js"
import * as SessionState from "./SessionState.js"
import * as SessionStore from "./SessionStore.js"
import * as Transcript from "./Transcript.js"
import { type LoadError, SessionNotFound } from "./TranscriptError.js"
import * as TranscriptRecorder from "./TranscriptRecorder.js"

/** The Keel version reported in `system`/`init`. @category Constants */
export const VERSION = "0.1.0"

/** Default output-token cap per request. @category Constants */
export const DEFAULT_MAX_TOKENS = 32_000

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

/** The system prompt used when none is given and no `ContextAssembly` is provided. @category Constants */
export const defaultSystemPrompt = (cwd: string): string =>
  [
    "You are Keel, an agent that helps people with software engineering tasks.",
    "Use the tools you are given to look at the files you need instead of guessing, then answer concisely.",
    `The working directory is ${cwd}.`
  ].join("\n")

/** Options of a session. @category Models */
export interface Options {
  readonly model: string
  readonly cwd: string
  /** The id of a new session (or of a fork); default a random UUID. */
  readonly sessionId?: string | undefined
  /** Earlier conversation to continue from (ignored when resuming). */
  readonly history?: ReadonlyArray<Message> | undefined
  /**
   * Continue a saved session: its id (loaded from the `SessionStore` in context, transcripts of
   * `cwd`), or a transcript already loaded with `SessionStore.load`. The conversation, token totals,
   * file read state and model are restored; a `tool_use` left without a result gets an
   * "interrupted" one. The session keeps its id and appends to its file, unless `forkSession`.
   */
  readonly resume?: string | Transcript.Loaded | undefined
  /** Continue the most recently written session of `cwd` (as `resume`). */
  readonly continue?: boolean | undefined
  /** With `resume` or `continue`: a new session (`sessionId`, or a random one) carrying the history, in a new file. */
  readonly forkSession?: boolean | undefined
  /**
   * Write the transcript to the `SessionStore` in context (without a store nothing is written).
   * Default true, except for a session made inside another session's turn (a subagent, which is
   * part of its parent's conversation). `false` still lets `resume` read one.
   */
  readonly persist?: boolean | undefined
  /** The most model calls per turn (default {@link DEFAULT_MAX_TURNS}). */
  readonly maxTurns?: number | undefined
  readonly maxTokens?: number | undefined
  /**
   * Replaces the default system prompt (the `ContextAssembly`'s when one is provided, else
   * {@link defaultSystemPrompt}). A string or text blocks are sent as given (all of it the stable
   * part); a `SystemPrompt` as its two parts.
   */
  readonly systemPrompt?: ModelRequest["system"] | SystemPrompt.SystemPrompt | undefined
  /** Added after the system prompt (the default one or `systemPrompt`), as its last section. */
  readonly appendSystemPrompt?: string | undefined
  /** Emit `stream_event` messages with the raw model events. */
  readonly includePartialMessages?: boolean | undefined
  readonly permissionMode?: string | undefined
  /** The MCP servers of this session and how their start went, as `system`/`init` reports them. */
  readonly mcpServers?: ReadonlyArray<{ readonly name: string; readonly status: string }> | undefined
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
}

/** Options of one `submit`. @category Models */
export interface SubmitOptions {
  /** Aborting it stops the turn, as `interrupt` does (for embedders outside Effect). */
  readonly signal?: AbortSignal | undefined
}

/** Completes when `signal` aborts (at once if it already has). */
const aborted = (signal: AbortSignal): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (signal.aborted) return resume(Effect.void)
    const onAbort = () => resume(Effect.void)
    signal.addEventListener("abort", onAbort, { once: true })
    return Effect.sync(() => signal.removeEventListener("abort", onAbort))
  })

/** @category Models */
export interface Service {
  /** The session's id; `/clear` starts a new session, with a new id. */
  readonly sessionId: string
  readonly state: SessionState.Service
  /** The `system`/`init` message (emitted before the first turn's messages). */
  readonly init: SdkMessage.SystemInit
  /**
   * Runs one turn for this prompt and streams its messages; the last is its `result`. Turns run one
   * at a time: a second `submit` waits for the first to finish. `/compact [instructions]` compacts
   * the conversation instead (`system`/`status` "compacting", `system`/`compact_boundary` with
   * trigger `manual`, and a result). `/clear` starts a new session: a new id, an empty
   * conversation and fresh totals, a new transcript (the old one is left as it is); its result says
   * so, and nothing goes to the model. `/cost`, `/context`, `/model [name]` and `/help` answer from
   * the session's state (`system`/`local_command_output`, then a result); an unknown command is an
   * error result, and nothing goes to the model. In a prompt, `@path` attaches the file (see
   * `Mentions`). A `UserMessage` is sent as it is: no commands, no mentions.
   */
  readonly submit: (prompt: string | UserMessage, options?: SubmitOptions) => Stream.Stream<SdkMessage.SdkMessage>
  /** The model later turns use: `options.model`, until `/model` or `setModel` switches it. */
  readonly model: Effect.Effect<string>
  /** Switches later turns to `model` (as `/model` does). */
  readonly setModel: (model: string) => Effect.Effect<void>
  /** Stops the running turn (model stream and tools); it ends with an `error_during_execution` result. */
  readonly interrupt: Effect.Effect<void>
  /** The session's system prompt: built at the first use (the first turn), then the same all session. */
  readonly systemPrompt: Effect.Effect<SystemPrompt.SystemPrompt>
}

/** @category Context */
export class Session extends Context.Tag("@keel/core/Session")<Session, Service>() {}

const zeroUsage = (): {
  input_tokens: number
  output_tokens: number
  cache_creation_input_tokens: number
  cache_read_input_tokens: number
  /** The part of `cache_creation_input_tokens` written with the 1-hour TTL. */
  ephemeral_1h_input_tokens: number
} => ({
  input_tokens: 0,
  output_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  ephemeral_1h_input_tokens: 0
})

const fullUsage = (u: ReturnType<typeof zeroUsage>): SdkMessage.NonNullableUsage => ({
  input_tokens: u.input_tokens,
  output_tokens: u.output_tokens,
  cache_creation_input_tokens: u.cache_creation_input_tokens,
  cache_read_input_tokens: u.cache_read_input_tokens,
  server_tool_use: { web_search_requests: 0, web_fetch_requests: 0 },
  service_tier: "standard",
  cache_creation: {
    ephemeral_1h_input_tokens: u.ephemeral_1h_input_tokens,
    ephemeral_5m_input_tokens: Math.max(0, u.cache_creation_input_tokens - u.ephemeral_1h_input_tokens)
  },
  output_tokens_details: { thinking_tokens: 0 },
  fallback_credit: null,
  inference_geo: "",
  iterations: [],
  speed: "standard"
})

/**
 * The `result` of a command the session answers itself (a slash command, `/compact`, `/clear`): no
 * model turn and no usage of its own; an error is `error_during_execution`, with `text` in `errors`.
 */
const commandResult = (r: {
  readonly text: string
  readonly isError: boolean
  readonly durationMs: number
  readonly apiDurationMs: number
  readonly cost: { readonly report: SdkMessage.Result["modelUsage"]; readonly total: number }
  readonly permissionDenials: SdkMessage.Result["permission_denials"]
  readonly terminalReason: SdkMessage.TerminalReason
  readonly sessionId: string
}): SdkMessage.Result => ({
  type: "result",
  subtype: r.isError ? "error_during_execution" : "success",
  is_error: r.isError,
  result: r.text,
  ...(r.isError ? { errors: [r.text] } : {}),
  duration_ms: r.durationMs,
  duration_api_ms: r.apiDurationMs,
  num_turns: 0,
  stop_reason: null,
  total_cost_usd: r.cost.total,
  usage: fullUsage(zeroUsage()),
  modelUsage: r.cost.report,
  permission_denials: r.permissionDenials,
  terminal_reason: r.terminalReason,
  uuid: crypto.randomUUID(),
  session_id: r.sessionId
})

/** The `message` field of an `assistant` SDK message. @category Conversions */
export const toApiMessage = (message: AssistantMessage, fallbackModel: string): SdkMessage.ApiAssistantMessage => {
  const u = message.usage
  return {
    id: message.id ?? "",
    type: "message",
    role: "assistant",
    model: message.model ?? fallbackModel,
    content: toParam(message).content,
    stop_reason: message.stop_reason ?? null,
    stop_sequence: message.stop_sequence ?? null,
    stop_details: null,
    container: null,
    context_management: null,
    diagnostics: null,
    usage: fullUsage({
      input_tokens: u?.input_tokens ?? 0,
      output_tokens: u?.output_tokens ?? 0,
      cache_creation_input_tokens: u?.cache_creation_input_tokens ?? 0,
      cache_read_input_tokens: u?.cache_read_input_tokens ?? 0,
      ephemeral_1h_input_tokens: u?.cache_creation?.ephemeral_1h_input_tokens ?? 0
    })
  }
}

/**
 * The SDK message for a resilience layer's notice.
 *
 * @category Conversions
 */
export const noticeMessage = (notice: ModelNotice, sessionId: string): SdkMessage.SdkMessage => {
  const stamp = { uuid: crypto.randomUUID(), session_id: sessionId }
  switch (notice._tag) {
    case "Retrying":
      return {
        type: "system",
        subtype: "api_retry",
        attempt: notice.attempt,
        max_retries: notice.maxRetries ?? SdkMessage.UNBOUNDED_RETRIES,
        retry_delay_ms: notice.delayMs,
        error_status: statusOf(notice.error),
        error: category(notice.error),
        error_message: describe(notice.error),
        ...stamp
      }
    case "Waiting":
      return {
        type: "system",
        subtype: "notification",
        key: "api_retry_wait",
        text: `Still waiting to retry (${seconds(notice.remainingMs)} left)`,
        priority: "low",
        attempt: notice.attempt,
        waited_ms: notice.waitedMs,
        retry_in_ms: notice.remainingMs,
        ...stamp
      }
    case "StreamStalled":
      return {
        type: "system",
        subtype: "notification",
        key: "stream_stalled",
        text: `No data from the API for ${seconds(notice.idleMs)}; the request is retried at ${seconds(notice.timeoutMs)}`,
        priority: "medium",
        idle_ms: notice.idleMs,
        timeout_ms: notice.timeoutMs,
        ...stamp
      }
    case "Retracted":
      return {
        type: "system",
        subtype: "notification",
        key: "message_retracted",
        text: notice.reason === "retry"
          ? "The partial answer was cut off; asking again"
          : "The partial answer was dropped; asking the fallback model",
        priority: "low",
        reason: notice.reason,
        message_id: notice.messageId ?? null,
        ...stamp
      }
    case "ModelSwitched":
      return {
        type: "system",
        subtype: "informational",
        level: "warning",
        content: `Switched to ${notice.to} due to high demand for ${notice.from}`,
        original_model: notice.from,
        fallback_model: notice.to,
        error_status: statusOf(notice.error),
        ...stamp
      }
  }
}

/** `1.5 s`, `30 s`: a duration for notification texts. */
const seconds = (ms: number): string => `${Math.round(ms / 100) / 10} s`

/**
 * A session over the given model, tools and pipeline. With a `SessionStore` in context (and
 * `persist` not `false`) its transcript is written as it goes (see `TranscriptRecorder`); with
 * `resume` or `continue` it starts from a saved one, and fails with a `LoadError` when that cannot
 * be used (never touching the file).
 *
 * @category Constructors
 */
export function make(
  options: Options & NewSession
): Effect.Effect<Service, never, ModelClient | ToolRuntime | ToolRegistry | Pipeline>
export function make(options: Options): Effect.Effect<Service, LoadError, ModelClient | ToolRuntime | ToolRegistry | Pipeline>
export function make(options: Options): Effect.Effect<Service, LoadError, ModelClient | ToolRuntime | ToolRegistry | Pipeline> {
  return Effect.gen(function*() {
    const context = yield* Effect.context<ModelClient | ToolRuntime | ToolRegistry | Pipeline>()
    const compactor = Option.getOrUndefined(yield* Effect.serviceOption(Compactor))
    const registry = yield* ToolRegistry
    const store = Option.getOrUndefined(yield* Effect.serviceOption(SessionStore.SessionStore))
    // A session made inside another's turn (a subagent: the parent's state is in context) is part of
    // the parent's conversation, not a session of the folder: it is not saved unless asked to.
    const persist = store !== undefined &&
      (options.persist ?? Option.isNone(yield* Effect.serviceOption(SessionState.SessionState)))
    const loaded = yield* resumeFrom(options, store)
    const fork = loaded !== undefined && options.forkSession === true
    /** Changes on `/clear`; `state.sessionId` reads it. */
    let sessionId = loaded !== undefined && !fork ? loaded.sessionId : options.sessionId ?? crypto.randomUUID()
    const state = withSessionId(
      yield* SessionState.make(sessionId, loaded !== undefined ? Transcript.answerDangling(loaded.messages) : options.history ?? []),
      () => sessionId
    )
    if (loaded !== undefined) yield* restore(state, loaded)
    /** Warnings for people from loading (a truncated last line), shown with the first turn. */
    let notices: ReadonlyArray<string> = loaded?.warnings ?? []
    const turnLock = yield* Effect.makeSemaphore(1)
    const interruptSignal = yield* Ref.make(yield* Deferred.make<void>())
    const initSent = yield* Ref.make(false)
    const pricing = options.pricing ?? Pricing.defaultTable
    const maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS
    const maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS
    const includePartial = options.includePartialMessages === true
    const sessionStartedAt = yield* Clock.currentTimeMillis
    /** The model of later turns (`/model` switches it); `state.model` is the model of the current call. */
    const currentModel = yield* Ref.make(options.model)
    // The transcript: continued when resuming, a new file for a new session or a fork.
    const recorderFor = (
      id: string,
      continues: Transcript.Loaded | undefined,
      origin: TranscriptRecorder.Options["origin"]
    ): Effect.Effect<TranscriptRecorder.Recorder> =>
      store === undefined || !persist
        ? Effect.succeed(TranscriptRecorder.disabled)
        : TranscriptRecorder.make({
          store,
          cwd: options.cwd,
          sessionId: id,
          state,
          primaryModel: Ref.get(currentModel),
          continues,
          origin
        })
    let recorder = yield* recorderFor(
      sessionId,
      fork ? undefined : loaded,
      fork ? { source: "fork", from: loaded.sessionId } : undefined
    )
    /** Models without a price that the session has already warned about, as `session id␀model` (`/clear` starts a new session). */
    const warnedUnpriced = yield* Ref.make<ReadonlySet<string>>(new Set())
    const permissions = Option.getOrUndefined(yield* Effect.serviceOption(Permissions))
    const mentionReader = Mentions.toolReader(options.mentionReader ?? registry.get("Read"), options.cwd)
    const maxBudgetUsd = options.maxBudgetUsd
    /** After each model response: whether the session's cost has reached `maxBudgetUsd`. */
    const budget = maxBudgetUsd === undefined ? undefined : Effect.map(
      Ref.get(state.usage),
      (usage) => Cost.total(usage, pricing) >= maxBudgetUsd ? `Reached maximum budget ($${maxBudgetUsd})` : undefined
    )

    // The system prompt, resolved once (at the first turn) and kept for the session: git runs once,
    // and nothing in it changes between requests, so the prompt cache holds.
    const assembly = Option.getOrUndefined(yield* Effect.serviceOption(ContextAssembly))
    const given = options.systemPrompt
    const base: Effect.Effect<NonNullable<ModelRequest["system"]> | SystemPrompt.SystemPrompt> = given !== undefined
      ? Effect.succeed(given)
      : assembly !== undefined
      ? assembly.assemble(options.cwd)
      : Effect.succeed(defaultSystemPrompt(options.cwd))
    const resolved = yield* Effect.cached(Effect.map(base, (prompt): {
      readonly prompt: SystemPrompt.SystemPrompt
      readonly request: Pick<ModelRequest, "system" | "systemStableBlocks">
    } => {
      const twoPart = prompt instanceof SystemPrompt.SystemPrompt ? prompt : SystemPrompt.custom(prompt)
      if (options.appendSystemPrompt !== undefined) {
        const appended = SystemPrompt.append(twoPart, options.appendSystemPrompt)
        return { prompt: appended, request: SystemPrompt.toRequest(appended) }
      }
      // A string or blocks given by the embedder go as given.
      const request = prompt instanceof SystemPrompt.SystemPrompt ? SystemPrompt.toRequest(prompt) : { system: prompt }
      return { prompt: twoPart, request }
    }))

    let init: SdkMessage.SystemInit = {
      type: "system",
      subtype: "init",
      cwd: options.cwd,
      session_id: sessionId,
      tools: registry.tools.map((t) => t.name),
      mcp_servers: options.mcpServers ?? [],
      model: options.model,
      permissionMode: options.permissionMode ?? "default",
      slash_commands: SlashCommand.builtin.map((c) => c.name),
      apiKeySource: "ANTHROPIC_API_KEY",
      claude_code_version: VERSION,
      output_style: "default",
      skills: [],
      plugins: [],
      uuid: crypto.randomUUID()
    }

    const modelUsage = Effect.map(Ref.get(state.usage), (usage) => {
      const r = Cost.report(usage, { pricing, maxOutputTokens: maxTokens })
      return { report: r.modelUsage, total: r.totalCostUsd }
    })

    /** A `system`/`informational` warning for each model used without a price, once per model and session. */
    const unpricedWarnings: Effect.Effect<Array<SdkMessage.SdkMessage>> = Effect.gen(function*() {
      const usage = yield* Ref.get(state.usage)
      const warned = yield* Ref.get(warnedUnpriced)
      const key = (model: string) => `${sessionId}\u0000${model}`
      const fresh = [...usage.keys()].filter((model) => !warned.has(key(model)) && Pricing.priceOf(model, pricing) === undefined)
      if (fresh.length === 0) return []
      yield* Ref.set(warnedUnpriced, new Set([...warned, ...fresh.map(key)]))
      return fresh.map((model): SdkMessage.SdkMessage => ({
        type: "system",
        subtype: "informational",
        level: "warning",
        content: Cost.unpricedWarning(model),
        uuid: crypto.randomUUID(),
        session_id: sessionId
      }))
    })

    /**
     * A slash command answered from the session's state (`/cost`, `/context`, `/model`, `/help`), or
     * an unknown one: `system`/`local_command_output` and a result, without calling the model.
     */
    const localCommand = (invocation: SlashCommand.Invocation): Stream.Stream<SdkMessage.SdkMessage> =>
      Stream.unwrapScoped(Effect.gen(function*() {
        yield* Effect.acquireRelease(turnLock.take(1), () => turnLock.release(1))
        const startedAt = yield* Clock.currentTimeMillis
        const first = !(yield* Ref.getAndSet(initSent, true))
        const answer = LocalCommands.run(invocation, {
          state,
          model: currentModel,
          defaultModel: options.model,
          pricing,
          maxOutputTokens: maxTokens,
          system: Effect.map(resolved, (r) => r.request.system),
          tools: registry.definitions,
          startedAt: sessionStartedAt
        })
        const output = answer === undefined ? { text: SlashCommand.unknown(invocation.name), isError: true } : yield* answer
        const stamp = () => ({ uuid: crypto.randomUUID(), session_id: sessionId })
        const out: Array<SdkMessage.SdkMessage> = first ? [init] : []
        if (!output.isError) out.push({ type: "system", subtype: "local_command_output", content: output.text, ...stamp() })
        out.push(...(yield* unpricedWarnings))
        const cost = yield* modelUsage
        out.push(commandResult({
          text: output.text,
          isError: output.isError,
          durationMs: (yield* Clock.currentTimeMillis) - startedAt,
          apiDurationMs: 0,
          cost,
          permissionDenials: yield* Ref.get(state.permissionDenials),
          terminalReason: "completed",
          sessionId
        }))
        return Stream.fromIterable(out)
      }))

    /** `/compact [instructions]`: compaction now, its status and boundary, and a result; no model turn. */
    const compactNow = (instructions: string | undefined): Stream.Stream<SdkMessage.SdkMessage> =>
      Stream.unwrapScoped(Effect.gen(function*() {
        yield* Effect.acquireRelease(turnLock.take(1), () => turnLock.release(1))
        const startedAt = yield* Clock.currentTimeMillis
        const apiBefore = yield* Ref.get(state.apiDurationMs)
        const first = !(yield* Ref.getAndSet(initSent, true))
        const stamp = () => ({ uuid: crypto.randomUUID(), session_id: sessionId })
        const status: SdkMessage.SdkMessage = { type: "system", subtype: "status", status: "compacting", ...stamp() }
        const work = Effect.gen(function*() {
          const history = yield* Ref.get(state.messages)
          const outcome = compactor === undefined
            ? { messages: history, halt: "Compaction is not available in this session" }
            : history.length === 0
            ? { messages: history, halt: "There is nothing to compact yet" }
            : yield* compactor.manual(history, {
              model: yield* Ref.get(currentModel),
              iteration: 0,
              sessionId,
              maxTokens,
              cwd: options.cwd,
              tools: registry.definitions
            }, instructions)
          if (outcome.halt === undefined) {
            yield* Ref.set(state.messages, outcome.messages)
            recorder.note({ stage: "compact", report: outcome.report ?? "compacted", compaction: outcome.compaction })
          }
          const saved = yield* recorder.checkpoint({ sync: true })
          const now = yield* Clock.currentTimeMillis
          const cost = yield* modelUsage
          const c = outcome.compaction
          const out: Array<SdkMessage.SdkMessage> = warningMessages(saved)
          if (c !== undefined) {
            out.push({
              type: "system",
              subtype: "compact_boundary",
              compact_metadata: { trigger: c.trigger, pre_tokens: c.preTokens, post_tokens: c.postTokens, duration_ms: c.durationMs },
              ...stamp()
            })
          }
          out.push(...(yield* unpricedWarnings))
          out.push(commandResult({
            text: outcome.halt ?? `Compacted the conversation (${outcome.report})`,
            isError: outcome.halt !== undefined,
            durationMs: now - startedAt,
            apiDurationMs: (yield* Ref.get(state.apiDurationMs)) - apiBefore,
            cost,
            permissionDenials: yield* Ref.get(state.permissionDenials),
            terminalReason: outcome.halt === undefined ? "completed" : "prompt_too_long",
            sessionId
          }))
          return out
        })
        return Stream.concat(
          Stream.fromIterable(first ? [init, ...openingNotices(), status] : [status]),
          Stream.fromIterableEffect(work)
        )
      }))

    /** `system`/`informational` warnings for people (transcript problems), stamped with the current session. */
    const warningMessages = (warnings: ReadonlyArray<string>): Array<SdkMessage.SdkMessage> =>
      warnings.map((content) => ({
        type: "system",
        subtype: "informational",
        level: "warning",
        content,
        uuid: crypto.randomUUID(),
        session_id: sessionId
      }))

    /** The warnings from loading the transcript, once (with the first messages the session emits). */
    const openingNotices = (): Array<SdkMessage.SdkMessage> => {
      const out = warningMessages(notices)
      notices = []
      return out
    }

    /**
     * `/clear`: a new session in this one: a new id, the state's refs as a new session has them, a new
     * transcript (its first entry says it follows the old session, whose file stays as it is), and
     * the new session's `system`/`init`; then a result saying so. Nothing goes to the model.
     */
    const clearNow = (): Stream.Stream<SdkMessage.SdkMessage> =>
      Stream.unwrapScoped(Effect.gen(function*() {
        yield* Effect.acquireRelease(turnLock.take(1), () => turnLock.release(1))
        const startedAt = yield* Clock.currentTimeMillis
        const previous = sessionId
        const flushed = yield* recorder.checkpoint({ sync: true })
        sessionId = crypto.randomUUID()
        yield* resetState(state, yield* SessionState.make(sessionId))
        recorder = yield* recorderFor(sessionId, undefined, { source: "clear", from: previous })
        const started = yield* recorder.checkpoint({ sync: true })
        init = { ...init, session_id: sessionId, uuid: crypto.randomUUID() }
        yield* Ref.set(initSent, true)
        const cost = yield* modelUsage
        const text = `Started a new session, ${sessionId}, with an empty conversation. ` +
          `The previous one (${previous}) is kept as it was: resume it with --resume ${previous}.`
        const out: Array<SdkMessage.SdkMessage> = [init, ...warningMessages([...flushed, ...started])]
        out.push(commandResult({
          text,
          isError: false,
          durationMs: (yield* Clock.currentTimeMillis) - startedAt,
          apiDurationMs: 0,
          cost,
          permissionDenials: [],
          terminalReason: "completed",
          sessionId
        }))
        return Stream.fromIterable(out)
      }))

    const submit = (prompt: string | UserMessage, submitOptions: SubmitOptions = {}): Stream.Stream<SdkMessage.SdkMessage> => {
      const command = typeof prompt === "string" ? SlashCommand.parse(prompt) : undefined
      if (command === undefined) return runTurn(prompt, submitOptions)
      if (command.name === "compact") return compactNow(command.args === "" ? undefined : command.args)
      if (command.name === "clear") return clearNow()
      return localCommand(command)
    }

    const runTurn = (prompt: string | UserMessage, submitOptions: SubmitOptions): Stream.Stream<SdkMessage.SdkMessage> =>
      Stream.unwrapScoped(Effect.gen(function*() {
        yield* Effect.acquireRelease(turnLock.take(1), () => turnLock.release(1))
        const signal = yield* Deferred.make<void>()
        yield* Ref.set(interruptSignal, signal)
        const startedAt = yield* Clock.currentTimeMillis
        const apiBefore = yield* Ref.get(state.apiDurationMs)
        const model = yield* Ref.get(currentModel)
        // `@path` mentions attach their files (read by the Read tool, recorded in the file state).
        const expanded = typeof prompt === "string"
          ? yield* Mentions.expand(prompt, {
            cwd: options.cwd,
            read: mentionReader,
            denied: permissions === undefined ? undefined : Mentions.denyRules(permissions.config, options.cwd)
          }).pipe(Effect.provideService(SessionState.SessionState, state))
          : undefined
        const userMessage = expanded?.message ?? (prompt as UserMessage)
        yield* Ref.update(state.messages, (ms) => [...ms, userMessage])
        const first = !(yield* Ref.getAndSet(initSent, true))
        // The prompt is final: it is in the transcript before the model sees it.
        const saved = yield* recorder.checkpoint()
        const notes: Array<SdkMessage.SdkMessage> = (expanded?.skipped ?? []).map((skip) => ({
          type: "system",
          subtype: "informational",
          level: "warning",
          content: `${skip.mention} was not attached (${skip.reason}); it was sent as text.`,
          uuid: crypto.randomUUID(),
          session_id: sessionId
        }))
        const turnUsage = zeroUsage()
        const stamp = { session_id: sessionId, parent_tool_use_id: null } as const

        const toResult = (event: Extract<TurnEvent, { _tag: "TurnComplete" }>) =>
          Effect.gen(function*() {
            const now = yield* Clock.currentTimeMillis
            const apiNow = yield* Ref.get(state.apiDurationMs)
            const { report, total } = yield* modelUsage
            const denials = yield* Ref.get(state.permissionDenials)
            const common = {
              type: "result" as const,
              duration_ms: now - startedAt,
              duration_api_ms: apiNow - apiBefore,
              num_turns: event.iterations,
              stop_reason: event.lastMessage?.stop_reason ?? null,
              total_cost_usd: total,
              usage: fullUsage(turnUsage),
              modelUsage: report,
              permission_denials: denials,
              // The SDK has no reason for an answer still cut after its continuations: an error of the model call.
              terminal_reason: event.reason === "max_output_tokens" ? "model_error" as const : event.reason,
              uuid: crypto.randomUUID(),
              session_id: sessionId
            }
            switch (event.reason) {
              case "completed":
                return { ...common, subtype: "success", is_error: false, result: event.lastMessage?.text ?? "" } as const
              case "model_error": {
                const error = event.error!
                const status = "status" in error && error.status !== undefined ? error.status : null
                return {
                  ...common,
                  subtype: "success",
                  is_error: true,
                  result: `API Error: ${describe(error)}`,
                  api_error_status: status
                } as const
              }
              case "max_turns":
                return {
                  ...common,
                  subtype: "error_max_turns",
                  is_error: true,
                  errors: [`Reached max turns (${maxTurns})`]
                } as const
              case "aborted_streaming":
              case "aborted_tools":
                return { ...common, subtype: "error_during_execution", is_error: true, errors: ["Interrupted by user"] } as const
              case "prompt_too_long": {
                const what = event.message ?? (event.error !== undefined ? describe(event.error) : "The prompt is too long")
                const text = `${what}. The conversation no longer fits the context window: run /clear or start a new session.`
                return { ...common, subtype: "error_during_execution", is_error: true, result: text, errors: [text] } as const
              }
              case "max_output_tokens": {
                const text = event.message ?? "The answer was cut at the output limit"
                return { ...common, subtype: "error_during_execution", is_error: true, result: text, errors: [text] } as const
              }
              case "budget_exhausted":
                return {
                  ...common,
                  subtype: "error_max_budget_usd",
                  is_error: true,
                  errors: [event.message ?? `Reached maximum budget ($${maxBudgetUsd})`]
                } as const
            }
          })

        /** Appends the SDK messages for one loop event, except `TurnComplete` (which needs the clock and refs). */
        const toMessages = (event: Exclude<TurnEvent, { _tag: "TurnComplete" }>, out: Array<SdkMessage.SdkMessage>) => {
          const message = toMessage(event)
          if (message !== undefined) out.push(message)
          else if (event._tag === "StreamEvents") {
            for (const e of event.events) out.push({ type: "stream_event", event: e, uuid: crypto.randomUUID(), ...stamp })
          }
        }

        const toMessage = (event: Exclude<TurnEvent, { _tag: "TurnComplete" }>): SdkMessage.SdkMessage | undefined => {
          switch (event._tag) {
            case "StreamEvents":
              return undefined
            case "Assistant": {
              const u = event.message.usage
              if (u !== undefined) {
                turnUsage.input_tokens += u.input_tokens
                turnUsage.output_tokens += u.output_tokens
                turnUsage.cache_creation_input_tokens += u.cache_creation_input_tokens ?? 0
                turnUsage.cache_read_input_tokens += u.cache_read_input_tokens ?? 0
                turnUsage.ephemeral_1h_input_tokens += u.cache_creation?.ephemeral_1h_input_tokens ?? 0
              }
              return {
                type: "assistant",
                message: toApiMessage(event.message, model),
                uuid: crypto.randomUUID(),
                ...stamp
              }
            }
            case "ToolResults":
              return { type: "user", message: toParam(event.message), uuid: crypto.randomUUID(), ...stamp }
            case "Continuation":
              return {
                type: "user",
                message: toParam(event.message),
                isSynthetic: true,
                uuid: crypto.randomUUID(),
                ...stamp
              }
            case "Status":
              // The Agent SDK's statuses as they are; a stage's own word as an `info` line.
              return event.status === "compacting" || event.status === "requesting"
                ? { type: "system", subtype: "status", status: event.status, uuid: crypto.randomUUID(), session_id: sessionId }
                : {
                  type: "system",
                  subtype: "informational",
                  level: "info",
                  content: event.status,
                  uuid: crypto.randomUUID(),
                  session_id: sessionId
                }
            case "StageApplied": {
              const c = event.report.compaction
              if (c === undefined) return undefined
              return {
                type: "system",
                subtype: "compact_boundary",
                compact_metadata: {
                  trigger: c.trigger,
                  pre_tokens: c.preTokens,
                  post_tokens: c.postTokens,
                  duration_ms: c.durationMs
                },
                uuid: crypto.randomUUID(),
                session_id: sessionId
              }
            }
            case "Notice":
              return noticeMessage(event.notice, sessionId)
            case "ToolProgress":
              return {
                type: "tool_progress",
                tool_use_id: event.toolUseId,
                tool_name: event.toolName,
                elapsed_time_seconds: event.elapsedSeconds,
                uuid: crypto.randomUUID(),
                ...stamp
              }
            case "ToolMessage":
              return event.message
          }
        }

        // One effect per chunk of loop events, not per event.
        /** `system`/`permission_denied` for each denied call these results answer (read from the session's denials). */
        const denialMessages = (results: UserMessage, denials: ReadonlyArray<SessionState.PermissionDenial>) => {
          const out: Array<SdkMessage.SdkMessage> = []
          for (const block of results.toolResults) {
            const denial = denials.find((d) => d.tool_use_id === block.tool_use_id)
            if (denial === undefined) continue
            const text = typeof block.content === "string" ? block.content : ""
            out.push({
              type: "system",
              subtype: "permission_denied",
              tool_name: denial.tool_name,
              tool_use_id: denial.tool_use_id,
              message: text.replace(/^<tool_use_error>|<\/tool_use_error>$/g, ""),
              uuid: crypto.randomUUID(),
              session_id: sessionId
            })
          }
          return out
        }

        const chunkToMessages = (chunk: Chunk.Chunk<TurnEvent>): Effect.Effect<Chunk.Chunk<SdkMessage.SdkMessage>> =>
          Effect.gen(function*() {
            const out: Array<SdkMessage.SdkMessage> = []
            let complete: Extract<TurnEvent, { _tag: "TurnComplete" }> | undefined
            const events = Chunk.toReadonlyArray(chunk)
            let final = false
            for (let i = 0; i < events.length; i++) {
              const event = events[i]!
              if (event._tag === "TurnComplete") complete = event
              else {
                if (event._tag !== "StreamEvents" && event._tag !== "ToolProgress") final = true
                if (event._tag === "StageApplied") recorder.note(event.report)
                if (event._tag === "ToolResults") {
                  const denials = yield* Ref.get(state.permissionDenials)
                  if (denials.length > 0) out.push(...denialMessages(event.message, denials))
                }
                toMessages(event, out)
              }
            }
            // A turn stopped mid-answer tells the model so in the conversation (as Claude Code does): the
            // cut answer is dropped, and the next request carries the prompt and this note.
            if (complete !== undefined && complete.reason === "aborted_streaming") {
              const note = new UserMessage({ content: [new TextBlock({ text: INTERRUPTED_NOTE })] })
              yield* Ref.update(state.messages, (ms) => [...ms, note])
              out.push({ type: "user", message: toParam(note), uuid: crypto.randomUUID(), ...stamp })
              final = true
            }
            // What became final in this chunk is in the transcript before it is emitted (a process
            // killed now loses at most the message in flight); the end of the turn also syncs the file.
            if (final || complete !== undefined) {
              out.push(...warningMessages(yield* recorder.checkpoint({ sync: complete !== undefined })))
            }
            if (complete === undefined) return Chunk.unsafeFromArray(out)
            out.push(...(yield* unpricedWarnings))
            out.push(yield* toResult(complete))
            return Chunk.unsafeFromArray(out)
          })

        const { request: systemFields } = yield* resolved
        const turn = TurnLoop.run({
          model,
          maxTokens,
          maxTurns,
          budget,
          ...systemFields,
          cwd: options.cwd,
          params: options.params,
          interrupt: submitOptions.signal === undefined
            ? Deferred.await(signal)
            : Effect.raceFirst(Deferred.await(signal), aborted(submitOptions.signal)),
          emitStreamEvents: includePartial
        }).pipe(
          Stream.mapChunksEffect(chunkToMessages),
          // A consumer that stops pulling early still leaves the transcript up to date and synced.
          Stream.ensuring(Effect.suspend(() => recorder.checkpoint({ sync: true }))),
          Stream.provideService(SessionState.SessionState, state),
          Stream.provideContext(context)
        )
        const prefix = [...(first ? [init] : []), ...openingNotices(), ...notes, ...warningMessages(saved)]
        return prefix.length === 0 ? turn : Stream.concat(Stream.fromIterable(prefix), turn)
      }))

    return Session.of({
      get sessionId() {
        return sessionId
      },
      state,
      get init() {
        return init
      },
      submit,
      model: Ref.get(currentModel),
      setModel: (model) => Ref.set(currentModel, model),
      interrupt: Effect.flatMap(Ref.get(interruptSignal), (d) => Deferred.succeed(d, undefined)),
      systemPrompt: Effect.map(resolved, (r) => r.prompt)
    })
  })
}

/** A session layer (failing when `resume` or `continue` finds no usable transcript). @category Layers */
export const layer = (
  options: Options
): Layer.Layer<Session, LoadError, ModelClient | ToolRuntime | ToolRegistry | Pipeline> =>
  Layer.effect(Session, make(options))

/** Options that start a new session (no `resume`, no `continue`): making it cannot fail. @category Models */
export interface NewSession {
  readonly resume?: undefined
  readonly continue?: false | undefined
}

/** The transcript `options` ask to continue, if any, from the store. */
const resumeFrom = (
  options: Options,
  store: SessionStore.Service | undefined
): Effect.Effect<Transcript.Loaded | undefined, LoadError> => {
  if (typeof options.resume === "object") return Effect.succeed(options.resume)
  if (options.resume === undefined && options.continue !== true) return Effect.succeed(undefined)
  if (store === undefined) {
    return Effect.fail(
      new SessionNotFound({
        ...(options.resume !== undefined ? { sessionId: options.resume } : {}),
        cwd: options.cwd,
        directory: "nowhere",
        known: [],
        reason: "no SessionStore is provided to load it from"
      })
    )
  }
  return options.resume !== undefined
    ? store.load(options.cwd, options.resume)
    : SessionStore.loadLatest(store, options.cwd)
}

/** Puts a loaded transcript's totals into fresh state: usage, file read state, the last call's model. */
const restore = (state: SessionState.Service, loaded: Transcript.Loaded): Effect.Effect<void> =>
  Effect.all([
    Ref.set(state.usage, loaded.usage),
    Ref.set(state.fileState, loaded.fileState),
    Ref.set(state.model, loaded.lastModel)
  ], { discard: true })

/**
 * `state` whose `sessionId` reads `id()`: the refs stay the same objects for the whole life of the
 * `Session` (whatever captured them keeps working), while `/clear` gives it a new id.
 */
const withSessionId = (state: SessionState.Service, id: () => string): SessionState.Service =>
  Object.defineProperty({ ...state }, "sessionId", { get: id, enumerable: true, configurable: false })

const isRef = (value: unknown): value is Ref.Ref<unknown> =>
  typeof value === "object" && value !== null && Ref.RefTypeId in value

/** Sets every ref of `state` to its value in `fresh` (`/clear`): the state of a new session, in the same refs. */
const resetState = (state: SessionState.Service, fresh: SessionState.Service): Effect.Effect<void> =>
  Effect.forEach(Object.keys(fresh), (key) => {
    const from = (fresh as unknown as Record<string, unknown>)[key]
    const to = (state as unknown as Record<string, unknown>)[key]
    return isRef(from) && isRef(to) ? Effect.flatMap(Ref.get(from), (value) => Ref.set(to, value)) : Effect.void
  }, { discard: true })
