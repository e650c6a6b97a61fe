/**
 * The turn loop's decisions, as one pure function: given the loop's state and what just happened
 * (an answer, a round of tool results, a failed model call, a stage that halted, a compaction), the
 * next state and the next step. The loop performs the step; nothing else decides.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type { AssistantMessage } from "../message/Message.js"
import type { ModelError } from "../model/ModelError.js"
import * as StructuredOutput from "../output/StructuredOutput.js"
import { type LoopState, stopped } from "./LoopState.js"
import type { TurnPolicy } from "./TurnPolicy.js"

/** What just happened. @category Models */
export type Outcome = Data.TaggedEnum<{
  /**
   * The model answered (the answer is in the conversation) on `model`; `spent` is set when the
   * session's budget is now spent.
   */
  Answered: { readonly message: AssistantMessage; readonly model: string; readonly spent: string | undefined }
  /**
   * The last answer's tool calls are answered (their results are in the conversation); `structured`
   * says what its `StructuredOutput` calls gave, if it made any (see `StructuredOutput.roundOf`).
   */
  ToolsAnswered: { readonly spent: string | undefined; readonly structured?: StructuredOutput.Round | undefined }
  /** The model call failed, on `model`. */
  ModelFailed: { readonly error: ModelError; readonly model: string }
  /** A preprocessing stage ended the turn (its circuit breaker tripped). */
  Halted: { readonly message: string }
  /** A reactive compaction replaced the conversation. */
  Compacted: {}
  /** A reactive compaction could not make the conversation fit. */
  CompactionFailed: { readonly error: ModelError; readonly message: string }
}>

/** Constructors and matchers for `Outcome`. @category Constructors */
export const Outcome = Data.taggedEnum<Outcome>()

/** What the loop does next. @category Models */
export type Next = Data.TaggedEnum<{
  /** Call the model again (a new iteration). */
  CallModel: {}
  /** Run the answer's tool calls (then decide on `ToolsAnswered`). */
  RunTools: {}
  /** Ask the model to go on with `prompt` as the user message (then call it, unless the turn stops). */
  Continue: { readonly prompt: string }
  /** Compact the conversation (then decide on `Compacted` or `CompactionFailed`). */
  Compact: {}
  /** Answer the answer's tool calls without running them (an error result saying `message`), then stop. */
  AnswerUnrun: { readonly message: string }
  /** The turn is over (`state.stop` says why). */
  Stop: {}
}>

/** Constructors and matchers for `Next`. @category Constructors */
export const Next = Data.taggedEnum<Next>()

/** The next state and step. @category Models */
export interface Decision {
  readonly state: LoopState
  readonly next: Next
}

/** What the decisions depend on besides the state. @category Models */
export interface Context {
  readonly policy: TurnPolicy
  /** The output-token cap of each request (for the message of an answer cut too often). */
  readonly maxTokens: number
  /** The output-token cap of a request to a model (a fallback's own); absent: `maxTokens`. */
  readonly maxTokensFor?: ((model: string) => number) | undefined
  /** Whether a compactor is there to answer a prompt that is too long. */
  readonly canCompact: boolean
  /** The structured output the turn must give, if any (see `StructuredOutput`). */
  readonly structuredOutput?: StructuredOutput.Policy | undefined
}

const stop = (state: LoopState, reason: LoopState["stop"] & {}): Decision => ({
  state: stopped(state, reason),
  next: Next.Stop()
})

