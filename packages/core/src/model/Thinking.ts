/**
 * Thinking and effort: what a session asks for (`Setting`: `--thinking`, `--max-thinking-tokens`,
 * `--effort`, the SDK's `thinking` / `maxThinkingTokens` / `effort`), what each model can do
 * (`Capability`, one table by model id, extensible), and the request parameters the two give for
 * one model (`resolve`), as Claude Code sends them:
 *
 * - a model with adaptive thinking (Opus 4.6+, Sonnet 4.6) gets `thinking: {type: "adaptive"}`; a
 *   budget asks only "on" (any positive budget is adaptive thinking);
 * - an older thinking model (Claude 4.0 / 4.5) gets `{type: "enabled", budget_tokens}`: the budget
 *   asked for, else `max_tokens - 1`, always below `max_tokens` and at least the API's 1,024;
 * - thinking off (`--thinking disabled`, a budget of 0) is `{type: "disabled"}` on a thinking model;
 * - a model that takes an effort level gets `output_config: {effort}` (its default when none is
 *   asked for; a level it lacks goes down to the highest it has), thinking on or off;
 * - with thinking on, `context_management` keeps every turn's thinking (`clear_thinking_20251015`,
 *   `keep: "all"`), with its beta header.
 *
 * Claude 3 models get no thinking parameters, even when asked (as Claude Code). A model the table
 * does not know gets none by default, and, when the session asks for thinking or an effort, the
 * newest form (adaptive thinking, the effort asked for), as Claude Code does for a model it does not
 * recognise; add the model to the table (`AnthropicModel.Options.thinkingModels`) to say otherwise.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { AssistantMessage, type Message, RedactedThinkingBlock, ThinkingBlock } from "../message/Message.js"

/** Effort levels, lowest first (`--effort`, the SDK's `effort`, the API's `output_config.effort`). @category Schemas */
export const Effort = Schema.Literal("low", "medium", "high", "xhigh", "max")
/** @category Schemas */
export type Effort = typeof Effort.Type

/** All effort levels, lowest first. @category Constants */
export const EFFORTS: ReadonlyArray<Effort> = Effort.literals

/**
 * What a session asks for, independent of the model: resolved per model at each request, so a
 * fallback model or a model switch gets its own form. Every field absent: the model's default.
 *
 * @category Schemas
 */
export const Setting = Schema.Struct({
  /** `adaptive` and `enabled` both mean "on" (each model in its own form); `disabled` means off. */
  mode: Schema.optional(Schema.Literal("adaptive", "enabled", "disabled")),
  /** A thinking budget in tokens; 0 turns thinking off, any other value turns it on. */
  budgetTokens: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  effort: Schema.optional(Effort)
})
/** @category Schemas */
export type Setting = typeof Setting.Type

/** The model's default: thinking as the model has it by default, its default effort. @category Constants */
export const modelDefault: Setting = {}

/**
 * A setting from Claude Code's flags (or the SDK's options): `--thinking`, `--max-thinking-tokens`
 * (0 disables), `--effort`; the fields given, none of the others.
 *
 * @category Constructors
 */
export const fromFlags = (flags: {
  readonly thinking?: "adaptive" | "enabled" | "disabled" | undefined
  readonly maxThinkingTokens?: number | undefined
  readonly effort?: Effort | undefined
}): Setting => ({
  ...(flags.thinking !== undefined ? { mode: flags.thinking } : {}),
  ...(flags.maxThinkingTokens !== undefined ? { budgetTokens: flags.maxThinkingTokens } : {}),
  ...(flags.effort !== undefined ? { effort: flags.effort } : {})
})

/**
 * `MAX_THINKING_TOKENS` (Claude Code's variable): a thinking budget in tokens, 0 to disable; the
 * `--max-thinking-tokens` flag wins over it.
 *
 * @category Configuration
 */
export const maxThinkingTokensConfig: Config.Config<number | undefined> = Config.integer("MAX_THINKING_TOKENS").pipe(
  Config.validate({ message: "must be a number of tokens, 0 or more (0 disables thinking)", validation: (n) => n >= 0 }),
  Config.option,
  Config.map(Option.getOrUndefined)
)

