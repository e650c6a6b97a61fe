/**
 * The steps of a turn, each a function of the `Turn` and what it is given: an iteration (prepare,
 * call the model), what follows an answer (the step `Decide` chose: run the tools, ask the model to
 * go on, answer the calls unrun, stop), what follows a failed call (stop, or compact and call
 * again), and the repair of tool calls left open by an interruption. Each step's follow-up is built
 * from the decision it returns.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Match from "effect/Match"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import * as CheapStream from "../internal/cheapStream.js"
import { type AssistantMessage, type Message, type ToolResultBlock, type ToolUseBlock, UserMessage } from "../message/Message.js"
import { Hooks } from "../hook/Hooks.js"
import * as SessionHooks from "../hook/SessionHooks.js"
import type * as Accumulator from "../model/Accumulator.js"
import type { ModelError } from "../model/ModelError.js"
import type { ModelRequest } from "../model/ModelRequest.js"
import * as NestedMemory from "../memory/NestedMemory.js"
import * as StructuredOutput from "../output/StructuredOutput.js"
import * as TokenUsage from "../session/TokenUsage.js"
import * as ToolRuntime from "../tool/ToolRuntime.js"
import * as Decide from "./Decide.js"
import * as LoopState from "./LoopState.js"
import * as ModelCall from "./ModelCall.js"
import { answerAll, append, completion, decide, recordApiTime, requestShape, stageContext, type Turn } from "./Turn.js"
import { TurnEvent } from "./TurnEvent.js"

/**
 * The round's results, followed by the nested memory its calls that ran (not denied) brought in:
 * the instruction files of folders below the working directory they touched first.
 */
const withMemory = (turn: Turn, uses: ReadonlyArray<ToolUseBlock>, results: UserMessage) =>
  !uses.some((u) => NestedMemory.FILE_TOOLS.has(u.name)) ? Effect.succeed(results) : Effect.gen(function*() {
    const denied = new Set((yield* Ref.get(turn.session.permissionDenials)).map((d) => d.tool_use_id))
    const memory = yield* turn.memory.attach({
      sessionId: turn.session.sessionId,
      cwd: turn.options.cwd,
      calls: uses.filter((u) => !denied.has(u.id)),
      history: Ref.get(turn.session.messages)
    })
    if (memory.length === 0 || typeof results.content === "string") return results
    // Blocks the kernel built already: no Schema check again.
    return new UserMessage({ content: [...results.content, ...memory] }, true)
  })

/** The results of the executor's calls as they finish, over the answers `answered` gave before it ran. */
const answersOf = (executor: ToolRuntime.Executor, answered: ReadonlyMap<string, ToolResultBlock> | undefined): LoopState.Answers =>
  answered === undefined ? executor.finished : { get: (id) => answered.get(id) ?? executor.finished.get(id) }

/** The calls of `uses` run (most started while the answer streamed): progress and reports, then their results. */
const runTools = (
  turn: Turn,
  uses: ReadonlyArray<ToolUseBlock>,
  executor: ToolRuntime.Executor,
  answered?: ReadonlyMap<string, ToolResultBlock>
) =>
  Stream.concat(
    executor.progress.pipe(Stream.map((event): TurnEvent =>
      event._tag === "Progress"
        ? TurnEvent.ToolProgress({ toolUseId: event.toolUseId, toolName: event.toolName, elapsedSeconds: event.elapsedSeconds })
        : TurnEvent.ToolReported({ toolUseId: event.toolUseId, event: event.event })
    )),
    CheapStream.fromArrayEffect(Effect.gen(function*() {
      const message = yield* withMemory(turn, uses, answerAll(uses, answersOf(executor, answered), ToolRuntime.interruptedResult))
      yield* append(turn, message)
      yield* Ref.update(turn.loop, LoopState.toolsAnswered)
      const policy = turn.options.structuredOutput
      const structured = policy === undefined ? undefined : StructuredOutput.roundOf(policy, uses, message)
      yield* decide(turn, Decide.Outcome.ToolsAnswered({ spent: yield* turn.spent, structured }))
      return [TurnEvent.ToolResults({ message }), ...(yield* completion(turn))]
    }))
  )

