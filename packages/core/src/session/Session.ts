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
import { type AssistantMessage, type Message, toParam, UserMessage } from "../message/Message.js"
import type { ModelClient } from "../model/ModelClient.js"
import { category, describe, statusOf } from "../model/ModelError.js"
import type { ModelNotice } from "../model/ModelNotice.js"
import type { ModelRequest } from "../model/ModelRequest.js"
import { ToolRegistry } from "../tool/ToolRegistry.js"
import type { ToolRuntime } from "../tool/ToolRuntime.js"
import type { Pipeline } from "../turn/Pipeline.js"
import type { TurnEvent } from "../turn/TurnEvent.js"
import * as TurnLoop from "../turn/TurnLoop.js"
import * as Pricing from "./Pricing.js"
import type * as SdkMessage from "./SdkMessage.js"
import * as SessionState from "./SessionState.js"

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

/** Default context window (tokens). @category Constants */
export const DEFAULT_CONTEXT_WINDOW = 200_000

/** The system prompt used when none is given. @category Constants */
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
  readonly sessionId?: string | undefined
  /** Earlier conversation to continue from. */
  readonly history?: ReadonlyArray<Message> | undefined
  /** The most model calls per turn (default {@link DEFAULT_MAX_TURNS}). */
  readonly maxTurns?: number | undefined
  readonly maxTokens?: number | undefined
  /** Replaces the default system prompt. */
  readonly systemPrompt?: ModelRequest["system"] | undefined
  /** Emit `stream_event` messages with the raw model events. */
  readonly includePartialMessages?: boolean | undefined
  readonly permissionMode?: string | undefined
  /** The MCP servers of this session and how their start went, as `system`/`init` reports them. */
  readonly mcpServers?: ReadonlyArray<{ readonly name: string; readonly status: string }> | undefined
  readonly pricing?: Pricing.Table | undefined
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
  readonly sessionId: string
  readonly state: SessionState.Service
  /** The `system`/`init` message (emitted before the first turn's messages). */
  readonly init: SdkMessage.SystemInit
  /**
   * Runs one turn for this prompt and streams its messages; the last is its `result`. Turns run one
   * at a time: a second `submit` waits for the first to finish. `/compact [instructions]` compacts
   * the conversation instead (`system`/`status` "compacting", `system`/`compact_boundary` with
   * trigger `manual`, and a result).
   */
  readonly submit: (prompt: string | UserMessage, options?: SubmitOptions) => Stream.Stream<SdkMessage.SdkMessage>
  /** Stops the running turn (model stream and tools); it ends with an `error_during_execution` result. */
  readonly interrupt: Effect.Effect<void>
}

/** @category Context */
export class Session extends Context.Tag("@keel/core/Session")<Session, Service>() {}

const zeroUsage = (): {
  input_tokens: number
  output_tokens: number
  cache_creation_input_tokens: number
  cache_read_input_tokens: number
} => ({ input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 })

const fullUsage = (u: ReturnType<typeof zeroUsage>): SdkMessage.NonNullableUsage => ({
  ...u,
  server_tool_use: { web_search_requests: 0, web_fetch_requests: 0 },
  service_tier: "standard",
  cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: u.cache_creation_input_tokens }
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
    usage: fullUsage({
      input_tokens: u?.input_tokens ?? 0,
      output_tokens: u?.output_tokens ?? 0,
      cache_creation_input_tokens: u?.cache_creation_input_tokens ?? 0,
      cache_read_input_tokens: u?.cache_read_input_tokens ?? 0
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
        max_retries: notice.maxRetries,
        retry_delay_ms: notice.delayMs,
        error_status: statusOf(notice.error),
        error: category(notice.error),
        error_message: describe(notice.error),
        ...stamp
      }
    case "Waiting":
      return {
        type: "system",
        subtype: "status",
        status: "retrying",
        attempt: notice.attempt,
        waited_ms: notice.waitedMs,
        retry_in_ms: notice.remainingMs,
        ...stamp
      }
    case "StreamStalled":
      return { type: "system", subtype: "status", status: "stalled", idle_ms: notice.idleMs, timeout_ms: notice.timeoutMs, ...stamp }
    case "Retracted":
      return { type: "system", subtype: "tombstone", reason: notice.reason, message_id: notice.messageId ?? null, ...stamp }
    case "ModelSwitched":
      return {
        type: "system",
        subtype: "model_fallback",
        original_model: notice.from,
        fallback_model: notice.to,
        content: `Switched to ${notice.to} due to high demand for ${notice.from}`,
        error_status: statusOf(notice.error),
        ...stamp
      }
  }
}

