/**
 * The commands every session has, the default `Commands` layer: `/compact [instructions]`,
 * `/clear`, `/context` (what the context window holds), `/cost` (the session's cost and tokens per
 * model), `/model [name]` (show the model, or switch later turns to another), `/goal` (the
 * session's persistent goal, see `GoalCommand`), `/init` (a turn that writes the repository's
 * `AGENTS.md`, see `InitCommand`) and `/help`.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as ContextUsage from "../context/ContextUsage.js"
import * as Cost from "../session/Cost.js"
import * as Pricing from "../session/Pricing.js"
import * as TurnEnvelope from "../session/TurnEnvelope.js"
import { type Command, type CommandContext, CommandResult, type Commands, layer as commandsLayer } from "./Commands.js"
import * as GoalCommand from "./GoalCommand.js"
import * as InitCommand from "./InitCommand.js"
import * as SlashCommand from "./SlashCommand.js"

/** What `/model` aliases stand for (`default`: the session's starting model). @category Constants */
export const MODEL_ALIASES: Readonly<Record<string, string>> = {
  sonnet: "claude-sonnet-4-6",
  opus: "claude-opus-4-6",
  haiku: "claude-haiku-4-5"
}

const ok = (text: string) => CommandResult.Reply({ text, isError: false })

/** `/cost`: the session's total cost, API and wall time, and tokens and cost per model. @category Commands */
export const cost = (context: CommandContext): Effect.Effect<CommandResult> =>
  Effect.gen(function*() {
    const usage = yield* Ref.get(context.state.usage)
    const report = Cost.report(usage, { pricing: context.pricing, maxOutputTokens: context.maxOutputTokens })
    const now = yield* Clock.currentTimeMillis
    const apiMs = yield* Ref.get(context.state.apiDurationMs)
    return ok(Cost.format(report, { apiMs, wallMs: now - context.startedAt }))
  })

/**
 * `/context`: the context window by category (system prompt, tools, messages, free space), then
 * what the last turn was built from, as its envelope records it (model and why, system prompt and
 * where its context came from: instruction files, environment, git; tools and permissions), and
 * what the next turn sends. `/context refresh` first builds the context again (instruction files,
 * environment and git as they are now) for the turns after it: a resumed session otherwise keeps
 * the one its transcript recorded.
 *
 * @category Commands
 */
export const contextWindow = (context: CommandContext, args = ""): Effect.Effect<CommandResult> =>
  Effect.gen(function*() {
    if (args !== "" && args !== "refresh") {
      return CommandResult.Reply({ text: `/context takes no argument, or "refresh"; got "${args}".`, isError: true })
    }
    if (args === "refresh") yield* context.refreshContext
    const usage = ContextUsage.measure({
      model: yield* Ref.get(context.model),
      system: yield* context.system,
      tools: context.tools,
      messages: yield* Ref.get(context.state.messages)
    })
    const envelope = yield* context.envelope
    const next = yield* context.nextContext
    const lines = [ContextUsage.format(usage), ""]
    if (envelope !== undefined) lines.push(...TurnEnvelope.describe(envelope))
    else lines.push("No turn yet: each turn records what it was built from.")
    lines.push(...TurnEnvelope.describeNext(next, envelope, args === "refresh"))
    return ok(lines.join("\n"))
  })

/**
 * `/model`: the model later turns use; `/model name` switches to `name` (an alias, `default`, or a
 * model id) from the next turn on.
 *
 * @category Commands
 */
export const model = (context: CommandContext, args: string): Effect.Effect<CommandResult> =>
  Effect.gen(function*() {
    const current = yield* Ref.get(context.model)
    const name = args.trim()
    if (name === "") {
      const aliases = Object.entries(MODEL_ALIASES).map(([alias, id]) => `${alias} (${id})`).join(", ")
      return ok(`Current model: ${current}\nSwitch with /model <name>: ${aliases}, default (${context.defaultModel}) or a model id.`)
    }
    if (/\s/.test(name)) return CommandResult.Reply({ text: `/model takes one model name, got "${name}".`, isError: true })
    const next = name === "default" ? context.defaultModel : MODEL_ALIASES[name.toLowerCase()] ?? name
    yield* Ref.set(context.model, next)
    const unpriced = Pricing.priceOf(next, context.pricing) === undefined
      ? ` (no price is known for it: its tokens will count as $0 in the cost)`
      : ""
    return ok(`Set model to ${next}${unpriced}`)
  })

/** The built-in commands, in the order `/help` lists them. @category Constants */
export const all: ReadonlyArray<Command> = [
  {
    name: "compact",
    argumentHint: "[instructions]",
    description: "Summarise the conversation so far to free context (optional focus instructions)",
    source: "builtin",
    run: (args) => Effect.succeed(CommandResult.Compact({ instructions: args === "" ? undefined : args }))
  },
  {
    name: "clear",
    description: "Start a new session with an empty conversation (the current one stays saved)",
    source: "builtin",
    run: () => Effect.succeed(CommandResult.Clear())
  },
  {
    name: "context",
    argumentHint: "[refresh]",
    description: "Show what the context window holds and what the last turn was built from (refresh: rebuild it now)",
    source: "builtin",
    run: (args, context) => contextWindow(context, args)
  },
  {
    name: "cost",
    description: "Show the session's cost and token usage so far, per model",
    source: "builtin",
    run: (_, context) => cost(context)
  },
  {
    name: "model",
    argumentHint: "[name]",
    description: "Show the model, or switch later turns to another (sonnet, opus, haiku, default or a model id)",
    source: "builtin",
    run: (args, context) => model(context, args)
  },
  GoalCommand.command,
  InitCommand.command,
  {
    name: "help",
    description: "Show the commands and how to attach files with @path",
    source: "builtin",
    run: (_, context) => Effect.succeed(ok(SlashCommand.help(context.commands)))
  }
]

/** The default `Commands` layer: the built-in commands. @category Layers */
export const layer: Layer.Layer<Commands> = commandsLayer(all)
