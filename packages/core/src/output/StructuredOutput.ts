/**
 * Structured output as a turn policy, Claude Code's behaviour: with an output schema the model
 * answers through the `StructuredOutput` tool (see `StructuredOutputTool`). The turn ends as soon as
 * a round of tool results holds an accepted call (no further model call; the result carries the
 * call's input as `structured_output`). An answer that fails to give one is an attempt: a round
 * whose `StructuredOutput` calls were all refused (their error results tell the model what is
 * wrong, and the model is called again), or an answer that ends without calling it (the model is
 * reminded with a synthetic user message). After `maxAttempts` such answers the turn ends with
 * `structured_output_retry_exhausted`, naming the last mismatch. Bounded by construction: every
 * attempt is a model call, and their number is capped.
 *
 * Unlike Claude Code, which reminds once and then ends the turn successfully without
 * `structured_output`, an answer without the call counts as an attempt like a refused call: a
 * successful result always carries the structured output.
 *
 * Pure functions of the turn's progress and what happened; `Decide` calls them.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import type { ToolResultBlock, ToolUseBlock, UserMessage } from "../message/Message.js"
import * as OutputSchema from "./OutputSchema.js"
import { NAME } from "./StructuredOutputTool.js"

/**
 * Answers without valid structured output allowed in one turn (Claude Code's
 * `MAX_STRUCTURED_OUTPUT_RETRIES`, 5).
 *
 * @category Constants
 */
export const MAX_ATTEMPTS = 5

/** `KEEL_MAX_STRUCTURED_OUTPUT_RETRIES` (default {@link MAX_ATTEMPTS}, 1 to 100). @category Configuration */
export const maxAttemptsConfig: Config.Config<number> = Config.integer("KEEL_MAX_STRUCTURED_OUTPUT_RETRIES").pipe(
  Config.validate({ message: "must be a whole number from 1 to 100", validation: (n) => n >= 1 && n <= 100 }),
  Config.withDefault(MAX_ATTEMPTS)
)

/** The synthetic user message after an answer that ended without calling the tool. @category Constants */
export const REMINDER = `You have not given your final answer through the ${NAME} tool. ` +
  `Call ${NAME} now, with input that matches the required schema.`

/** What a session asks for: the schema, and how many answers may fail to give it per turn. @category Models */
export interface Options {
  readonly schema: OutputSchema.OutputSchema
  /** Default {@link MAX_ATTEMPTS}. */
  readonly maxAttempts?: number | undefined
}

/** The policy a turn runs under. @category Models */
export interface Policy {
  readonly schema: OutputSchema.OutputSchema
  readonly maxAttempts: number
  /** The synthetic user message after an answer without the call. */
  readonly reminder: string
}

/** The policy for `options` (Claude Code's defaults). @category Constructors */
export const policy = (options: Options): Policy => ({
  schema: options.schema,
  maxAttempts: options.maxAttempts ?? MAX_ATTEMPTS,
  reminder: REMINDER
})

/** A turn's progress: failed attempts so far, and what was wrong with the last refused call. @category Models */
export interface Progress {
  readonly attempts: number
  readonly lastError: string | undefined
}

/** No attempt yet. @category Constants */
export const initial: Progress = { attempts: 0, lastError: undefined }

/**
 * What a round of tool results says: an accepted call and its input (the last accepted one, if
 * several), or only refused ones and why the last was refused. `undefined` when the round had no
 * `StructuredOutput` call.
 *
 * @category Models
 */
export type Round =
  | { readonly _tag: "Provided"; readonly value: unknown }
  | { readonly _tag: "Refused"; readonly error: string }

/** What the loop does about structured output. @category Models */
export type Verdict =
  /** The turn ends, completed, with `value` as its structured output. */
  | { readonly _tag: "Provided"; readonly value: unknown }
  /** Call the model again: after `reminder` as a user message when set, else after the round's results. */
  | { readonly _tag: "Retry"; readonly progress: Progress; readonly reminder: string | undefined }
  /** The budget is spent: the turn ends with `structured_output_retry_exhausted`. */
  | { readonly _tag: "Exhausted"; readonly progress: Progress; readonly message: string }

const textOf = (result: ToolResultBlock): string =>
  result.content === undefined || typeof result.content === "string"
    ? result.content ?? ""
    : result.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n")

/**
 * The round of `uses` answered by `results`, under `policy`. A refused call's error is what the
 * schema finds wrong with its input (or, when the input matches, why it did not run: denied,
 * interrupted).
 *
 * @category Deciding
 */
export const roundOf = (policy: Policy, uses: ReadonlyArray<ToolUseBlock>, results: UserMessage): Round | undefined => {
  const calls = uses.filter((use) => use.name === NAME)
  if (calls.length === 0) return undefined
  const byId = new Map(results.toolResults.map((result) => [result.tool_use_id, result]))
  const accepted = calls.filter((call) => {
    const result = byId.get(call.id)
    return result !== undefined && result.is_error !== true
  })
  const last = accepted.at(-1)
  if (last !== undefined) return { _tag: "Provided", value: last.input }
  const refused = calls.at(-1)!
  const problems = policy.schema.validate(refused.input)
  const result = byId.get(refused.id)
  return {
    _tag: "Refused",
    error: problems.length > 0 ? OutputSchema.describe(problems) : result !== undefined ? textOf(result) : "no result"
  }
}

/** Why the turn gave up, for the result's `errors`. @category Rendering */
export const exhaustedMessage = (progress: Progress): string =>
  `No valid structured output after ${progress.attempts} attempt${progress.attempts === 1 ? "" : "s"}` +
  (progress.lastError !== undefined
    ? `; the last ${NAME} call did not match the schema: ${progress.lastError}`
    : `: the answers did not call ${NAME}`)

/** One more failed attempt: retried, or the budget is spent. */
const attempt = (policy: Policy, progress: Progress, reminder: string | undefined): Verdict =>
  progress.attempts >= policy.maxAttempts
    ? { _tag: "Exhausted", progress, message: exhaustedMessage(progress) }
    : { _tag: "Retry", progress, reminder }

/**
 * After a round of tool results: the verdict, or `undefined` when the round had no
 * `StructuredOutput` call (the turn goes on as usual).
 *
 * @category Deciding
 */
export const afterTools = (policy: Policy, progress: Progress, round: Round | undefined): Verdict | undefined => {
  if (round === undefined) return undefined
  if (round._tag === "Provided") return { _tag: "Provided", value: round.value }
  return attempt(policy, { attempts: progress.attempts + 1, lastError: round.error }, undefined)
}

/**
 * After an answer that ends without any tool call (and was not cut at the output limit): remind
 * the model, or give up.
 *
 * @category Deciding
 */
export const afterPlainAnswer = (policy: Policy, progress: Progress): Verdict =>
  attempt(policy, { ...progress, attempts: progress.attempts + 1 }, policy.reminder)
