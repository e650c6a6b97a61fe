/**
 * The turn loop, as one `Stream` pipeline. Each iteration: prepare (the `Pipeline` of stages) →
 * model call (`ModelCall`: stream, fold, start tools) → decide (`Decide.decide`, a pure function of
 * the `LoopState` and what happened) → perform the decision (run the tools, ask the model to go on,
 * compact, or stop). It stops when the model answers without `tool_use`, when the policy's call
 * budget or the spending budget is spent, when the model call fails, or when interrupted; whichever
 * way it stops, every `tool_use` in the conversation has its `tool_result`.
 *
 * The control state is one `LoopState` in a `Ref`, changed only by its transitions and by the
 * decisions. Each step's follow-up is built from the decision it returns, so no step reads what
 * another left in a variable.
 *
 * Iterations are produced by `Stream.repeatEffectOption` and flattened, so the pipeline does not
 * deepen with the number of iterations: per-event cost is the same on the 1st and the 100th. The
 * turn is a `keel.turn` span, each iteration a `keel.iteration` span.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { Compactor } from "../context/Compactor.js"
import { Ids } from "../ids/Ids.js"
import { type AssistantMessage, type Message, UserMessage } from "../message/Message.js"
import type * as Accumulator from "../model/Accumulator.js"
import { ModelClient } from "../model/ModelClient.js"
import type { ModelError } from "../model/ModelError.js"
import type { ModelRequest, QuerySource } from "../model/ModelRequest.js"
import { Permissions } from "../permission/Permissions.js"
import { SessionState } from "../session/SessionState.js"
import * as TokenUsage from "../session/TokenUsage.js"
import type { Services as ToolServices } from "../tool/Tool.js"
import { ToolRegistry } from "../tool/ToolRegistry.js"
import * as ToolRuntime from "../tool/ToolRuntime.js"
import { interruptedResult } from "../tool/ToolRuntime.js"
import * as Decide from "./Decide.js"
import * as LoopState from "./LoopState.js"
import * as ModelCall from "./ModelCall.js"
import { Pipeline } from "./Pipeline.js"
import type { StageContext } from "./Stage.js"
import { stopWhen } from "./StopWhen.js"
import { TurnEvent } from "./TurnEvent.js"
import * as TurnPolicy from "./TurnPolicy.js"

export {
  /** Continuations allowed after answers cut by `max_tokens` (see `TurnPolicy`). @category Constants */
  MAX_CONTINUATIONS,
  /** The user message that asks for a cut answer to go on (see `TurnPolicy`). @category Constants */
  RESUME_PROMPT
} from "./TurnPolicy.js"

/** Options of one turn. @category Models */
export interface Options {
  readonly model: string
  readonly maxTokens: number
  /** The most model calls in this turn; the turn ends with `max_turns` after the last one's tools. */
  readonly maxTurns?: number | undefined
  /** After an answer cut at the output limit (default Claude Code's: 3 continuations, `TurnPolicy.claudeCode`). */
  readonly continuation?: TurnPolicy.Continuation | undefined
  /** After the API said the prompt is too long (default Claude Code's: one reactive compaction). */
  readonly promptTooLong?: TurnPolicy.PromptTooLong | undefined
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

/** The services a turn needs (its tool calls run with them too). @category Models */
export type Requirements = ModelClient | ToolRuntime.ToolRuntime | ToolRegistry | Pipeline | Compactor | ToolServices

/** The answer to every call of `uses`: its own result if it finished, else `missing`'s. */
const answerAll = (
  uses: ReadonlyArray<{ readonly id: string }>,
  finished: ReadonlyMap<string, import("../message/Message.js").ToolResultBlock>,
  missing: (id: string) => import("../message/Message.js").ToolResultBlock
): UserMessage => new UserMessage({ content: uses.map((u) => finished.get(u.id) ?? missing(u.id)) })

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
    const compactor = yield* Compactor
    const session = yield* SessionState
    // What the iterations and tool calls run with: the turn's own services (not its caller's span).
    const services = Context.pick(SessionState, ModelClient, Pipeline, Compactor, ToolRegistry, Permissions, Ids)(
      yield* Effect.context<ToolServices>()
    )
    const emitStreamEvents = options.emitStreamEvents !== false
    const decisions: Decide.Context = {
      policy: {
        maxTurns: options.maxTurns ?? TurnPolicy.claudeCode.maxTurns,
        continuation: options.continuation ?? TurnPolicy.claudeCode.continuation,
        promptTooLong: options.promptTooLong ?? TurnPolicy.claudeCode.promptTooLong
      },
      maxTokens: options.maxTokens,
      canCompact: compactor.available
    }
    const loop = yield* Ref.make(LoopState.initial(options.model))
    const spent = options.budget ?? Effect.succeed(undefined)
    const appendMessage = (message: Message) => Ref.update(session.messages, (ms) => [...ms, message])

