/**
 * One model turn of a session: the prompt (its `@path` mentions attached) goes into the
 * conversation and the transcript, the turn loop runs with the session's state, and its events
 * become SDK messages (`SdkProjection`) as they come, each chunk's final messages written to the
 * transcript before they are emitted, and exactly one `result` last.
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { Hooks } from "../hook/Hooks.js"
import * as SessionHooks from "../hook/SessionHooks.js"
import * as Mentions from "../input/Mentions.js"
import { AssistantMessage, type Message, TextBlock, type ToolUseBlock, UserMessage } from "../message/Message.js"
import * as DurableTurn from "../record/DurableTurn.js"
import * as StructuredOutput from "../output/StructuredOutput.js"
import * as Fallback from "../resilience/Fallback.js"
import type { TurnEvent } from "../turn/TurnEvent.js"
import * as TurnLoop from "../turn/TurnLoop.js"
import * as Cost from "./Cost.js"
import { costOf, type Current, type Engine, opening, stampOf, transcriptPathOf, unpricedWarnings, warnings } from "./Engine.js"
import type * as SdkMessage from "./SdkMessage.js"
import * as SdkProjection from "./SdkProjection.js"
import * as SdkResult from "./SdkResult.js"
import { INTERRUPTED_NOTE } from "./SessionOptions.js"
import { SessionState } from "./SessionState.js"
import * as TokenUsage from "./TokenUsage.js"
import * as TurnEnvelope from "./TurnEnvelope.js"

/** Completes `stop` when `signal` aborts (at once if it already has), for as long as the scope lasts. */
const stopOnAbort = (signal: AbortSignal, stop: Deferred.Deferred<void>): Effect.Effect<void, never, Scope.Scope> => {
  if (signal.aborted) return Deferred.succeed(stop, undefined)
  const onAbort = () => Deferred.unsafeDone(stop, Exit.void)
  return Effect.acquireRelease(
    Effect.sync(() => signal.addEventListener("abort", onAbort, { once: true })),
    () => Effect.sync(() => signal.removeEventListener("abort", onAbort))
  )
}

/** Options of one turn. @category Models */
export interface TurnOptions {
  /** Aborting it stops the turn. */
  readonly signal?: AbortSignal | undefined
  /** The model of this turn only (a custom command's `model:`); default the session's. */
  readonly model?: string | undefined
  /** The turn's id in its envelope; default a new id from `Ids`. */
  readonly turnId?: string | undefined
  /** The caller's metadata, recorded in the turn's envelope. */
  readonly metadata?: Readonly<Record<string, unknown>> | undefined
  /** The slash command whose prompt this turn runs (a custom command), for the envelope. */
  readonly command?: { readonly name: string; readonly args: string } | undefined
}

/** The budget check of the session's `maxBudgetUsd`, if it has one. */
const budgetOf = (engine: Engine, current: Current): Effect.Effect<string | undefined> | undefined => {
  const max = engine.options.maxBudgetUsd
  if (max === undefined) return undefined
  return Effect.map(
    Ref.get(current.state.usage),
    (usage) => Cost.total(usage, engine.pricing) >= max ? `Reached maximum budget ($${max})` : undefined
  )
}

/** The user message for `prompt`: a string's `@path` mentions attached, a message as it is. */
const userMessageOf = (
  engine: Engine,
  current: Current,
  prompt: string | UserMessage
): Effect.Effect<Pick<Mentions.Expanded, "attached" | "message" | "skipped">> =>
  typeof prompt !== "string"
    ? Effect.succeed({ message: prompt, attached: [], skipped: [] })
    : Mentions.expand(prompt, {
      cwd: engine.options.cwd,
      read: engine.mentionReader,
      denied: Mentions.denyRules(engine.permissions.config, engine.options.cwd)
    }).pipe(Effect.provideService(SessionState, current.state), Effect.provide(engine.services))

