/**
 * `query()`'s `thinking`, `effort` and `maxThinkingTokens` options, checked and mapped onto the
 * run's flags as the Agent SDK maps them onto Claude Code's: `thinking` wins over
 * `maxThinkingTokens`; `{type: "enabled", budgetTokens}` is `--max-thinking-tokens`, `{type:
 * "enabled"}` without a budget and `{type: "adaptive"}` are `--thinking adaptive`, `{type:
 * "disabled"}` and `maxThinkingTokens: 0` are `--thinking disabled`. A `display` is refused (Keel
 * streams thinking as the API returns it).
 *
 * @since 0.1.0
 */
import { Thinking } from "@keel/core"
import * as Effect from "effect/Effect"
import type { Effort, ThinkingMode } from "../Flags.js"
import { QueryError } from "./QueryError.js"

/** The Agent SDK's `ThinkingConfig`. @category Models */
export type ThinkingConfig =
  | { readonly type: "adaptive" }
  | { readonly type: "enabled"; readonly budgetTokens?: number }
  | { readonly type: "disabled" }

/** The options this module reads. @category Models */
export interface ThinkingOptions {
  /** Thinking: adaptive (the model decides how much), a fixed budget (older models), or none. Wins over `maxThinkingTokens`. */
  readonly thinking?: ThinkingConfig
  /** How much effort the model puts in (models that take an effort level; a level a model lacks goes down to its highest). */
  readonly effort?: Effort
  /** Deprecated in the Agent SDK: a thinking budget, 0 for none (on adaptive-thinking models, any other value is on). */
  readonly maxThinkingTokens?: number
}

/** What they map to: the run's thinking flags. @category Models */
export interface Mapped {
  readonly thinking: ThinkingMode | undefined
  readonly maxThinkingTokens: number | undefined
  readonly effort: Effort | undefined
}

const invalid = (message: string) => Effect.fail(new QueryError({ message: `query(): ${message}`, code: 2 }))

const isBudget = (n: unknown): n is number => typeof n === "number" && Number.isInteger(n) && n >= 0

/** Checks the options and maps them onto the run's flags. @category Resolution */
export const resolve = (options: ThinkingOptions): Effect.Effect<Mapped, QueryError> =>
  Effect.gen(function*() {
    const { effort, maxThinkingTokens, thinking } = options
    if (effort !== undefined && !Thinking.EFFORTS.includes(effort)) {
      return yield* invalid(`effort ${JSON.stringify(effort)} is not one of ${Thinking.EFFORTS.join(", ")}`)
    }
    if (maxThinkingTokens !== undefined && !isBudget(maxThinkingTokens)) {
      return yield* invalid(`maxThinkingTokens must be a whole number of tokens, 0 or more, got ${String(maxThinkingTokens)}`)
    }
    if (thinking === undefined) {
      return maxThinkingTokens === 0
        ? { thinking: "disabled", maxThinkingTokens: undefined, effort }
        : { thinking: undefined, maxThinkingTokens, effort }
    }
    if (typeof thinking !== "object" || thinking === null) {
      return yield* invalid(`thinking must be { type: "adaptive" }, { type: "enabled", budgetTokens? } or { type: "disabled" }`)
    }
    if ("display" in thinking && (thinking as { display?: unknown }).display !== undefined) {
      return yield* invalid("thinking.display is not supported by Keel: thinking is streamed as the API returns it")
    }
    switch (thinking.type) {
      case "adaptive":
      case "disabled":
        return { thinking: thinking.type, maxThinkingTokens: undefined, effort }
      case "enabled": {
        const budget = thinking.budgetTokens
        if (budget === undefined) return { thinking: "adaptive", maxThinkingTokens: undefined, effort }
        if (!isBudget(budget)) {
          return yield* invalid(`thinking.budgetTokens must be a whole number of tokens, 0 or more, got ${String(budget)}`)
        }
        return budget === 0
          ? { thinking: "disabled", maxThinkingTokens: undefined, effort }
          : { thinking: undefined, maxThinkingTokens: budget, effort }
      }
      default:
        return yield* invalid(
          `thinking.type ${JSON.stringify((thinking as { type?: unknown }).type)} is not one of adaptive, enabled, disabled`
        )
    }
  })
