/**
 * What the steps of one turn share: its options, its services, its `LoopState` (one `Ref`), and the
 * few operations every step uses: decide on an outcome, emit the closing event, describe the request
 * to a stage, add a message to the conversation, count API time.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Tracer from "effect/Tracer"
import type { Compactor } from "../context/Compactor.js"
import { type AssistantMessage, type Message, type ToolResultBlock, type ToolUseBlock, UserMessage } from "../message/Message.js"
import type * as NestedMemory from "../memory/NestedMemory.js"
import type { ModelClient } from "../model/ModelClient.js"
import type { ModelRequest, QuerySource } from "../model/ModelRequest.js"
import type * as Thinking from "../model/Thinking.js"
import type * as StructuredOutput from "../output/StructuredOutput.js"
import type { SessionState } from "../session/SessionState.js"
import type { Services as ToolServices } from "../tool/Tool.js"
import type { ToolRegistry } from "../tool/ToolRegistry.js"
import type { ToolRuntime } from "../tool/ToolRuntime.js"
import * as Decide from "./Decide.js"
import type * as LoopState from "./LoopState.js"
import type { Pipeline } from "./Pipeline.js"
import type { RequestShape, StageContext } from "./Stage.js"
import { TurnEvent } from "./TurnEvent.js"
import type * as TurnPolicy from "./TurnPolicy.js"

/** Options of one turn. @category Models */
export interface Options {
  readonly model: string
  /** The `max_tokens` of a request to `model`. */
  readonly maxTokens: number
  /**
   * The `max_tokens` of a request to any model (a fallback the turn switched to): each model's
   * default unless the user set one (see `ModelCapabilities.maxTokensFor`). Absent: `maxTokens`.
   */
  readonly maxTokensFor?: ((model: string) => number) | undefined
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
  /** Thinking and effort, resolved per model at each request (see `Thinking`); absent: no thinking parameters. */
  readonly thinking?: Thinking.Setting | undefined
  /**
   * When this effect completes, the turn stops: the model stream and running tools are interrupted.
   * Give a `Deferred` to have a stop that came before the turn started seen before anything runs
   * (it is then also looked at before each pull; any other effect is only waited on).
   */
  readonly interrupt?: Effect.Effect<void> | undefined
  /** The session's transcript file, when it is written (a compaction points the model at it). */
  readonly transcriptPath?: string | undefined
  /** Emit raw events as `StreamEvents` batches (default true). */
  readonly emitStreamEvents?: boolean | undefined
  /**
   * The tool calls of the conversation's last answer that were left unanswered (a restart cut the
   * turn while one waited for permission): the turn runs them first, then goes on as usual. The
   * conversation then ends with that answer, not with a user message.
   */
  readonly pendingTools?: ReadonlyArray<ToolUseBlock> | undefined
  /**
   * Answers some of `pendingTools` already have, by call id (a crash's finished calls, from the
   * session's journal: see `DurableTurn`): those calls keep them and do not run.
   */
  readonly answeredTools?: ReadonlyMap<string, ToolResultBlock> | undefined
  /**
   * A spending check, run after each model response (once its usage is recorded) and after each
   * round of tool results: when it yields a message, the turn ends with `budget_exhausted`. Tool
   * calls of the response that crossed the budget are not run (as in Claude Code, which stops
   * right after that response): each is answered with an error result carrying the message, or
   * with its own result if it had already finished while the answer streamed.
   */
  readonly budget?: Effect.Effect<string | undefined> | undefined
  /**
   * The structured output the turn must give (its `StructuredOutput` tool must be in the registry):
   * the turn ends once a call of it is accepted, and after too many answers without one.
   */
  readonly structuredOutput?: StructuredOutput.Policy | undefined
  /**
   * Asked when the model ends the turn (an answer without tool calls): a user message to go on
   * with instead (a Stop hook that blocks), or `undefined` to end. It bounds itself; the turn's
   * call budget still applies.
   */
  readonly onStop?: ((last: AssistantMessage) => Effect.Effect<string | undefined>) | undefined
}

