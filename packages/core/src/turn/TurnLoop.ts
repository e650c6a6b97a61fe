/**
 * The turn loop, as one `Stream` pipeline. Each iteration: prepare (the `Pipeline` of stages) →
 * model stream (`ModelClient`) → accumulate (`Accumulator`, folded chunk by chunk as events pass
 * through) → tool execution (`ToolRuntime`) → continue or stop. It stops when the model answers
 * without `tool_use`, when `maxTurns` model calls have run, when the model call fails, or when
 * interrupted; whichever way it stops, every `tool_use` in the conversation has its `tool_result`.
 *
 * Iterations are produced by `Stream.repeatEffectOption` and flattened, so the pipeline does not
 * deepen with the number of iterations: per-event cost is the same on the 1st and the 100th.
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as Take from "effect/Take"
import {
  type AssistantMessage,
  type Message,
  type ToolResultBlock,
  type ToolUseBlock,
  UserMessage
} from "../message/Message.js"
import * as Accumulator from "../model/Accumulator.js"
import { ModelClient } from "../model/ModelClient.js"
import type { ModelError } from "../model/ModelError.js"
import type { ModelRequest, QuerySource } from "../model/ModelRequest.js"
import type { StreamEvent } from "../model/StreamEvent.js"
import { addUsage, SessionState } from "../session/SessionState.js"
import { ToolRegistry } from "../tool/ToolRegistry.js"
import * as ToolRuntime from "../tool/ToolRuntime.js"
import { interruptedResult } from "../tool/ToolRuntime.js"
import { Compactor } from "../context/Compactor.js"
import { Pipeline } from "./Pipeline.js"
import type { StageContext } from "./Stage.js"
import { type TerminalReason, TurnEvent } from "./TurnEvent.js"

/** Continuations allowed after answers cut by `max_tokens`, per turn (Claude Code's 3). @category Constants */
export const MAX_CONTINUATIONS = 3

/** The user message that asks for a cut answer to go on (Claude Code's wording). @category Constants */
export const RESUME_PROMPT = "Output token limit hit. Resume directly — no apology, no recap of what you were doing. " +
  "Pick up mid-thought if that is where the cut happened. Break remaining work into smaller pieces."

/** Options of one turn. @category Models */
export interface Options {
  readonly model: string
  readonly maxTokens: number
  /** The most model calls in this turn; the turn ends with `max_turns` after the last one's tools. */
  readonly maxTurns?: number | undefined
  readonly system?: ModelRequest["system"] | undefined
  /** How many leading blocks of `system` are its stable part (see `ModelRequest.systemStableBlocks`). */
  readonly systemStableBlocks?: number | undefined
  /** Working directory handed to tools. */
  readonly cwd: string
  readonly source?: QuerySource | undefined
  /** Further Messages API parameters. */
  readonly params?: Readonly<Record<string, unknown>> | undefined
  /** When this effect completes, the turn stops: the model stream and running tools are interrupted. */
  readonly interrupt?: Effect.Effect<void> | undefined
  /** Emit raw events as `StreamEvents` batches (default true). */
  readonly emitStreamEvents?: boolean | undefined
  /**
   * A spending check, run after each model response (once its usage is recorded) and after each
   * round of tool results: when it yields a message, the turn ends with `budget_exhausted`. Tool
   * calls of the response that crossed the budget are not run (as in Claude Code, which stops
   * right after that response): each is answered with an error result carrying the message, or
   * with its own result if it had already finished while the answer streamed.
   */
  readonly budget?: Effect.Effect<string | undefined> | undefined
}

/**
 * `stream`, ended early when `interrupt` completes: like `Stream.interruptWhen`, but without a race
 * per pull. The stream runs in its own fiber, which pulls its next chunk only when the consumer asks
 * for one (so nothing runs ahead of the consumer: a chunk the session is still writing to the
 * transcript is never followed by the next model request); a second fiber waits for `interrupt`,
 * then interrupts the first (its finalizers run) and ends the output. A chunk costs two queue
 * handoffs.
 */
const stopWhen = (interrupt: Effect.Effect<void>) => <A>(stream: Stream.Stream<A>): Stream.Stream<A> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const asks = yield* Effect.acquireRelease(Queue.bounded<void>(1), Queue.shutdown)
    const out = yield* Effect.acquireRelease(Queue.bounded<Take.Take<A>>(1), Queue.shutdown)
    const pull = yield* Stream.toPull(stream)
    const producer = yield* Effect.forkScoped(
      Effect.forever(
        Effect.zipRight(
          Queue.take(asks),
          Effect.flatMap(Take.fromPull(pull), (take) => Queue.offer(out, take))
        )
      )
    )
    yield* Effect.forkScoped(
      interrupt.pipe(Effect.zipRight(Fiber.interrupt(producer)), Effect.zipRight(Queue.offer(out, Take.end)))
    )
    return Stream.repeatEffectChunkOption(
      Queue.offer(asks, undefined).pipe(Effect.zipRight(Queue.take(out)), Effect.flatMap(Take.done))
    )
  }))

