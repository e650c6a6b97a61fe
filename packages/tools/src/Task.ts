/**
 * `Task` (`description`, `prompt`, `subagent_type`, `model`): runs a subagent, with Claude Code's
 * name and input. The subagent is a nested `Session` with its own transcript (it sees only the
 * prompt, never the parent's conversation), its own system prompt, and a restricted tool set (see
 * `Subagents`: `general-purpose` gets every tool of its parent but `Task`, `Explore` only `Read`,
 * `Glob` and `Grep`). Its final answer is the tool result; a subagent that fails (model error, its
 * budget of model calls spent, stopped) gives an error result saying so.
 *
 * While it runs, its `assistant` and `user` messages (and `tool_progress` ticks) go to the parent's
 * output through `ToolContext.emit`, with `parent_tool_use_id` set to this call's id and the
 * parent's `session_id` (preceded by a `user` message holding the prompt); its `system`/`init` and
 * `result` do not. Its token usage (and API time, and permission denials) is added to the parent's
 * `SessionState` when it ends, however it ends, so the parent's `modelUsage` and `total_cost_usd`
 * include it. Interrupting the call interrupts the subagent's turn: its model stream and its tools.
 *
 * Design: the subagent is built at call time from the services of the session that runs the call,
 * read from the call's context (tools run inside their session's context): its `ModelClient`,
 * `Pipeline`, `ToolRegistry` (the tools to choose from), `Permissions` (so the subagent's calls are
 * checked by the parent's rules and mode, through `ToolRuntime.make(registry, options,
 * permissions)`), `SessionState` and `Compactor`. Typed dependencies of `make` would not cover
 * them: the registry cannot be a dependency of a tool inside it, the state is per session, and a
 * `ModelClient` captured when the tool set is built could differ from the one of the session that
 * runs the call. This way a subagent always uses exactly what its parent uses, and
 * `BuiltinTools.layer` keeps its requirements; outside a session a call fails, naming what is
 * missing. The tool is read-only for permissions (as in Claude Code): it changes nothing itself, and
 * each call of its subagent is checked on its own.
 *
 * @since 0.1.0
 */
import {
  AnthropicModel,
  Message,
  ModelClient,
  Permissions,
  Pipeline,
  type SdkMessage,
  Session,
  SessionState,
  Tool,
  ToolRegistry,
  ToolRuntime
} from "@keel/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Subagents from "./Subagents.js"

/** The most model calls a subagent makes unless its type or {@link Options} say otherwise. @category Constants */
export const DEFAULT_MAX_TURNS = 100

/** The input, as the model sends it. @category Schemas */
export const Input = Schema.Struct({
  description: Schema.String.annotations({ description: "A short (3-5 word) description of the task" }),
  prompt: Schema.String.annotations({ description: "The task for the agent to perform" }),
  subagent_type: Schema.optional(Schema.String).annotations({
    description: `The type of specialized agent to use for this task (default ${Subagents.DEFAULT_TYPE})`
  }),
  model: Schema.optional(Schema.String).annotations({
    description: "Optional model for this agent: sonnet, opus, haiku or a model id. By default the agent type's " +
      "model, else yours."
  })
})

/** Options of {@link make}. @category Models */
export interface Options {
  /** The subagent types offered (default `Subagents.builtin`). */
  readonly agents?: ReadonlyArray<Subagents.Definition> | undefined
  /**
   * The model of a subagent whose call and type name none: the parent session's model (the CLI
   * passes `--model`). When absent: the model the parent session is calling, else `ANTHROPIC_MODEL`
   * (default `claude-sonnet-4-6`).
   */
  readonly model?: string | undefined
  /** The most model calls of a subagent whose type sets none (default {@link DEFAULT_MAX_TURNS}). */
  readonly maxTurns?: number | undefined
}