/** How a model thinks. @category Models */
export interface Capability {
  /** `adaptive`: the model decides how much; `budget`: a fixed `budget_tokens`; `none`: no thinking. */
  readonly style: "adaptive" | "budget" | "none"
  /** The effort levels the model takes, lowest first; empty when it takes none. */
  readonly efforts: ReadonlyArray<Effort>
  /** The effort sent when the session asks for none (one of `efforts`). */
  readonly defaultEffort?: Effort | undefined
}

/** Capabilities by model id part; the longest key the model id contains wins. @category Models */
export type Table = Readonly<Record<string, Capability>>

const budget: Capability = { style: "budget", efforts: [] }
const adaptive: Capability = { style: "adaptive", efforts: ["low", "medium", "high", "max"], defaultEffort: "high" }

/**
 * The models Keel knows, as Claude Code 2.1.328 treats them (observed against a recording API).
 * Keys match anywhere in the id, so dated ids (`claude-sonnet-4-20250514`) and provider prefixes
 * (`us.anthropic.claude-sonnet-4-6`) find theirs.
 *
 * @category Constants
 */
export const defaultTable: Table = {
  "claude-opus-4-7": { style: "adaptive", efforts: ["low", "medium", "high", "xhigh", "max"], defaultEffort: "xhigh" },
  "claude-opus-4-6": adaptive,
  "claude-sonnet-4-6": adaptive,
  "claude-opus-4-5": { style: "budget", efforts: ["low", "medium", "high"], defaultEffort: "high" },
  "claude-sonnet-4-5": budget,
  "claude-haiku-4-5": budget,
  "claude-opus-4": budget,
  "claude-sonnet-4": budget,
  "claude-3": { style: "none", efforts: [] }
}

/**
 * What a model the table does not know is taken to do when the session asks for thinking or an
 * effort: the newest form. @category Constants
 */
export const assumed: Capability = { style: "adaptive", efforts: EFFORTS, defaultEffort: "high" }

/** The capability of `model`: the entry of the longest key it contains; `undefined` for a model the table does not know. @category Models */
export const capabilityFor = (model: string, table: Table = defaultTable): Capability | undefined => {
  const id = model.toLowerCase()
  let best: string | undefined
  for (const key of Object.keys(table)) {
    if (id.includes(key.toLowerCase()) && (best === undefined || key.length > best.length)) best = key
  }
  return best === undefined ? undefined : table[best]!
}

/** The API's smallest thinking budget. @category Constants */
export const MIN_BUDGET_TOKENS = 1024

/** The beta `context_management` needs. @category Constants */
export const CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"

/** The beta that lets a budgeted model think between tool calls. @category Constants */
export const INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"

/** The beta of `output_config.effort`. @category Constants */
export const EFFORT_BETA = "effort-2025-11-24"

/** The request parameters for one model, and the beta headers they need. @category Models */
export interface Resolved {
  /** Body parameters: `thinking`, `output_config`, `context_management` (only those that apply). */
  readonly params: Readonly<Record<string, unknown>>
  readonly betas: ReadonlyArray<string>
}

/** Whether the setting asks for thinking on (`true`), off (`false`) or leaves it to the model (`undefined`). */
const wanted = (setting: Setting): boolean | undefined => {
  if (setting.mode === "disabled" || setting.budgetTokens === 0) return false
  if (setting.mode !== undefined || setting.budgetTokens !== undefined) return true
  return undefined
}

/** The effort sent for `asked` on a model taking `efforts`: the highest it takes at or below `asked`. */
const effortFor = (capability: Capability, asked: Effort | undefined): Effort | undefined => {
  if (capability.efforts.length === 0) return undefined
  if (asked === undefined) return capability.defaultEffort
  const rank = EFFORTS.indexOf(asked)
  let best: Effort | undefined
  for (const e of capability.efforts) if (EFFORTS.indexOf(e) <= rank) best = e
  return best ?? capability.efforts[0]
}

/**
 * The thinking parameters of a request to `model` with `maxTokens`, for `setting`.
 *
 * @category Resolution
 */
