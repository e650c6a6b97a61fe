/**
 * The turn loop's control state, as one value: which iteration it is on, which model it calls,
 * whether it is calling the model or running tools, how many continuations and reactive
 * compactions it has spent, and, once decided, why the turn stops. The loop keeps it in one `Ref`
 * and changes it only through {@link startIteration}, `Decide.decide` and the small updates here,
 * so every transition is a function of the state and what happened.
 *
 * @since 0.1.0
 */
import type { AssistantMessage, ToolResultBlock, ToolUseBlock } from "../message/Message.js"
import type { ModelError } from "../model/ModelError.js"
import * as StructuredOutput from "../output/StructuredOutput.js"
import type { TerminalReason } from "./TurnEvent.js"

/** Why the turn stops, decided. @category Models */
export interface Stop {
  readonly reason: TerminalReason
  readonly error?: ModelError | undefined
  /** For people: what happened (a spent budget, a breaker that tripped, an answer cut too often). */
  readonly message?: string | undefined
  /** The accepted `StructuredOutput` call's input, when the turn had an output schema and completed. */
  readonly structuredOutput?: unknown
}

/** The results of calls that finished, by call id (a `ReadonlyMap` is one). @category Models */
export interface Answers {
  readonly get: (id: string) => ToolResultBlock | undefined
}

/** The tool calls running or about to be answered: their blocks, and the results of those that finished. @category Models */
export interface InFlight {
  readonly uses: ReadonlyArray<ToolUseBlock>
  readonly finished: Answers
}

/** @category Models */
export interface LoopState {
  /** Model calls started in this turn (the current one's number). */
  readonly iteration: number
  /** The model calls go to: the turn's, until a fallback layer switches it for the rest of the turn. */
  readonly model: string
  /** Calling the model (and streaming its answer), or running the tools of its answer. */
  readonly phase: "model" | "tools"
  /** The last complete answer. */
  readonly lastMessage: AssistantMessage | undefined
  /** Continuations after answers cut by `max_tokens`, this turn. */
  readonly continuations: number
  /** Reactive compactions since the last successful model call. */
  readonly compactions: number
  /** The tool calls of the last answer until their results are in the conversation. */
  readonly inFlight: InFlight | undefined
  /** Answers that failed to give the structured output asked for, this turn (see `StructuredOutput`). */
  readonly structured: StructuredOutput.Progress
  /** Set once the turn is decided to be over. */
  readonly stop: Stop | undefined
}

/** The state before the first model call of a turn on `model`. @category Constructors */
export const initial = (model: string): LoopState => ({
  iteration: 0,
  model,
  phase: "model",
  lastMessage: undefined,
  continuations: 0,
  compactions: 0,
  inFlight: undefined,
  structured: StructuredOutput.initial,
  stop: undefined
})

/** The next model call begins. @category Transitions */
export const startIteration = (state: LoopState): LoopState => ({ ...state, iteration: state.iteration + 1, phase: "model" })

/** The answer's tool calls run (their results are not in the conversation yet). @category Transitions */
export const runningTools = (state: LoopState, inFlight: InFlight): LoopState => ({ ...state, phase: "tools", inFlight })

/** The tool calls' results are in the conversation. @category Transitions */
export const toolsAnswered = (state: LoopState): LoopState => ({ ...state, inFlight: undefined })

/** The turn stops for `stop` (the first decision to stop wins). @category Transitions */
export const stopped = (state: LoopState, stop: Stop): LoopState => state.stop === undefined ? { ...state, stop } : state

/**
 * Why a turn that was interrupted stopped: while the model streamed, or while tools ran.
 *
 * @category Accessors
 */
export const interruptedReason = (state: LoopState): TerminalReason =>
  state.phase === "tools" ? "aborted_tools" : "aborted_streaming"