const describeTool = (agents: ReadonlyArray<Subagents.Definition>): string =>
  [
    "Launches a subagent to carry out a task on its own: a fresh conversation with its own tools, which ends with",
    "one final report.",
    "",
    "Available agent types and the tools they have:",
    ...agents.map((a) =>
      `- ${a.agentType}: ${a.whenToUse} (Tools: ${a.tools?.join(", ") ?? `all of yours except ${Subagents.TASK_TOOL_NAME}`})`
    ),
    "",
    `Name the type in subagent_type (default ${Subagents.DEFAULT_TYPE}).`,
    "",
    "Notes:",
    "- The agent does not see this conversation: put everything it needs in the prompt, say whether it should",
    "  write code or only research, and what it should report back.",
    "- Its final message comes back to you as the tool result; the user does not see it, so tell them what matters.",
    "- Launch several agents at once, with several Task calls in one message, when their tasks are independent.",
    "- The agent's results can generally be trusted."
  ].join("\n")

/**
 * A subagent's model: the one its call or type names (aliases resolved), else Task's `model`
 * option, else the model the parent session is calling, else `ANTHROPIC_MODEL`'s.
 */
const modelFor = (
  named: string | undefined,
  option: string | undefined,
  parent: SessionState.Service | undefined
): Effect.Effect<string> =>
  Effect.gen(function*() {
    if (named !== undefined) return Subagents.resolveModel(named)
    if (option !== undefined) return option
    const current = parent === undefined ? undefined : yield* Ref.get(parent.model)
    return current ?? (yield* Effect.orElseSucceed(AnthropicModel.modelConfig, () => AnthropicModel.DEFAULT_MODEL))
  })

/** What a subagent's `result` makes of the call: its answer, or why there is none. */
const outcome = (
  agent: Subagents.Definition,
  maxTurns: number,
  result: SdkMessage.Result | undefined
): Effect.Effect<string, Tool.ToolError> => {
  const who = `The ${agent.agentType} subagent`
  if (result === undefined) return Tool.fail(`${who} ended without a result.`)
  switch (result.subtype) {
    case "success":
      return result.is_error
        ? Tool.fail(`${who} failed: ${result.result ?? "the model call failed"}`)
        : Effect.succeed(result.result ?? "")
    case "error_max_turns":
      return Tool.fail(
        `${who} stopped without a final answer: it reached its limit of ${maxTurns} model calls. ` +
          "Give it a narrower task, or do the rest yourself."
      )
    case "error_max_budget_usd":
      return Tool.fail(`${who} stopped without a final answer: ${result.errors?.join("; ") ?? "the budget is spent"}`)
    case "error_during_execution":
      return Tool.fail(
        `${who} stopped without a final answer: ${result.errors?.join("; ") ?? result.result ?? "unknown error"}`
      )
  }
}

/** The messages of the subagent that go to the parent's output: those that carry `parent_tool_use_id`. */
const forwarded = (
  message: SdkMessage.SdkMessage
): message is SdkMessage.Assistant | SdkMessage.User | SdkMessage.ToolProgress =>
  message.type === "assistant" || message.type === "user" || message.type === "tool_progress"

/** Adds what the subagent used to its parent's totals. */
const addToParent = (parent: SessionState.Service, child: SessionState.Service): Effect.Effect<void> =>
  Effect.gen(function*() {
    const usage = yield* Ref.get(child.usage)
    yield* Ref.update(parent.usage, (u) => SessionState.mergeUsage(u, usage))
    const apiMs = yield* Ref.get(child.apiDurationMs)
    yield* Ref.update(parent.apiDurationMs, (d) => d + apiMs)
    const denials = yield* Ref.get(child.permissionDenials)
    if (denials.length > 0) yield* Ref.update(parent.permissionDenials, (ds) => [...ds, ...denials])
  })

/**
 * The Task tool, offering `options.agents` (default: `general-purpose` and `Explore`).
 *
 * @category Constructors
 */