export const resolve = (setting: Setting, model: string, maxTokens: number, table: Table = defaultTable): Resolved => {
  const known = capabilityFor(model, table)
  const asked = setting.mode !== undefined || setting.budgetTokens !== undefined || setting.effort !== undefined
  const capability = known ?? (asked ? assumed : undefined)
  if (capability === undefined || capability.style === "none") return { params: {}, betas: [] }
  const params: Record<string, unknown> = {}
  const betas: Array<string> = []
  // Thinking models think by default (Claude Code's default on every Claude 4 model).
  let on = wanted(setting) ?? true
  if (on && capability.style === "adaptive") {
    params.thinking = { type: "adaptive" }
  } else if (on) {
    const most = maxTokens - 1
    // No room for the API's smallest budget below max_tokens: no thinking.
    if (most < MIN_BUDGET_TOKENS) on = false
    else {
      const budgetTokens = Math.max(MIN_BUDGET_TOKENS, Math.min(setting.budgetTokens ?? most, most))
      params.thinking = { type: "enabled", budget_tokens: budgetTokens }
    }
  }
  if (!on) params.thinking = { type: "disabled" }
  if (on) {
    params.context_management = { edits: [{ type: "clear_thinking_20251015", keep: "all" }] }
    betas.push(INTERLEAVED_THINKING_BETA, CONTEXT_MANAGEMENT_BETA)
  }
  const effort = effortFor(capability, setting.effort)
  if (effort !== undefined) {
    params.output_config = { effort }
    betas.push(EFFORT_BETA)
  }
  return { params, betas }
}

/**
 * The setting after a host's `set_max_thinking_tokens` (the SDK's `setMaxThinkingTokens`): `null`
 * goes back to the model's default thinking, 0 turns it off, any other number is that budget. The
 * effort is kept.
 *
 * @category Resolution
 */
export const withMaxThinkingTokens = (setting: Setting, tokens: number | null): Setting => {
  const { budgetTokens: _, mode: __, ...rest } = setting
  return tokens === null ? rest : { ...rest, budgetTokens: tokens }
}

const isThinking = (block: unknown): boolean => block instanceof ThinkingBlock || block instanceof RedactedThinkingBlock

/**
 * The conversation with no assistant message ending in a thinking block (the API refuses one: an
 * answer cut while it thought, an imported transcript): trailing thinking blocks are dropped, and an
 * assistant message left empty is dropped whole. The same array when nothing needed repair.
 *
 * @category Repair
 */
export const withoutTrailingThinking = (messages: ReadonlyArray<Message>): ReadonlyArray<Message> => {
  let out: Array<Message> | undefined
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!
    const last = m instanceof AssistantMessage ? m.content[m.content.length - 1] : undefined
    if (!isThinking(last)) {
      out?.push(m)
      continue
    }
    out ??= messages.slice(0, i)
    const content = [...(m as AssistantMessage).content]
    while (content.length > 0 && isThinking(content[content.length - 1])) content.pop()
    if (content.length > 0) out.push(new AssistantMessage({ ...(m as AssistantMessage), content }))
  }
  return out ?? messages
}

/** A model id without a date suffix (`claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`). */
const undated = (model: string): string => model.toLowerCase().replace(/-\d{8}$/, "")

/**
 * Whether two model ids name the same model: equal once undated, or one is the other with a
 * provider prefix (`us.anthropic.claude-sonnet-4-6`).
 *
 * @category Repair
 */
export const sameModel = (a: string, b: string): boolean => {
  const x = undated(a)
  const y = undated(b)
  return x === y || x.endsWith(`.${y}`) || y.endsWith(`.${x}`)
}

/**
 * The conversation as sent to `model`: no thinking block written by another model (a fallback or a
 * switched model cannot verify its signature; an answer whose model is unknown keeps its blocks),
 * and none left last in an answer (see {@link withoutTrailingThinking}). The same array when
 * nothing changes, so a request's bytes stay stable for the prompt cache.
 *
 * @category Repair
 */
export const forModel = (messages: ReadonlyArray<Message>, model: string): ReadonlyArray<Message> =>
  withoutTrailingThinking(withoutThinking(messages, (m) => m.model !== undefined && !sameModel(m.model, model)))

/**
 * The conversation without the thinking blocks of the answers `which` picks (all by default). The
 * same array when there were none.
 *
 * @category Repair
 */
export const withoutThinking = (
  messages: ReadonlyArray<Message>,
  which: (message: AssistantMessage) => boolean = () => true
): ReadonlyArray<Message> => {
  let out: Array<Message> | undefined
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!
    if (!(m instanceof AssistantMessage) || !m.content.some(isThinking) || !which(m)) {
      out?.push(m)
      continue
    }
    out ??= messages.slice(0, i)
    const content = m.content.filter((b) => !isThinking(b))
    if (content.length > 0) out.push(new AssistantMessage({ ...m, content }))
  }
  return out ?? messages
}