/**
 * Starts the calls of an answer whose step is to run them: those whose blocks completed while
 * streaming already run, any other is added now.
 */
const startTools = (
  turn: Turn,
  message: AssistantMessage,
  executor: ToolRuntime.Executor,
  call: ModelCall.ModelCall,
  result: Accumulator.Result
) =>
  Effect.suspend(() => {
    const uses = message.toolUses
    for (const block of uses) {
      if (!call.started.has(block.id)) executor.add({ block, malformedInput: result.malformedToolInput.get(block.id) })
    }
    executor.close()
    return Effect.as(
      Ref.update(turn.loop, (s) => LoopState.runningTools(s, { uses, finished: executor.finished })),
      runTools(turn, uses, executor)
    )
  })

/** Performs a step decided after an answer that runs no tools: the events it ends the iteration with. */
const afterAnswer = (
  turn: Turn,
  next: Exclude<Decide.Next, { readonly _tag: "RunTools" }>,
  message: AssistantMessage,
  executor: ToolRuntime.Executor
): Effect.Effect<ReadonlyArray<TurnEvent>> =>
  Match.valueTags(next, {
    Continue: ({ prompt }) =>
      Effect.gen(function*() {
        const resume = new UserMessage({ content: prompt })
        yield* append(turn, resume)
        return [TurnEvent.Continuation({ message: resume }), ...(yield* completion(turn))]
      }),
    AnswerUnrun: ({ message: why }) =>
      Effect.gen(function*() {
        // Calls that finished while the answer streamed keep their results; the others stop when
        // this iteration's scope closes.
        const answered = answerAll(
          message.toolUses,
          new Map(executor.finished),
          (id) => ToolRuntime.errorResult(id, `${why}: the turn ended before this tool call ran to completion.`)
        )
        yield* append(turn, answered)
        return [TurnEvent.ToolResults({ message: answered }), ...(yield* completion(turn))]
      }),
    Stop: () => stopped(turn, message),
    CallModel: () => Effect.succeed([]),
    Compact: () => Effect.succeed([])
  })

/**
 * The model ended the turn: the turn's stop check may make it go on (a Stop hook's block) with its
 * user message, unless the call budget is spent; else the closing event.
 */
const stopped = (turn: Turn, message: AssistantMessage): Effect.Effect<ReadonlyArray<TurnEvent>> =>
  Effect.gen(function*() {
    const state = yield* Ref.get(turn.loop)
    const onStop = turn.options.onStop
    if (onStop === undefined || state.stop?.reason !== "completed" || state.iteration >= turn.decisions.policy.maxTurns) {
      return yield* completion(turn)
    }
    const prompt = yield* onStop(message)
    if (prompt === undefined) return yield* completion(turn)
    const resume = new UserMessage({ content: prompt })
    yield* append(turn, resume)
    yield* Ref.update(turn.loop, (s) => ({ ...s, stop: undefined }))
    return [TurnEvent.Continuation({ message: resume })]
  })

/**
 * Once the answer is complete: record it, decide, and emit it before whatever follows (its tool
 * calls' events, or the events the decided step ends the iteration with).
 */
const answered = (turn: Turn, call: ModelCall.ModelCall, startedAt: number, executor: ToolRuntime.Executor) =>
  CheapStream.unwrap(Effect.gen(function*() {
    yield* recordApiTime(turn, startedAt)
    const { model, result } = call.answer()
    const message = result.message
    yield* append(turn, message)
    if (message.usage !== undefined) {
      const usage = TokenUsage.fromResponse(message.usage)
      yield* Ref.update(turn.session.usage, (u) => TokenUsage.addTo(u, message.model ?? model, usage))
    }
    const next = yield* decide(turn, Decide.Outcome.Answered({ message, model, spent: yield* turn.spent }))
    const assistant = TurnEvent.Assistant({ message })
    if (next._tag === "RunTools") {
      return Stream.concat(CheapStream.of(assistant), yield* startTools(turn, message, executor, call, result))
    }
    // The other steps end the iteration with a few events: one chunk, no stream of their own.
    return CheapStream.fromArray([assistant, ...(yield* afterAnswer(turn, next, message, executor))])
  }))