/** The text of a prompt (a message's text blocks). */
const promptText = (prompt: string | UserMessage): string =>
  typeof prompt === "string"
    ? prompt
    : typeof prompt.content === "string"
    ? prompt.content
    : prompt.content.flatMap((b) => (b instanceof TextBlock ? [b.text] : [])).join("\n")

/** What SessionStart says started the session. */
const sourceOf = (engine: Engine): "startup" | "resume" | "fork" =>
  engine.options.resume === undefined && engine.options.continue !== true
    ? "startup"
    : engine.options.forkSession === true
    ? "fork"
    : "resume"

/**
 * Messages the kernel makes from what it already holds (a validated message, strings, a constant
 * note) are built without validating them again.
 */
const unchecked = { disableValidation: true } as const

/** `message` with the hooks' context for the model (empty pieces left out) after its content. */
const withContext = (message: UserMessage, context: ReadonlyArray<string>): UserMessage => {
  const texts = context.filter((text) => text !== "")
  if (texts.length === 0) return message
  const content = typeof message.content === "string"
    ? [new TextBlock({ text: message.content }, unchecked)]
    : message.content
  const added = new TextBlock({ text: texts.join("\n") }, unchecked)
  return new UserMessage({ ...message, content: [...content, added] }, unchecked)
}

/** A prompt a UserPromptSubmit hook blocked: the reason for the user and an error result; nothing reaches the model. */
const blockedPrompt = (engine: Engine, current: Current, reason: string, startedAt: number) =>
  Effect.gen(function*() {
    const stamp = stampOf(engine, current)
    const text = `A UserPromptSubmit hook blocked this prompt: ${reason}`
    const cost = yield* costOf(engine, current)
    return [
      SdkProjection.warning(text, stamp),
      SdkResult.commandResult({ text, isError: true, terminalReason: "hook_stopped" }, {
        durationMs: (yield* Clock.currentTimeMillis) - startedAt,
        apiDurationMs: 0,
        modelUsage: cost.modelUsage,
        totalCostUsd: cost.totalCostUsd,
        permissionDenials: yield* Ref.get(current.state.permissionDenials)
      }, stamp)
    ]
  })

/** Why the turn runs on its model (see `TurnEnvelope.ModelReason`). */
const modelReason = (engine: Engine, options: TurnOptions, sessionModel: string): TurnEnvelope.ModelReason =>
  options.model !== undefined
    ? "command"
    : sessionModel !== engine.options.model
    ? "switch"
    : engine.options.modelSource ?? "default"

/**
 * The turn's envelope, once its user message is final: noted for the transcript (written by the
 * next checkpoint, before the model is called) and kept as the session's last.
 */
const recordEnvelope = (
  engine: Engine,
  current: Current,
  turn: {
    readonly options: TurnOptions
    readonly prepared: TurnEnvelope.Prepared
    readonly model: string
    readonly prompt: string | UserMessage
    readonly user: Pick<Mentions.Expanded, "attached" | "message">
  }
): Effect.Effect<void> =>
  Effect.gen(function*() {
    const { options, prepared, user } = turn
    const envelope = TurnEnvelope.make({
      turnId: options.turnId ?? engine.ids.uuid(),
      prepared,
      routing: {
        model: turn.model,
        fallbacks: Fallback.chainFor(turn.model, engine.options.fallbackModels ?? []).slice(1),
        reason: modelReason(engine, options, yield* Ref.get(engine.model))
      },
      toolPolicy: TurnEnvelope.toolPolicyOf(engine.registry.definitions, engine.permissions.config),
      user: TurnEnvelope.userInputOf(user.message, {
        typed: typeof turn.prompt === "string" ? turn.prompt : undefined,
        attachments: user.attached,
        command: options.command
      }),
      outputSchema: engine.options.structuredOutput?.schema.schema,
      metadata: options.metadata
    })
    current.recorder.envelope(envelope, prepared.record, user.message)
    yield* Ref.set(current.envelope, envelope)
  })

/**
 * The prompt of a turn that runs on from the conversation's last answer (its tool calls were cut
 * by a restart while one waited for an answer) instead of from a new user message.
 *
 * @category Running
 */
