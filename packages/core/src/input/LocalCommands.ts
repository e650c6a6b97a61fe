/**
 * The slash commands a session answers from its own state, without calling the model: `/cost` (the
 * session's cost and tokens per model), `/context` (what the context window holds), `/model [name]`
 * (show the model, or switch later turns to another) and `/help`. Each answers with text; the
 * session emits it as `system`/`local_command_output` and as its `result`.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as ContextUsage from "../context/ContextUsage.js"
import type { ModelRequest, ToolDefinition } from "../model/ModelRequest.js"
import * as Cost from "../session/Cost.js"
import * as Pricing from "../session/Pricing.js"
import type * as SessionState from "../session/SessionState.js"
import * as SlashCommand from "./SlashCommand.js"

/** What the commands read and change. @category Models */
export interface Environment {
  readonly state: SessionState.Service
  /** The model later turns use; `/model name` sets it. */
  readonly model: Ref.Ref<string>
  /** The model the session started with (`/model default`). */
  readonly defaultModel: string
  readonly pricing: Pricing.Table
  readonly maxOutputTokens: number
  /** The system prompt the next request would carry. */
  readonly system: Effect.Effect<ModelRequest["system"] | undefined>
  readonly tools: ReadonlyArray<ToolDefinition>
  /** When the session started (`Clock` ms), for `/cost`'s wall time. */
  readonly startedAt: number
  /** The commands `/help` lists. */
  readonly commands?: ReadonlyArray<SlashCommand.Command> | undefined
}

/** What a command answered. @category Models */
export interface Output {
  readonly text: string
  readonly isError: boolean
}

/** What `/model` aliases stand for (`default`: the session's starting model). @category Constants */
export const MODEL_ALIASES: Readonly<Record<string, string>> = {
  sonnet: "claude-sonnet-4-6",
  opus: "claude-opus-4-6",
  haiku: "claude-haiku-4-5"
}

const ok = (text: string): Output => ({ text, isError: false })

/** `/cost`: the session's total cost, API and wall time, and tokens and cost per model. @category Commands */
export const cost = (env: Environment): Effect.Effect<Output> =>
  Effect.gen(function*() {
    const usage = yield* Ref.get(env.state.usage)
    const report = Cost.report(usage, { pricing: env.pricing, maxOutputTokens: env.maxOutputTokens })
    const now = yield* Clock.currentTimeMillis
    const apiMs = yield* Ref.get(env.state.apiDurationMs)
    return ok(Cost.format(report, { apiMs, wallMs: now - env.startedAt }))
  })

/** `/context`: the context window by category (system prompt, tools, messages, free space). @category Commands */
export const context = (env: Environment): Effect.Effect<Output> =>
  Effect.gen(function*() {
    const usage = ContextUsage.measure({
      model: yield* Ref.get(env.model),
      system: yield* env.system,
      tools: env.tools,
      messages: yield* Ref.get(env.state.messages)
    })
    return ok(ContextUsage.format(usage))
  })

/**
 * `/model`: the model later turns use; `/model name` switches to `name` (an alias, `default`, or a
 * model id) from the next turn on.
 *
 * @category Commands
 */
export const model = (env: Environment, args: string): Effect.Effect<Output> =>
  Effect.gen(function*() {
    const current = yield* Ref.get(env.model)
    const name = args.trim()
    if (name === "") {
      const aliases = Object.entries(MODEL_ALIASES).map(([alias, id]) => `${alias} (${id})`).join(", ")
      return ok(`Current model: ${current}\nSwitch with /model <name>: ${aliases}, default (${env.defaultModel}) or a model id.`)
    }
    if (/\s/.test(name)) return { text: `/model takes one model name, got "${name}".`, isError: true }
    const next = name === "default" ? env.defaultModel : MODEL_ALIASES[name.toLowerCase()] ?? name
    yield* Ref.set(env.model, next)
    const unpriced = Pricing.priceOf(next, env.pricing) === undefined
      ? ` (no price is known for it: its tokens will count as $0 in the cost)`
      : ""
    return ok(`Set model to ${next}${unpriced}`)
  })

/** `/help`: the commands and the `@path` syntax. @category Commands */
export const help = (env: Environment): Effect.Effect<Output> => Effect.succeed(ok(SlashCommand.help(env.commands)))

/**
 * The answer of a command answered from the session's state, or `undefined` when `invocation`
 * names none of these (`/compact` and unknown commands are the session's to handle).
 *
 * @category Commands
 */
export const run = (invocation: SlashCommand.Invocation, env: Environment): Effect.Effect<Output> | undefined => {
  switch (invocation.name) {
    case "cost":
      return cost(env)
    case "context":
      return context(env)
    case "model":
      return model(env, invocation.args)
    case "help":
      return help(env)
    default:
      return undefined
  }
}
