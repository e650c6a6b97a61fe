/**
 * The turn loop, as one `Stream` pipeline. Each iteration: prepare (the `Pipeline` of stages) →
 * model call (`ModelCall`: stream, fold, start tools) → decide (`Decide.decide`, a pure function of
 * the `LoopState` and what happened) → perform the decision (run the tools, ask the model to go on,
 * compact, or stop): see `TurnSteps`. It stops when the model answers without `tool_use`, when the
 * policy's call budget or the spending budget is spent, when the model call fails, or when
 * interrupted; whichever way it stops, every `tool_use` in the conversation has its `tool_result`.
 *
 * The control state is one `LoopState` in a `Ref`, changed only by its transitions and by the
 * decisions. Iterations are produced one after the other (`CheapStream.repeat`), so the pipeline
 * does not deepen with the number of iterations: per-event cost is the same on the 1st and the
 * 100th. The turn is a `keel.turn` span, each iteration a `keel.iteration` span, each made with its
 * parent named: none is provided to a whole stream, which would cost every effect of it a provide.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as CheapStream from "../internal/cheapStream.js"
import { Compactor } from "../context/Compactor.js"
import { Hooks } from "../hook/Hooks.js"
import { Ids } from "../ids/Ids.js"
import { NestedMemory } from "../memory/NestedMemory.js"
import type { UserMessage } from "../message/Message.js"
import { ModelClient } from "../model/ModelClient.js"
import { Permissions } from "../permission/Permissions.js"
import { SessionState } from "../session/SessionState.js"
import type { Services as ToolServices } from "../tool/Tool.js"
import { ToolRegistry } from "../tool/ToolRegistry.js"
import * as ToolRuntime from "../tool/ToolRuntime.js"
import * as LoopState from "./LoopState.js"
import { Pipeline } from "./Pipeline.js"
import { stopWhen } from "./StopWhen.js"
import { completion, type Options, type Turn } from "./Turn.js"
import type { TurnEvent } from "./TurnEvent.js"
import * as TurnPolicy from "./TurnPolicy.js"
import { iterate, repair, resumeTools } from "./TurnSteps.js"

export type { Options } from "./Turn.js"
export {
  /** Continuations allowed after answers cut by `max_tokens` (see `TurnPolicy`). @category Constants */
  MAX_CONTINUATIONS,
  /** The user message that asks for a cut answer to go on (see `TurnPolicy`). @category Constants */
  RESUME_PROMPT
} from "./TurnPolicy.js"

/** The services a turn needs (its tool calls run with them too). @category Models */
export type Requirements = ModelClient | ToolRuntime.ToolRuntime | ToolRegistry | Pipeline | Compactor | ToolServices

/** The turn's services and state, from its context, and its span (ended with the scope). */
const make = (options: Options): Effect.Effect<Turn, never, Requirements | Scope.Scope> =>
  Effect.gen(function*() {
    const compactor = yield* Compactor
    const session = yield* SessionState
    return {
      options,
      client: yield* ModelClient,
      runtime: yield* ToolRuntime.ToolRuntime,
      registry: yield* ToolRegistry,
      pipeline: yield* Pipeline,
      compactor,
      session,
      memory: yield* NestedMemory,
      services: Context.pick(SessionState, ModelClient, Pipeline, Compactor, ToolRegistry, Permissions, Ids, Hooks)(
        yield* Effect.context<ToolServices>()
      ),
      decisions: {
        policy: {
          maxTurns: options.maxTurns ?? TurnPolicy.claudeCode.maxTurns,
          continuation: options.continuation ?? TurnPolicy.claudeCode.continuation,
          promptTooLong: options.promptTooLong ?? TurnPolicy.claudeCode.promptTooLong
        },
        maxTokens: options.maxTokens,
        maxTokensFor: options.maxTokensFor,
        canCompact: compactor.available,
        structuredOutput: options.structuredOutput
      },
      loop: yield* Ref.make(LoopState.initial(options.model)),
      spent: options.budget ?? Effect.succeed(undefined),
      span: yield* Effect.makeSpanScoped("keel.turn", {
        captureStackTrace: false,
        attributes: { "keel.session.id": session.sessionId, "keel.model": options.model }
      })
    }
  })

/**
 * One turn on the session's conversation (which must end with the user's message), as a stream of
 * `TurnEvent`s; the last is always `TurnComplete`, unless the consumer itself stops pulling, in
 * which case the conversation is still left valid. The services are read here, once: the stream
 * needs none of its own, so a caller that provides them to this effect spares the stream a
 * context (a provided stream pays a context merge for every effect it runs). The turn's span ends
 * with the scope.
 *
 * @category Constructors
 */
export const stream = (options: Options): Effect.Effect<Stream.Stream<TurnEvent>, never, Requirements | Scope.Scope> =>
  Effect.gen(function*() {
    const turn = yield* make(options)
    const repaired = yield* Ref.make<UserMessage | undefined>(undefined)
    const iterations = CheapStream.repeat(
      Effect.map(Ref.get(turn.loop), (state) => state.stop === undefined ? iterate(turn) : undefined)
    )
    const pending = options.pendingTools
    const loop = (pending === undefined || pending.length === 0 ? iterations : Stream.concat(resumeTools(turn, pending, options.answeredTools), iterations)).pipe(
      options.interrupt !== undefined ? stopWhen(options.interrupt) : (s) => s,
      Stream.ensuring(Effect.flatMap(repair(turn), (message) => Ref.set(repaired, message)))
    )
    // After an interruption: the repaired tool results (if any), then the closing event. A turn that
    // ended on its own has closed already (the common case, so it costs one effect, not a stream).
    const interrupted = Effect.gen(function*() {
      const message = yield* Ref.get(repaired)
      yield* Ref.update(turn.loop, (s) => LoopState.stopped(s, { reason: LoopState.interruptedReason(s) }))
      const results: ReadonlyArray<TurnEvent> = message === undefined ? [] : [{ _tag: "ToolResults", message }]
      return [...results, ...(yield* completion(turn))]
    })
    const aborted = CheapStream.unwrap(Effect.map(Ref.get(turn.loop), (state) =>
      state.stop !== undefined ? Stream.empty : CheapStream.fromArrayEffect(interrupted)
    ))
    return Stream.concat(loop, aborted)
  })

/**
 * Runs one turn on the session's conversation (see {@link stream}).
 *
 * @category Constructors
 */
export const run = (options: Options): Stream.Stream<TurnEvent, never, Requirements> =>
  CheapStream.unwrapScoped(stream(options))