/** After an answer: stop, run its tools, or ask it to go on. */
const answered = (state: LoopState, outcome: Extract<Outcome, { _tag: "Answered" }>, context: Context): Decision => {
  const { message, spent } = outcome
  const next: LoopState = { ...state, model: outcome.model, lastMessage: message, compactions: 0 }
  const calls = message.toolUses.length
  if (spent !== undefined) {
    // A soft cap, as Claude Code's: the answer is kept, its calls are not run.
    const over = stopped(next, { reason: "budget_exhausted", message: spent })
    return { state: over, next: calls > 0 ? Next.AnswerUnrun({ message: spent }) : Next.Stop() }
  }
  if (calls > 0) return { state: next, next: Next.RunTools() }
  // Cut by the context window rather than `max_tokens`: recovered the same way, as Claude Code does.
  if (message.stop_reason !== "max_tokens" && message.stop_reason !== "model_context_window_exceeded") {
    const policy = context.structuredOutput
    return policy === undefined ? stop(next, { reason: "completed" }) : unstructured(next, policy, context)
  }
  const { continuation } = context.policy
  if (state.continuations >= continuation.max) {
    return stop(next, {
      reason: "max_output_tokens",
      message: `The answer was cut at the output limit (${
        context.maxTokensFor?.(outcome.model) ?? context.maxTokens
      } tokens) ${state.continuations + 1} times in a row`
    })
  }
  const going: LoopState = { ...next, continuations: state.continuations + 1 }
  return {
    state: state.iteration >= context.policy.maxTurns ? stopped(going, { reason: "max_turns" }) : going,
    next: Next.Continue({ prompt: continuation.prompt })
  }
}

/** After a structured-output verdict: stop with the output, stop exhausted, or call the model again. */
const afterVerdict = (state: LoopState, verdict: StructuredOutput.Verdict, context: Context): Decision => {
  switch (verdict._tag) {
    case "Provided":
      return stop(state, { reason: "completed", structuredOutput: verdict.value })
    case "Exhausted":
      return stop({ ...state, structured: verdict.progress }, {
        reason: "structured_output_retry_exhausted",
        message: verdict.message
      })
    case "Retry": {
      const going: LoopState = { ...state, structured: verdict.progress }
      const over = state.iteration >= context.policy.maxTurns
      if (verdict.reminder === undefined) {
        return over ? stop(going, { reason: "max_turns" }) : { state: going, next: Next.CallModel() }
      }
      return {
        state: over ? stopped(going, { reason: "max_turns" }) : going,
        next: Next.Continue({ prompt: verdict.reminder })
      }
    }
  }
}

/** An answer that ended without the structured output asked for: remind the model, or give up. */
const unstructured = (state: LoopState, policy: StructuredOutput.Policy, context: Context): Decision =>
  afterVerdict(state, StructuredOutput.afterPlainAnswer(policy, state.structured), context)

/** After a round of tool results: the structured output's verdict, if the round had a call of it. */
const toolsAnswered = (state: LoopState, round: StructuredOutput.Round | undefined, context: Context): Decision => {
  const verdict = context.structuredOutput === undefined
    ? undefined
    : StructuredOutput.afterTools(context.structuredOutput, state.structured, round)
  if (verdict !== undefined) return afterVerdict(state, verdict, context)
  return state.iteration >= context.policy.maxTurns
    ? stop(state, { reason: "max_turns" })
    : { state, next: Next.CallModel() }
}

/**
 * The decision after `outcome` in `state`. Pure: the same state and outcome always decide the same.
 *
 * @category Deciding
 */
export const decide = (state: LoopState, outcome: Outcome, context: Context): Decision =>
  Outcome.$match(outcome, {
    Answered: (o) => answered(state, o, context),
    ToolsAnswered: ({ spent, structured }) =>
      spent !== undefined
        ? stop(state, { reason: "budget_exhausted", message: spent })
        : toolsAnswered(state, structured, context),
    ModelFailed: ({ error, model }) => {
      const next = { ...state, model }
      if (error._tag !== "PromptTooLong") return stop(next, { reason: "model_error", error })
      if (!context.canCompact || state.compactions >= context.policy.promptTooLong.compactions) {
        return stop(next, { reason: "prompt_too_long", error })
      }
      return { state: { ...next, compactions: state.compactions + 1 }, next: Next.Compact() }
    },
    Halted: ({ message }) => stop(state, { reason: "prompt_too_long", message }),
    Compacted: () => ({ state, next: Next.CallModel() }),
    CompactionFailed: ({ error, message }) => stop(state, { reason: "prompt_too_long", error, message })
  })