/** PreCompact (`auto`): a compaction the turn starts on its own is about to run. */
const preCompactAuto = (turn: Turn): Effect.Effect<void> =>
  SessionHooks.preCompact(
    Context.get(turn.services, Hooks),
    { sessionId: turn.session.sessionId, cwd: turn.options.cwd },
    "auto",
    undefined
  )

/** After the API said the prompt is too long: compact hard, then the loop makes the request again. */
const compactNow = (turn: Turn, error: ModelError): Stream.Stream<TurnEvent> =>
  Stream.concat(
    CheapStream.of(TurnEvent.Status({ status: "compacting" })),
    CheapStream.fromArrayEffect(Effect.gen(function*() {
      const history = yield* Ref.get(turn.session.messages)
      yield* preCompactAuto(turn)
      const compacted = yield* turn.compactor.reactive(history, stageContext(turn, yield* Ref.get(turn.loop)))
      if (compacted.halt !== undefined) {
        yield* decide(turn, Decide.Outcome.CompactionFailed({ error, message: compacted.halt }))
        const failure = TurnEvent.StageApplied({
          report: { stage: "reactive-compact", report: compacted.halt, compactionError: compacted.compactionError ?? compacted.halt }
        })
        return [failure, ...(yield* completion(turn))]
      }
      yield* Ref.set(turn.session.messages, compacted.messages)
      yield* Effect.logDebug("compacted the conversation after the API said the prompt is too long")
      yield* decide(turn, Decide.Outcome.Compacted())
      return [TurnEvent.StageApplied({
        report: { stage: "reactive-compact", report: compacted.report ?? "compacted", compaction: compacted.compaction }
      })]
    }))
  )

/** A failed model call: record its time, decide (end the turn, or compact and call again). */
const failed = (turn: Turn, error: ModelError, model: string, startedAt: number): Stream.Stream<TurnEvent> =>
  CheapStream.unwrap(Effect.gen(function*() {
    yield* recordApiTime(turn, startedAt)
    const next = yield* decide(turn, Decide.Outcome.ModelFailed({ error, model }))
    return next._tag === "Compact" ? compactNow(turn, error) : CheapStream.fromArrayEffect(completion(turn))
  }))

/** The request of this iteration, for the prepared conversation. */
const requestFor = (turn: Turn, state: LoopState.LoopState, messages: ReadonlyArray<Message>): ModelRequest => ({
  ...requestShape(turn, state),
  messages,
  source: turn.options.source ?? "foreground"
})

/**
 * One iteration after the announcements: the pipeline, the model call, its answer or failure, and
 * what follows. The iteration's span is the parent of its stages', its model call's and its tool
 * calls' spans; its scope is where the tool calls run.
 */
const callModel = (
  turn: Turn,
  history: ReadonlyArray<Message>,
  state: LoopState.LoopState,
  span: Tracer.Span,
  scope: Scope.Scope
) =>
  Effect.gen(function*() {
    const prepared = yield* turn.pipeline.run(history, stageContext(turn, state)).pipe(Effect.withParentSpan(span))
    if (prepared.messages !== history) yield* Ref.set(turn.session.messages, prepared.messages)
    const reports = prepared.reports.map((report) => TurnEvent.StageApplied({ report }))
    if (prepared.halt !== undefined) {
      yield* decide(turn, Decide.Outcome.Halted({ message: prepared.halt }))
      return CheapStream.fromArray([...reports, ...(yield* completion(turn))])
    }
    const startedAt = yield* Clock.currentTimeMillis
    // Tool calls start as their blocks complete, while the answer still streams; they run in this
    // iteration's scope, so an error or interruption before the answer is recorded stops them.
    // One context for the three (a provide each would merge three times).
    const executor = yield* turn.runtime.start(turn.options.cwd).pipe(
      Effect.provide(Context.add(Context.add(turn.services, Tracer.ParentSpan, span), Scope.Scope, scope))
    )
    const call = ModelCall.make(turn.client, requestFor(turn, state, prepared.messages), executor, {
      emitStreamEvents: turn.options.emitStreamEvents !== false,
      iteration: state.iteration,
      parent: span
    })
    const answer = Stream.concat(call.events, answered(turn, call, startedAt, executor)).pipe(
      Stream.catchAll((error) => failed(turn, error, call.model(), startedAt))
    )
    return reports.length === 0 ? answer : Stream.concat(CheapStream.fromArray(reports), answer)
  })