export const RESUME_TOOLS: unique symbol = Symbol.for("@keel/core/TurnRunner/RESUME_TOOLS")

/** The tool calls of the conversation's last message, when it is an answer with some. */
const lastToolUses = (messages: ReadonlyArray<Message>): ReadonlyArray<ToolUseBlock> | undefined => {
  const last = messages.at(-1)
  return last instanceof AssistantMessage && last.toolUses.length > 0 ? last.toolUses : undefined
}

/**
 * Runs one model turn for `prompt` in the session `engine` holds, and streams its SDK messages;
 * the last is its `result`.
 *
 * @category Running
 */
export const run = (
  engine: Engine,
  prompt: string | UserMessage | typeof RESUME_TOOLS,
  options: TurnOptions = {}
): Stream.Stream<SdkMessage.SdkMessage> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    yield* Effect.acquireRelease(engine.turnLock.take(1), () => engine.turnLock.release(1))
    // One stop switch for the turn: the session's `interrupt` and the caller's abort signal both
    // complete it, an abort that came before the turn started included.
    const signal = yield* Deferred.make<void>()
    yield* Ref.set(engine.interrupt, signal)
    if (options.signal !== undefined) yield* stopOnAbort(options.signal, signal)
    const { current, messages: prefix } = yield* opening(engine)
    const { recorder, state } = current
    const stamp = stampOf(engine, current)
    const startedAt = yield* Clock.currentTimeMillis
    const apiBefore = yield* Ref.get(state.apiDurationMs)
    const model = options.model ?? (yield* Ref.get(engine.model))
    const prepared = yield* current.prompt
    // A resumed turn has no new prompt: it runs on from its last answer's tool calls, those a
    // crash finished (or cut short, not idempotent) answered from the journal.
    const pendingTools = prompt === RESUME_TOOLS ? lastToolUses(yield* Ref.get(state.messages)) : undefined
    const recovered = engine.options.recovered
    const answeredTools = pendingTools === undefined || recovered === undefined
      ? undefined
      : yield* DurableTurn.answers(recovered, pendingTools, engine.registry.get)
    const hooks = Context.get(engine.services, Hooks)
    const where = { sessionId: current.id, cwd: engine.options.cwd, permissionMode: engine.permissions.config.mode }
    // The session's first turn: SessionStart's hooks, their context joining the prompt.
    const opened = prefix.some((m) => m.type === "system" && m.subtype === "init")
    const startContext = opened ? yield* SessionHooks.sessionStart(hooks, where, sourceOf(engine)) : ""
    if (prompt !== RESUME_TOOLS) {
      const submitted = yield* SessionHooks.userPromptSubmit(hooks, where, promptText(prompt))
      if (submitted._tag === "Blocked") return Stream.fromIterable([...prefix, ...(yield* blockedPrompt(engine, current, submitted.reason, startedAt))])
      const expanded = yield* userMessageOf(engine, current, prompt)
      const user = { ...expanded, message: withContext(expanded.message, [startContext, submitted.context]) }
      const { message: userMessage, skipped } = user
      yield* Ref.update(state.messages, (ms) => [...ms, userMessage])
      for (const skip of skipped) {
        prefix.push(SdkProjection.warning(`${skip.mention} was not attached (${skip.reason}); it was sent as text.`, stamp))
      }
      yield* recordEnvelope(engine, current, { options, prepared, model, prompt, user })
    }
    // The prompt is final: it is in the transcript, and the turn's envelope after it, before the model sees it.
    prefix.push(...warnings(engine, current, yield* recorder.checkpoint()))
    let turnUsage = TokenUsage.zero

    const result = (event: Extract<TurnEvent, { _tag: "TurnComplete" }>) =>
      Effect.gen(function*() {
        const cost = yield* costOf(engine, current)
        return SdkResult.result(event, {
          durationMs: (yield* Clock.currentTimeMillis) - startedAt,
          apiDurationMs: (yield* Ref.get(state.apiDurationMs)) - apiBefore,
          usage: turnUsage,
          modelUsage: cost.modelUsage,
          totalCostUsd: cost.totalCostUsd,
          permissionDenials: yield* Ref.get(state.permissionDenials),
          maxTurns: engine.maxTurns,
          maxBudgetUsd: engine.options.maxBudgetUsd
        }, stamp)
      })

    // One effect per chunk of loop events, not per event.
    const chunkToMessages = (chunk: Chunk.Chunk<TurnEvent>): Effect.Effect<Chunk.Chunk<SdkMessage.SdkMessage>> =>
      Effect.gen(function*() {
        const out: Array<SdkMessage.SdkMessage> = []
        let complete: Extract<TurnEvent, { _tag: "TurnComplete" }> | undefined
        let final = false
        for (const event of Chunk.toReadonlyArray(chunk)) {
          if (event._tag === "TurnComplete") {
            complete = event
            continue
          }
          if (event._tag !== "StreamEvents" && event._tag !== "ToolProgress") final = true
          if (event._tag === "StageApplied") recorder.note(event.report)
          if (event._tag === "Assistant" && event.message.usage !== undefined) {
            turnUsage = TokenUsage.add(turnUsage, TokenUsage.fromResponse(event.message.usage))
          }
          if (event._tag === "ToolResults") {
            const denials = yield* Ref.get(state.permissionDenials)
            if (denials.length > 0) out.push(...SdkProjection.permissionDenied(event.message, denials, stamp))
          }
          SdkProjection.turnEvent(event, stamp, model, out)
        }
        // A turn stopped mid-answer tells the model so in the conversation (as Claude Code does): the
        // cut answer is dropped, and the next request carries the prompt and this note.
        if (complete?.reason === "aborted_streaming") {
          const note = new UserMessage({ content: [new TextBlock({ text: INTERRUPTED_NOTE }, unchecked)] }, unchecked)
          yield* Ref.update(state.messages, (ms) => [...ms, note])
          out.push(SdkProjection.user(note, stamp))
          final = true
        }
        // What became final in this chunk is in the transcript before it is emitted (a process
        // killed now loses at most the message in flight); the end of the turn also syncs the file.
        if (final || complete !== undefined) {
          out.push(...warnings(engine, current, yield* recorder.checkpoint({ sync: complete !== undefined })))
        }
        if (complete === undefined) return Chunk.unsafeFromArray(out)
        out.push(...(yield* unpricedWarnings(engine, current)))
        out.push(yield* result(complete))
        return Chunk.unsafeFromArray(out)
      })

    const systemFields = prepared.resolved.request
    // The services go to the effect that makes the turn's stream, not to the stream (see `TurnLoop.stream`).
    const events = yield* TurnLoop.stream({
      model,
      maxTokens: engine.maxTokens(model),
      maxTokensFor: engine.maxTokens,
      maxTurns: engine.maxTurns,
      continuation: engine.options.continuation,
      promptTooLong: engine.options.promptTooLong,
      budget: budgetOf(engine, current),
      ...systemFields,
      cwd: engine.options.cwd,
      params: engine.options.params,
      thinking: yield* Ref.get(engine.thinking),
      transcriptPath: transcriptPathOf(engine, current),
      interrupt: signal,
      emitStreamEvents: engine.options.includePartialMessages === true,
      pendingTools,
      answeredTools,
      structuredOutput: engine.options.structuredOutput === undefined
        ? undefined
        : StructuredOutput.policy(engine.options.structuredOutput),
      onStop: SessionHooks.stopCheck(hooks, where)
    }).pipe(Effect.provideService(SessionState, state), Effect.provide(engine.services))
    const turn = events.pipe(
      Stream.mapChunksEffect(chunkToMessages),
      // A consumer that stops pulling early still leaves the transcript up to date and synced.
      Stream.ensuring(Effect.suspend(() => recorder.checkpoint({ sync: true })))
    )
    return prefix.length === 0 ? turn : Stream.concat(Stream.fromIterable(prefix), turn)
  }))