/** One turn under way. @category Models */
export interface Turn {
  readonly options: Options
  readonly client: ModelClient["Type"]
  readonly runtime: ToolRuntime["Type"]
  readonly registry: ToolRegistry["Type"]
  readonly pipeline: Pipeline["Type"]
  readonly compactor: Compactor["Type"]
  readonly session: SessionState["Type"]
  /** The instruction files of folders below the working directory, sent once a tool touches them. */
  readonly memory: NestedMemory.Service
  /** What the tool calls run with: the turn's own services. */
  readonly services: Context.Context<ToolServices>
  /** The turn's `keel.turn` span: the parent of its iterations' spans (given, not provided: see `TurnSteps.iterate`). */
  readonly span: Tracer.Span
  /** What the decisions depend on besides the state. */
  readonly decisions: Decide.Context
  /** The control state. */
  readonly loop: Ref.Ref<LoopState.LoopState>
  /** The spending check (never spent without one). */
  readonly spent: Effect.Effect<string | undefined>
}

/** Decides on `outcome`: the new state is kept, the step returned. @category Steps */
export const decide = (turn: Turn, outcome: Decide.Outcome): Effect.Effect<Decide.Next> =>
  Ref.modify(turn.loop, (state) => {
    const decision = Decide.decide(state, outcome, turn.decisions)
    return [decision.next, decision.state]
  })

/** The closing event, once the state says the turn is over (else nothing). @category Steps */
export const completion = (turn: Turn): Effect.Effect<ReadonlyArray<TurnEvent>> =>
  Effect.map(Ref.get(turn.loop), (state): ReadonlyArray<TurnEvent> => {
    const stop = state.stop
    if (stop === undefined) return []
    return [TurnEvent.TurnComplete({
      reason: stop.reason,
      iterations: state.iteration,
      lastMessage: state.lastMessage,
      error: stop.error,
      message: stop.message,
      ...(stop.structuredOutput !== undefined ? { structuredOutput: stop.structuredOutput } : {})
    })]
  })

/** The request of the current call, without its messages: what every request of the turn shares. @category Steps */
export const requestShape = (turn: Turn, state: LoopState.LoopState): RequestShape => {
  const { options } = turn
  return {
    model: state.model,
    max_tokens: maxTokensOf(turn, state.model),
    ...(options.maxTokensFor !== undefined ? { maxTokensFor: options.maxTokensFor } : {}),
    tools: turn.registry.definitions,
    ...(options.system !== undefined ? { system: options.system } : {}),
    ...(options.systemStableBlocks !== undefined ? { systemStableBlocks: options.systemStableBlocks } : {}),
    ...(options.params !== undefined ? { params: options.params } : {}),
    ...(options.thinking !== undefined ? { thinking: options.thinking } : {})
  }
}

/** What a stage knows of the request about to be made. @category Steps */
export const stageContext = (turn: Turn, state: LoopState.LoopState): StageContext => ({
  model: state.model,
  iteration: state.iteration,
  sessionId: turn.session.sessionId,
  memory: turn.session.stageMemory,
  maxTokens: maxTokensOf(turn, state.model),
  system: turn.options.system,
  cwd: turn.options.cwd,
  tools: turn.registry.definitions,
  request: requestShape(turn, state),
  transcriptPath: turn.options.transcriptPath,
  resultLimit: (name) => turn.registry.get(name)?.maxResultChars
})

/** The `max_tokens` of a request to `model` in this turn. @category Steps */
export const maxTokensOf = (turn: Turn, model: string): number =>
  turn.options.maxTokensFor?.(model) ?? turn.options.maxTokens

/** Adds `message` to the conversation. @category Steps */
export const append = (turn: Turn, message: Message): Effect.Effect<void> =>
  Ref.update(turn.session.messages, (ms) => [...ms, message])

/** Adds the time since `startedAt` to the session's API time. @category Steps */
export const recordApiTime = (turn: Turn, startedAt: number): Effect.Effect<void> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.update(turn.session.apiDurationMs, (d) => d + now - startedAt))

/** The answer to every call of `uses`: its own result if it finished, else `missing`'s; its blocks are checked already. @category Steps */
export const answerAll = (
  uses: ReadonlyArray<{ readonly id: string }>,
  finished: LoopState.Answers,
  missing: (id: string) => ToolResultBlock
): UserMessage => new UserMessage({ content: uses.map((u) => finished.get(u.id) ?? missing(u.id)) }, true)