export const make = (options: Options = {}): Tool.Tool<typeof Input.Type> => {
  const agents = options.agents ?? Subagents.builtin
  return Tool.make({
    name: Subagents.TASK_TOOL_NAME,
    description: describeTool(agents),
    input: Input,
    isReadOnly: true,
    isConcurrencySafe: true,
    call: (input, context) =>
      Effect.gen(function*() {
        const agentType = input.subagent_type ?? Subagents.DEFAULT_TYPE
        const agent = agents.find((a) => a.agentType === agentType)
        if (agent === undefined) {
          return yield* Tool.fail(
            `Agent type '${agentType}' not found. Available agents: ${agents.map((a) => a.agentType).join(", ")}`
          )
        }
        const services = yield* Effect.context<never>()
        const client = Context.getOption(services, ModelClient.ModelClient)
        const pipeline = Context.getOption(services, Pipeline.Pipeline)
        const parentTools = Context.getOption(services, ToolRegistry.ToolRegistry)
        if (Option.isNone(client) || Option.isNone(pipeline) || Option.isNone(parentTools)) {
          const missing = [
            ...(Option.isNone(client) ? ["ModelClient"] : []),
            ...(Option.isNone(pipeline) ? ["Pipeline"] : []),
            ...(Option.isNone(parentTools) ? ["ToolRegistry"] : [])
          ]
          const list = missing.length === 1 ? missing[0] : `${missing.slice(0, -1).join(", ")} and ${missing.at(-1)}`
          return yield* Tool.fail(`Task runs subagents inside a session, and this call's context lacks its ${list}.`)
        }
        const permissions = Option.getOrUndefined(Context.getOption(services, Permissions.Permissions))
        const parent = Option.getOrUndefined(Context.getOption(services, SessionState.SessionState))

        const registry = ToolRegistry.make(Subagents.toolsFor(agent, parentTools.value.tools))
        const maxConcurrency = yield* Effect.orElseSucceed(ToolRuntime.maxConcurrencyConfig, () => 10)
        const runtime = ToolRuntime.make(registry, { maxConcurrency }, permissions)
        const model = yield* modelFor(input.model ?? agent.model, options.model, parent)
        const maxTurns = agent.maxTurns ?? options.maxTurns ?? DEFAULT_MAX_TURNS

        const session = yield* Session.make({
          model,
          cwd: context.cwd,
          systemPrompt: agent.systemPrompt(context.cwd),
          maxTurns
        }).pipe(Effect.provide(
          Context.make(ModelClient.ModelClient, client.value).pipe(
            Context.add(Pipeline.Pipeline, pipeline.value),
            Context.add(ToolRegistry.ToolRegistry, registry),
            Context.add(ToolRuntime.ToolRuntime, runtime)
          )
        ))

        const stamp = { parent_tool_use_id: context.toolUseId, session_id: parent?.sessionId ?? session.sessionId }
        const emit = context.emit
        let result: SdkMessage.Result | undefined
        const run = Effect.gen(function*() {
          if (emit !== undefined) {
            const prompt = Message.toParam(Message.user(input.prompt))
            yield* emit({ type: "user", message: prompt, uuid: crypto.randomUUID(), ...stamp })
          }
          // A message, not a string: the model's prompt is not a user's input (no slash commands, no @ mentions).
          yield* session.submit(Message.user(input.prompt)).pipe(Stream.runForEach((message) => {
            if (message.type === "result") {
              result = message
              return Effect.void
            }
            return emit !== undefined && forwarded(message) ? emit({ ...message, ...stamp }) : Effect.void
          }))
        })
        yield* parent === undefined ? run : Effect.ensuring(run, addToParent(parent, session.state))
        return yield* outcome(agent, maxTurns, result)
      })
  })
}

/** The Task tool with the built-in subagent types. @category Constructors */
export const tool: Tool.Tool<typeof Input.Type> = make()