    /** Decides on `outcome`: the new state is kept, the step returned. */
    const decide = (outcome: Decide.Outcome) =>
      Ref.modify(loop, (state) => {
        const decision = Decide.decide(state, outcome, decisions)
        return [decision.next, decision.state]
      })

    /** The closing event, once the state says the turn is over. */
    const completion = Effect.map(Ref.get(loop), (state): ReadonlyArray<TurnEvent> => {
      const stop = state.stop
      if (stop === undefined) return []
      return [TurnEvent.TurnComplete({
        reason: stop.reason,
        iterations: state.iteration,
        lastMessage: state.lastMessage,
        error: stop.error,
        message: stop.message
      })]
    })

    const stageContext = (state: LoopState.LoopState): StageContext => ({
      model: state.model,
      iteration: state.iteration,
      sessionId: session.sessionId,
      maxTokens: options.maxTokens,
      system: options.system as StageContext["system"],
      cwd: options.cwd,
      tools: registry.definitions
    })

    /** Adds the time since `startedAt` to the session's API time. */
    const recordApiTime = (startedAt: number) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.update(session.apiDurationMs, (d) => d + now - startedAt))

    /** The calls of `uses` run (most started while the answer streamed): progress and reports, then their results. */
    const runTools = (uses: ReadonlyArray<{ readonly id: string }>, executor: ToolRuntime.Executor) =>
      Stream.concat(
        executor.events.pipe(Stream.filterMap((event): Option.Option<TurnEvent> => {
          switch (event._tag) {
            case "Result":
              return Option.none()
            case "Progress":
              return Option.some(TurnEvent.ToolProgress({
                toolUseId: event.toolUseId,
                toolName: event.toolName,
                elapsedSeconds: event.elapsedSeconds
              }))
            case "Reported":
              return Option.some(TurnEvent.ToolReported({ toolUseId: event.toolUseId, event: event.event }))
          }
        })),
        Stream.fromIterableEffect(Effect.gen(function*() {
          const message = answerAll(uses, executor.finished, interruptedResult)
          yield* appendMessage(message)
          yield* Ref.update(loop, LoopState.toolsAnswered)
          yield* decide(Decide.Outcome.ToolsAnswered({ spent: yield* spent }))
          return [TurnEvent.ToolResults({ message }), ...(yield* completion)]
        }))
      )

    /** Performs the step decided after an answer. */
    const afterAnswer = (
      next: Decide.Next,
      message: AssistantMessage,
      executor: ToolRuntime.Executor,
      started: ReadonlySet<string>,
      result: Accumulator.Result
    ): Stream.Stream<TurnEvent> =>
      Decide.Next.$match(next, {
        RunTools: () => {
          const uses = message.toolUses
          for (const block of uses) {
            if (!started.has(block.id)) executor.add({ block, malformedInput: result.malformedToolInput.get(block.id) })
          }
          executor.close()
          return Stream.unwrap(Effect.as(
            Ref.update(loop, (s) => LoopState.runningTools(s, { uses, finished: executor.finished })),
            runTools(uses, executor)
          ))
        },
        Continue: ({ prompt }) =>
          Stream.fromIterableEffect(Effect.gen(function*() {
            const resume = new UserMessage({ content: prompt })
            yield* appendMessage(resume)
            return [TurnEvent.Continuation({ message: resume }), ...(yield* completion)]
          })),
        AnswerUnrun: ({ message: why }) =>
          Stream.fromIterableEffect(Effect.gen(function*() {
            // Calls that finished while the answer streamed keep their results; the others stop
            // when this iteration's scope closes.
            const answered = answerAll(
              message.toolUses,
              new Map(executor.finished),
              (id) => ToolRuntime.errorResult(id, `${why}: the turn ended before this tool call ran to completion.`)
            )
            yield* appendMessage(answered)
            return [TurnEvent.ToolResults({ message: answered }), ...(yield* completion)]
          })),
        Stop: () => Stream.fromIterableEffect(completion),
        CallModel: () => Stream.empty,
        Compact: () => Stream.empty
      })

    /** Once the answer is complete: record it, decide, and emit it before whatever follows. */
    const answered = (call: ModelCall.ModelCall, startedAt: number, executor: ToolRuntime.Executor) =>
      Stream.unwrap(Effect.gen(function*() {
        yield* recordApiTime(startedAt)
        const { model, result } = call.answer()
        const message = result.message
        yield* appendMessage(message)
        if (message.usage !== undefined) {
          const usage = TokenUsage.fromResponse(message.usage)
          yield* Ref.update(session.usage, (u) => TokenUsage.addTo(u, message.model ?? model, usage))
        }
        const next = yield* decide(Decide.Outcome.Answered({ message, model, spent: yield* spent }))
        return Stream.concat(
          Stream.make(TurnEvent.Assistant({ message })),
          afterAnswer(next, message, executor, call.started, result)
        )
      }))

    /** After the API said the prompt is too long: compact hard, then the loop makes the request again. */
    const compactNow = (error: ModelError): Stream.Stream<TurnEvent> =>
      Stream.concat(
        Stream.make(TurnEvent.Status({ status: "compacting" })),
        Stream.fromIterableEffect(Effect.gen(function*() {
          const history = yield* Ref.get(session.messages)
          const compacted = yield* compactor.reactive(history, stageContext(yield* Ref.get(loop)))
          if (compacted.halt !== undefined) {
            yield* decide(Decide.Outcome.CompactionFailed({ error, message: compacted.halt }))
            return yield* completion
          }
          yield* Ref.set(session.messages, compacted.messages)
          yield* Effect.logDebug("compacted the conversation after the API said the prompt is too long")
          yield* decide(Decide.Outcome.Compacted())
          return [TurnEvent.StageApplied({
            report: { stage: "reactive-compact", report: compacted.report ?? "compacted", compaction: compacted.compaction }
          })]
        }))
      )

    /** A failed model call: record its time, decide (end the turn, or compact and call again). */
    const failed = (error: ModelError, model: string, startedAt: number): Stream.Stream<TurnEvent> =>
      Stream.unwrap(Effect.gen(function*() {
        yield* recordApiTime(startedAt)
        const next = yield* decide(Decide.Outcome.ModelFailed({ error, model }))
        return next._tag === "Compact" ? compactNow(error) : Stream.fromIterableEffect(completion)
      }))

    /** One iteration after the pipeline: the model call, its answer or failure, and what follows. */
    const callModel = (history: ReadonlyArray<Message>, state: LoopState.LoopState) => Effect.gen(function*() {
      const prepared = yield* pipeline.run(history, stageContext(state))
      if (prepared.messages !== history) yield* Ref.set(session.messages, prepared.messages)
      const reports = prepared.reports.map((report) => TurnEvent.StageApplied({ report }))
      if (prepared.halt !== undefined) {
        yield* decide(Decide.Outcome.Halted({ message: prepared.halt }))
        return Stream.fromIterable([...reports, ...(yield* completion)])
      }
      const request: ModelRequest = {
        model: state.model,
        messages: prepared.messages,
        max_tokens: options.maxTokens,
        tools: registry.definitions,
        source: options.source ?? "foreground",
        ...(options.system !== undefined ? { system: options.system } : {}),
        ...(options.systemStableBlocks !== undefined ? { systemStableBlocks: options.systemStableBlocks } : {}),
        ...(options.params !== undefined ? { params: options.params } : {})
      }
      const startedAt = yield* Clock.currentTimeMillis
      // Tool calls start as their blocks complete, while the answer still streams; they run in this
      // iteration's scope, so an error or interruption before the answer is recorded stops them.
      const executor = yield* runtime.start(options.cwd)
      const call = ModelCall.make(client, request, executor, { emitStreamEvents, iteration: state.iteration })
      const answer = Stream.concat(call.events, answered(call, startedAt, executor)).pipe(
        Stream.catchAll((error) => failed(error, call.model(), startedAt))
      )
      return reports.length === 0 ? answer : Stream.concat(Stream.fromIterable(reports), answer)
    })

    const iterate: Stream.Stream<TurnEvent> = Stream.unwrap(Effect.gen(function*() {
      const state = yield* Ref.updateAndGet(loop, LoopState.startIteration)
      yield* Ref.update(session.turnCount, (n) => n + 1)
      yield* Ref.set(session.model, state.model)
      const history = yield* Ref.get(session.messages)
      // Stages about to do slow work (a compaction's model call) say so before they start.
      const statuses = pipeline.announce(history, stageContext(state))
      const call = Stream.unwrapScoped(callModel(history, state))
      const iteration = statuses.length === 0
        ? call
        : Stream.concat(Stream.fromIterable(statuses.map((status) => TurnEvent.Status({ status }))), call)
      return iteration.pipe(
        Stream.withSpan("keel.iteration", { attributes: { "keel.iteration": state.iteration } }),
        Stream.provideSomeContext(services)
      )
    }))

    /** Answers every tool call still open, with its result if it finished and "interrupted" if not. */
    const repair = Effect.flatMap(Ref.get(loop), (state) => {
      if (state.inFlight === undefined) return Effect.succeed(undefined)
      const message = answerAll(state.inFlight.uses, state.inFlight.finished, interruptedResult)
      return Effect.as(Effect.zipRight(appendMessage(message), Ref.update(loop, LoopState.toolsAnswered)), message)
    })
    const repaired = yield* Ref.make<UserMessage | undefined>(undefined)

    const loopStream = Stream.repeatEffectOption(
      Effect.flatMap(Ref.get(loop), (state) => state.stop === undefined ? Effect.succeed(iterate) : Effect.fail(Option.none()))
    ).pipe(
      Stream.flatten(),
      options.interrupt !== undefined ? stopWhen(options.interrupt) : (s) => s,
      Stream.ensuring(Effect.flatMap(repair, (message) => Ref.set(repaired, message)))
    )

    // After an interruption: the repaired tool results (if any), then the closing event.
    const aborted = Stream.fromIterableEffect(Effect.gen(function*() {
      const state = yield* Ref.get(loop)
      if (state.stop !== undefined) return []
      const tail: Array<TurnEvent> = []
      const message = yield* Ref.get(repaired)
      if (message !== undefined) tail.push(TurnEvent.ToolResults({ message }))
      yield* Ref.update(loop, (s) => LoopState.stopped(s, { reason: LoopState.interruptedReason(s) }))
      return [...tail, ...(yield* completion)]
    }))
    return Stream.concat(loopStream, aborted).pipe(
      Stream.withSpan("keel.turn", { attributes: { "keel.session.id": session.sessionId, "keel.model": options.model } })
    )
  }))