/** The services a turn needs. @category Models */
export type Requirements = ModelClient | ToolRuntime.ToolRuntime | ToolRegistry | Pipeline | SessionState

/**
 * Runs one turn on the session's conversation (which must end with the user's message). Emits
 * `TurnEvent`s; the last is always `TurnComplete`, unless the consumer itself stops pulling, in
 * which case the conversation is still left valid.
 *
 * @category Constructors
 */
export const run = (options: Options): Stream.Stream<TurnEvent, never, Requirements> =>
  Stream.unwrap(Effect.gen(function*() {
    const client = yield* ModelClient
    const runtime = yield* ToolRuntime.ToolRuntime
    const registry = yield* ToolRegistry
    const pipeline = yield* Pipeline
    const session = yield* SessionState
    const emitStreamEvents = options.emitStreamEvents !== false
    const maxTurns = options.maxTurns ?? Number.POSITIVE_INFINITY

    // Loop-local control state: confined to this turn's stream, read and written by its steps in order.
    let iteration = 0
    /** The model this turn calls: the primary, until a fallback layer switches it for the rest of the turn. */
    let model = options.model
    let finished: TurnEvent | undefined
    let phase: "streaming" | "tools" = "streaming"
    let lastMessage: AssistantMessage | undefined
    let pending: { readonly uses: ReadonlyArray<ToolUseBlock>; readonly results: ReadonlyMap<string, ToolResultBlock> } | undefined
    let repaired: UserMessage | undefined

    const complete = (reason: TerminalReason, error?: ModelError, message?: string): TurnEvent => {
      finished = TurnEvent.TurnComplete({ reason, iterations: iteration, lastMessage, error, message })
      return finished
    }

    const compactor = Option.getOrUndefined(yield* Effect.serviceOption(Compactor))
    /** Whether this turn already compacted reactively since its last successful model call. */
    let reactiveTried = false
    /** Continuations after answers cut by `max_tokens`, in this turn. */
    let continuations = 0
    const stageContext = (): StageContext => ({
      model,
      iteration,
      sessionId: session.sessionId,
      maxTokens: options.maxTokens,
      system: options.system as StageContext["system"],
      cwd: options.cwd,
      tools: registry.definitions
    })

    /** Answers every tool call still open, with its result if it finished and "interrupted" if not. */
    const repair = Effect.suspend(() => {
      if (pending === undefined) return Effect.void
      const { results, uses } = pending
      pending = undefined
      repaired = new UserMessage({ content: uses.map((u) => results.get(u.id) ?? interruptedResult(u.id)) })
      const message = repaired
      return Ref.update(session.messages, (ms) => [...ms, message])
    })

    /**
     * The tool calls of `result`, already added to `executor` (most started while the answer
     * streamed): progress and subagent messages as they happen, then the results in `tool_use` order.
     */
    const runTools = (result: Accumulator.Result, executor: ToolRuntime.Executor): Stream.Stream<TurnEvent> => {
      const uses = result.message.toolUses
      phase = "tools"
      pending = { uses, results: executor.finished }
      const events = executor.events.pipe(Stream.filterMap((event): Option.Option<TurnEvent> => {
        switch (event._tag) {
          case "Result":
            return Option.none()
          case "Progress":
            return Option.some(TurnEvent.ToolProgress({
              toolUseId: event.toolUseId,
              toolName: event.toolName,
              elapsedSeconds: event.elapsedSeconds
            }))
          case "Message":
            return Option.some(TurnEvent.ToolMessage({ message: event.message }))
        }
      }))
      return Stream.concat(
        events,
        Stream.fromIterableEffect(Effect.gen(function*() {
          const results = executor.finished
          const message = new UserMessage({ content: uses.map((u) => results.get(u.id) ?? interruptedResult(u.id)) })
          pending = undefined
          phase = "streaming"
          yield* Ref.update(session.messages, (ms) => [...ms, message])
          const out: Array<TurnEvent> = [TurnEvent.ToolResults({ message })]
          // The tools may have spent too (a subagent's calls count in the session's usage).
          const spent = options.budget === undefined ? undefined : yield* options.budget
          if (spent !== undefined) out.push(complete("budget_exhausted", undefined, spent))
          else if (iteration >= maxTurns) out.push(complete("max_turns"))
          return out
        }))
      )
    }

    /** Adds the time since `startedAt` to the session's API time. */
    const recordApiTime = (startedAt: number) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.update(session.apiDurationMs, (d) => d + now - startedAt))

    /**
     * Ends the turn on a spent budget. The calls of `message` are not run: each gets its result if
     * it finished while the answer streamed, else an error saying why; calls still running stop
     * when this iteration's scope closes.
     */
    const budgetSpent = (message: AssistantMessage, executor: ToolRuntime.Executor, spent: string) =>
      Effect.gen(function*() {
        const out: Array<TurnEvent> = []
        if (message.toolUses.length > 0) {
          const finished = new Map(executor.finished)
          const answered = new UserMessage({
            content: message.toolUses.map((u) =>
              finished.get(u.id) ??
                ToolRuntime.errorResult(u.id, `${spent}: the turn ended before this tool call ran to completion.`)
            )
          })
          yield* Ref.update(session.messages, (ms) => [...ms, answered])
          out.push(TurnEvent.ToolResults({ message: answered }))
        }
        out.push(complete("budget_exhausted", undefined, spent))
        return out
      })

    /** The answer whose tool calls run next, if it made any, with the executor running them. */
    let toolCalls: { readonly result: Accumulator.Result; readonly executor: ToolRuntime.Executor } | undefined

    /**
     * Once the model's answer is complete: record it, and emit it before its tools' results. Calls
     * whose blocks completed while streaming are already running; any other is added now.
     */
    const afterModel = (
      acc: Accumulator.State,
      startedAt: number,
      executor: ToolRuntime.Executor,
      started: ReadonlySet<string>
    ): Effect.Effect<Array<TurnEvent>> =>
      Effect.gen(function*() {
        yield* recordApiTime(startedAt)
        const result = Accumulator.finish(acc)
        const message = result.message
        lastMessage = message
        yield* Ref.update(session.messages, (ms) => [...ms, message])
        if (message.usage !== undefined) {
          const usage = message.usage
          yield* Ref.update(session.usage, (u) => addUsage(u, message.model ?? model, usage))
        }
        reactiveTried = false
        const assistant = TurnEvent.Assistant({ message })
        const spent = options.budget === undefined ? undefined : yield* options.budget
        if (spent !== undefined) return [assistant, ...(yield* budgetSpent(message, executor, spent))]
        if (message.toolUses.length === 0 && message.stop_reason === "max_tokens") {
          if (continuations >= MAX_CONTINUATIONS) {
            return [
              assistant,
              complete(
                "max_output_tokens",
                undefined,
                `The answer was cut at the output limit (${options.maxTokens} tokens) ${MAX_CONTINUATIONS + 1} times in a row`
              )
            ]
          }
          continuations++
          const resume = new UserMessage({ content: RESUME_PROMPT })
          yield* Ref.update(session.messages, (ms) => [...ms, resume])
          const events: Array<TurnEvent> = [assistant, TurnEvent.Continuation({ message: resume })]
          if (iteration >= maxTurns) events.push(complete("max_turns"))
          return events
        }
        if (message.toolUses.length === 0) return [assistant, complete("completed")]
        for (const block of message.toolUses) {
          if (!started.has(block.id)) executor.add({ block, malformedInput: result.malformedToolInput.get(block.id) })
        }
        executor.close()
        toolCalls = { result, executor }
        return [assistant]
      })

    const iterate: Stream.Stream<TurnEvent> = Stream.unwrap(Effect.gen(function*() {
      iteration++
      phase = "streaming"
      yield* Ref.update(session.turnCount, (n) => n + 1)
      yield* Ref.set(session.model, model)
      const history = yield* Ref.get(session.messages)
      // Stages about to do slow work (a compaction's model call) say so before they start.
      const statuses = pipeline.announce(history, stageContext())
      const call = Stream.unwrapScoped(callModel(history))
      return statuses.length === 0
        ? call
        : Stream.concat(Stream.fromIterable(statuses.map((status) => TurnEvent.Status({ status }))), call)
    }))

    /** After the API said the prompt is too long: compact hard once, then the loop makes the request again. */
    const recoverPromptTooLong = (error: ModelError): Stream.Stream<TurnEvent> => {
      if (compactor === undefined || reactiveTried) return Stream.make(complete("prompt_too_long", error))
      reactiveTried = true
      return Stream.concat(
        Stream.make(TurnEvent.Status({ status: "compacting" })),
        Stream.fromIterableEffect(Effect.gen(function*() {
          const history = yield* Ref.get(session.messages)
          const result = yield* compactor.reactive(history, stageContext())
          if (result.halt !== undefined) return [complete("prompt_too_long", error, result.halt)]
          yield* Ref.set(session.messages, result.messages)
          return [TurnEvent.StageApplied({
            report: { stage: "reactive-compact", report: result.report ?? "compacted", compaction: result.compaction }
          })]
        }))
      )
    }

    const callModel = (history: ReadonlyArray<Message>) => Effect.gen(function*() {
      const prepared = yield* pipeline.run(history, stageContext())
      if (prepared.messages !== history) yield* Ref.set(session.messages, prepared.messages)
      if (prepared.halt !== undefined) {
        const reports = prepared.reports.map((report) => TurnEvent.StageApplied({ report }))
        return Stream.fromIterable([...reports, complete("prompt_too_long", undefined, prepared.halt)])
      }
      const request: ModelRequest = {
        model,
        messages: prepared.messages,
        max_tokens: options.maxTokens,
        tools: registry.definitions,
        source: options.source ?? "foreground",
        ...(options.system !== undefined ? { system: options.system } : {}),
        ...(options.systemStableBlocks !== undefined ? { systemStableBlocks: options.systemStableBlocks } : {}),
        ...(options.params !== undefined ? { params: options.params } : {})
      }
      const startedAt = yield* Clock.currentTimeMillis
      let acc = Accumulator.make()
      // Tool calls start as their blocks complete, while the answer still streams; they run in this
      // iteration's scope, so an error or interruption before the answer is recorded stops them.
      const executor = yield* runtime.start(options.cwd)
      const started = new Set<string>()
      const events: Stream.Stream<TurnEvent, ModelError> = client.stream(request).pipe(
        Stream.mapChunks((chunk) => {
          // Indexed loops over the backing array: a chunk's iterator costs more than the work per event.
          const items = Chunk.toReadonlyArray(chunk)
          let out: Array<TurnEvent> | undefined
          let batch: Array<StreamEvent> | undefined
          let from = 0
          for (let i = 0; i < items.length; i++) {
            const item = items[i]!
            if (item.type === "ping" || item.type === "notice") {
              // The common chunk has neither: then the chunk's array itself is the batch, uncopied.
              batch ??= items.slice(from, i) as Array<StreamEvent>
              if (item.type === "notice") {
                out ??= []
                if (emitStreamEvents && batch.length > 0) out.push({ _tag: "StreamEvents", events: batch })
                batch = []
                if (item._tag === "Retracted") {
                  // The partial answer is void, and so are the calls it started.
                  acc = Accumulator.make()
                  started.clear()
                  executor.discard()
                }
                else if (item._tag === "ModelSwitched") model = item.to
                out.push(TurnEvent.Notice({ notice: item }))
              }
              from = i + 1
              continue
            }
            Accumulator.step(acc, item)
            if (item.type === "content_block_stop") {
              const block = Accumulator.completedToolUse(acc, item.index)
              if (block !== undefined && !started.has(block.id)) {
                started.add(block.id)
                executor.add({ block, malformedInput: acc.malformedToolInput.get(block.id) })
              }
            }
            if (batch !== undefined) batch.push(item)
          }
          const rest = batch ?? (items as ReadonlyArray<StreamEvent>)
          if (out === undefined) {
            return emitStreamEvents && rest.length > 0
              ? Chunk.of<TurnEvent>({ _tag: "StreamEvents", events: rest })
              : Chunk.empty<TurnEvent>()
          }
          if (emitStreamEvents && rest.length > 0) out.push({ _tag: "StreamEvents", events: rest })
          return Chunk.unsafeFromArray(out)
        })
      )
      const tools = Stream.suspend(() => {
        const calls = toolCalls
        toolCalls = undefined
        return calls === undefined ? Stream.empty : runTools(calls.result, calls.executor)
      })
      const answer = Stream.concat(
        events,
        Stream.fromIterableEffect(Effect.suspend(() => afterModel(acc, startedAt, executor, started)))
      )
        .pipe(
          Stream.catchAll((error) =>
            Stream.concat(
              Stream.execute(recordApiTime(startedAt)),
              error._tag === "PromptTooLong" ? recoverPromptTooLong(error) : Stream.make(complete("model_error", error))
            )
          )
        )
      const reports = prepared.reports.map((report) => TurnEvent.StageApplied({ report }))
      return Stream.concat(reports.length === 0 ? answer : Stream.concat(Stream.fromIterable(reports), answer), tools)
    })

    const loop = Stream.repeatEffectOption(
      Effect.suspend(() => finished === undefined ? Effect.succeed(iterate) : Effect.fail(Option.none()))
    ).pipe(
      Stream.flatten(),
      options.interrupt !== undefined ? stopWhen(options.interrupt) : (s) => s,
      Stream.ensuring(repair)
    )

    // After an interruption: the repaired tool results (if any), then the closing event.
    const aborted = Stream.suspend(() => {
      if (finished !== undefined) return Stream.empty
      const tail: Array<TurnEvent> = []
      if (repaired !== undefined) tail.push(TurnEvent.ToolResults({ message: repaired }))
      tail.push(complete(phase === "tools" ? "aborted_tools" : "aborted_streaming"))
      return Stream.fromIterable(tail)
    })
    return Stream.concat(loop, aborted)
  }))
