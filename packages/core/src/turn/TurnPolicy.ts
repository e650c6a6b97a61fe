/**
 * The turn loop's policies: what it does when an answer is cut at the output limit (continuation),
 * when the API says the prompt is too long (reactive compaction), and how many model calls a turn
 * may make. Each is data the loop is given; {@link claudeCode} is Claude Code's behaviour and the
 * default. The spending budget is a check the loop runs (see `TurnLoop.Options.budget`).
 *
 * @since 0.1.0
 */

/** Continuations allowed after answers cut by `max_tokens`, per turn (Claude Code's 3). @category Constants */
export const MAX_CONTINUATIONS = 3

/** The user message that asks for a cut answer to go on (Claude Code's wording). @category Constants */
export const RESUME_PROMPT = "Output token limit hit. Resume directly — no apology, no recap of what you were doing. " +
  "Pick up mid-thought if that is where the cut happened. Break remaining work into smaller pieces."

/**
 * After an answer cut by `max_tokens` that called no tool: ask the model to go on, at most `max`
 * times in a turn (0: never; the turn ends with `max_output_tokens`), with `prompt` as the user
 * message.
 *
 * @category Models
 */
export interface Continuation {
  readonly max: number
  readonly prompt: string
}

/**
 * After the API said the prompt is too long: compact (through the `Compactor`) and make the
 * request again, at most `compactions` times between two successful model calls (0: end the turn
 * with `prompt_too_long` at once).
 *
 * @category Models
 */
export interface PromptTooLong {
  readonly compactions: number
}

/** The policies of a turn. @category Models */
export interface TurnPolicy {
  /** The most model calls in a turn; the turn ends with `max_turns` after the last one's tools. */
  readonly maxTurns: number
  readonly continuation: Continuation
  readonly promptTooLong: PromptTooLong
}

/** Claude Code's: no call limit of its own, 3 continuations, one reactive compaction. @category Constants */
export const claudeCode: TurnPolicy = {
  maxTurns: Number.POSITIVE_INFINITY,
  continuation: { max: MAX_CONTINUATIONS, prompt: RESUME_PROMPT },
  promptTooLong: { compactions: 1 }
}