/**
 * The next iteration: the model call begins (a `keel.iteration` span, ended with the iteration's
 * scope), after the statuses of the stages about to do slow work (a compaction's model call).
 *
 * @category Steps
 */
export const iterate = (turn: Turn): Stream.Stream<TurnEvent> =>
  CheapStream.unwrapScoped(Effect.gen(function*() {
    const state = yield* Ref.updateAndGet(turn.loop, LoopState.startIteration)
    const span = yield* Effect.makeSpanScoped("keel.iteration", {
      captureStackTrace: false,
      parent: turn.span,
      attributes: { "keel.iteration": state.iteration }
    })
    const scope = yield* Effect.scope
    yield* Ref.update(turn.session.turnCount, (n) => n + 1)
    yield* Ref.set(turn.session.model, state.model)
    yield* Ref.set(turn.session.thinking, turn.options.thinking)
    const history = yield* Ref.get(turn.session.messages)
    const statuses = turn.pipeline.announce(history, stageContext(turn, state))
    // A stage about to compact: PreCompact's hooks first.
    if (statuses.includes("compacting")) yield* preCompactAuto(turn)
    if (statuses.length === 0) return yield* callModel(turn, history, state, span, scope)
    // The pipeline runs when the statuses are out: a compaction's status shows before it starts.
    return Stream.concat(
      CheapStream.fromArray(statuses.map((status) => TurnEvent.Status({ status }))),
      CheapStream.unwrap(callModel(turn, history, state, span, scope))
    )
  }))

/**
 * The first step of a turn resumed after a restart: the unanswered calls of the last answer run
 * (asking for permission again, which takes up the restored pending action), except those
 * `answered` already (a crash's finished calls keep their recorded results), then the turn goes on
 * as after any tool round.
 *
 * @category Steps
 */
export const resumeTools = (
  turn: Turn,
  uses: ReadonlyArray<ToolUseBlock>,
  answered?: ReadonlyMap<string, ToolResultBlock>
): Stream.Stream<TurnEvent> =>
  CheapStream.unwrapScoped(Effect.gen(function*() {
    const executor = yield* turn.runtime.start(turn.options.cwd).pipe(
      Effect.withParentSpan(turn.span),
      Effect.provide(turn.services)
    )
    for (const block of uses) if (answered?.has(block.id) !== true) executor.add({ block })
    executor.close()
    // An interruption answers the calls that ran as usual, and keeps the answers given.
    yield* Ref.update(turn.loop, (s) => LoopState.runningTools(s, { uses, finished: answersOf(executor, answered) }))
    return runTools(turn, uses, executor, answered)
  }))

/**
 * Answers every tool call still open (its result if it finished, "interrupted" if not), and returns
 * that message; nothing when no call was open.
 *
 * @category Steps
 */
export const repair = (turn: Turn): Effect.Effect<UserMessage | undefined> =>
  Effect.flatMap(Ref.get(turn.loop), (state) => {
    if (state.inFlight === undefined) return Effect.succeed(undefined)
    const message = answerAll(state.inFlight.uses, state.inFlight.finished, ToolRuntime.interruptedResult)
    return Effect.as(Effect.zipRight(append(turn, message), Ref.update(turn.loop, LoopState.toolsAnswered)), message)
  })