/**
 * A session over the given model, tools and pipeline.
 *
 * @category Constructors
 */
export const make = (
  options: Options
): Effect.Effect<Service, never, ModelClient | ToolRuntime | ToolRegistry | Pipeline> =>
  Effect.gen(function*() {
    const context = yield* Effect.context<ModelClient | ToolRuntime | ToolRegistry | Pipeline>()
    const compactor = Option.getOrUndefined(yield* Effect.serviceOption(Compactor))
    const registry = yield* ToolRegistry
    const sessionId = options.sessionId ?? crypto.randomUUID()
    const state = yield* SessionState.make(sessionId, options.history ?? [])
    const turnLock = yield* Effect.makeSemaphore(1)
    const interruptSignal = yield* Ref.make(yield* Deferred.make<void>())
    const initSent = yield* Ref.make(false)
    const pricing = options.pricing ?? Pricing.defaultTable
    const maxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS
    const maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS
    const includePartial = options.includePartialMessages === true

    const init: SdkMessage.SystemInit = {
      type: "system",
      subtype: "init",
      cwd: options.cwd,
      session_id: sessionId,
      tools: registry.tools.map((t) => t.name),
      mcp_servers: options.mcpServers ?? [],
      model: options.model,
      permissionMode: options.permissionMode ?? "default",
      slash_commands: [],
      apiKeySource: "ANTHROPIC_API_KEY",
      claude_code_version: VERSION,
      output_style: "default",
      skills: [],
      plugins: [],
      uuid: crypto.randomUUID()
    }

    const modelUsage = Effect.map(Ref.get(state.usage), (usage) => {
      const report: Record<string, SdkMessage.ModelUsageReport> = {}
      let total = 0
      for (const [model, u] of usage) {
        const costUSD = Pricing.costOf(model, u, pricing)
        total += costUSD
        report[model] = {
          inputTokens: u.inputTokens,
          outputTokens: u.outputTokens,
          cacheReadInputTokens: u.cacheReadInputTokens,
          cacheCreationInputTokens: u.cacheCreationInputTokens,
          webSearchRequests: 0,
          costUSD,
          contextWindow: DEFAULT_CONTEXT_WINDOW,
          maxOutputTokens: maxTokens
        }
      }
      return { report, total }
    })

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
              model: options.model,
              iteration: 0,
              sessionId,
              maxTokens,
              cwd: options.cwd,
              tools: registry.definitions
            }, instructions)
          if (outcome.halt === undefined) yield* Ref.set(state.messages, outcome.messages)
          const now = yield* Clock.currentTimeMillis
          const { report, total } = yield* modelUsage
          const c = outcome.compaction
          const out: Array<SdkMessage.SdkMessage> = []
          if (c !== undefined) {
            out.push({
              type: "system",
              subtype: "compact_boundary",
              compact_metadata: { trigger: c.trigger, pre_tokens: c.preTokens, post_tokens: c.postTokens, duration_ms: c.durationMs },
              ...stamp()
            })
          }
          out.push({
            type: "result",
            subtype: outcome.halt === undefined ? "success" : "error_during_execution",
            is_error: outcome.halt !== undefined,
            result: outcome.halt ?? `Compacted the conversation (${outcome.report})`,
            ...(outcome.halt !== undefined ? { errors: [outcome.halt] } : {}),
            duration_ms: now - startedAt,
            duration_api_ms: (yield* Ref.get(state.apiDurationMs)) - apiBefore,
            num_turns: 0,
            stop_reason: null,
            total_cost_usd: total,
            usage: fullUsage(zeroUsage()),
            modelUsage: report,
            permission_denials: yield* Ref.get(state.permissionDenials),
            terminal_reason: outcome.halt === undefined ? "completed" : "prompt_too_long",
            ...stamp()
          })
          return out
        })
        return Stream.concat(
          Stream.fromIterable(first ? [init, status] : [status]),
          Stream.fromIterableEffect(work)
        )
      }))

    const submit = (prompt: string | UserMessage, submitOptions: SubmitOptions = {}): Stream.Stream<SdkMessage.SdkMessage> => {
      const command = typeof prompt === "string" ? /^\s*\/compact(?:\s+([\s\S]*))?$/.exec(prompt) : null
      return command !== null ? compactNow(command[1]?.trim() || undefined) : runTurn(prompt, submitOptions)
    }

    const runTurn = (prompt: string | UserMessage, submitOptions: SubmitOptions): Stream.Stream<SdkMessage.SdkMessage> =>
      Stream.unwrapScoped(Effect.gen(function*() {
        yield* Effect.acquireRelease(turnLock.take(1), () => turnLock.release(1))
        const signal = yield* Deferred.make<void>()
        yield* Ref.set(interruptSignal, signal)
        const startedAt = yield* Clock.currentTimeMillis
        const apiBefore = yield* Ref.get(state.apiDurationMs)
        const userMessage = typeof prompt === "string" ? new UserMessage({ content: prompt }) : prompt
        yield* Ref.update(state.messages, (ms) => [...ms, userMessage])
        const first = !(yield* Ref.getAndSet(initSent, true))
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
              terminal_reason: event.reason,
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
              }
              return {
                type: "assistant",
                message: toApiMessage(event.message, options.model),
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
              return { type: "system", subtype: "status", status: event.status, uuid: crypto.randomUUID(), session_id: sessionId }
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
            for (let i = 0; i < events.length; i++) {
              const event = events[i]!
              if (event._tag === "TurnComplete") complete = event
              else {
                if (event._tag === "ToolResults") {
                  const denials = yield* Ref.get(state.permissionDenials)
                  if (denials.length > 0) out.push(...denialMessages(event.message, denials))
                }
                toMessages(event, out)
              }
            }
            if (complete === undefined) return Chunk.unsafeFromArray(out)
            out.push(yield* toResult(complete))
            return Chunk.unsafeFromArray(out)
          })

        const turn = TurnLoop.run({
          model: options.model,
          maxTokens,
          maxTurns,
          system: options.systemPrompt ?? defaultSystemPrompt(options.cwd),
          cwd: options.cwd,
          params: options.params,
          interrupt: submitOptions.signal === undefined
            ? Deferred.await(signal)
            : Effect.raceFirst(Deferred.await(signal), aborted(submitOptions.signal)),
          emitStreamEvents: includePartial
        }).pipe(
          Stream.mapChunksEffect(chunkToMessages),
          Stream.provideService(SessionState.SessionState, state),
          Stream.provideContext(context)
        )
        return first ? Stream.concat(Stream.make(init), turn) : turn
      }))

    return Session.of({
      sessionId,
      state,
      init,
      submit,
      interrupt: Effect.flatMap(Ref.get(interruptSignal), (d) => Deferred.succeed(d, undefined))
    })
  })

/** A session layer. @category Layers */
export const layer = (
  options: Options
): Layer.Layer<Session, never, ModelClient | ToolRuntime | ToolRegistry | Pipeline> => Layer.effect(Session, make(options))
