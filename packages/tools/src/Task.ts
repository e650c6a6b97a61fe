/**
 * `Task` (`description`, `prompt`, `subagent_type`, `model`): runs a subagent, with Claude Code's
 * name and input. The subagent is a turn of its own (`TurnLoop`) over a conversation of its own
 * (it sees only the prompt, never the parent's conversation), with its own system prompt and a
 * restricted tool set (see `Subagents`: `general-purpose` gets every tool of its parent but `Task`,
 * `Explore` only `Read`, `Glob` and `Grep`). Its final answer is the tool result; a subagent that
 * fails (model error, its budget of model calls spent, stopped) gives an error result saying so.
 *
 * While it runs, its prompt and its turn's events go to the parent's output through
 * `ToolContext.emit` (the session shows its answers, tool results and progress with
 * `parent_tool_use_id` set to this call's id). Its token usage (and API time, and permission
 * denials) is added to the parent's `SessionState` when it ends, however it ends, so the parent's
 * `modelUsage` and `total_cost_usd` include it. Interrupting the call interrupts the subagent's turn:
 * its model stream and its tools.
 *
 * The subagent runs on the services of the turn that runs the call, which are in the call's
 * requirements: the parent's `ModelClient`, `Pipeline`, `Compactor`, `Permissions` (each call of
 * the subagent is checked by the parent's rules and mode) and `Ids`, and the parent's
 * `ToolRegistry` to choose its tools from. The tool is read-only for permissions (as in Claude
 * Code): it changes nothing itself, and each call of its subagent is checked on its own.
 *
 * @since 0.1.0
 */
import {
  AnthropicModel,
  Hooks,
  type Compactor,
  Ids,
  Message,
  ModelCapabilities,
  ModelError,
  type ModelClient,
  Permissions,
  type Pipeline,
  SessionHooks,
  SessionState,
  TokenUsage,
  Tool,
  ToolEvent,
  ToolRegistry,
  ToolRuntime,
  type TurnEvent,
  TurnLoop
} from "@keel/core"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Subagents from "./Subagents.js"
import * as Texts from "./text/Texts.generated.js"

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

const describeTool = (agents: ReadonlyArray<Subagents.Definition>, maxTurns: number): string =>
  Texts.Task({
    agents: agents.map((a) =>
      `- ${a.agentType}: ${a.whenToUse} (Tools: ${
        a.tools?.join(", ") ??
          `all of yours except ${[...Subagents.PARENT_ONLY, ...(a.disallowedTools ?? [])].join(", ")}`
      })`
    ).join("\n"),
    defaultType: Subagents.DEFAULT_TYPE,
    maxTurns
  })

/**
 * A subagent's model: the one its call or type names (aliases resolved; `inherit` names none),
 * else Task's `model` option, else the model the parent session is calling, else `ANTHROPIC_MODEL`'s.
 */
const modelFor = (
  named: string | undefined,
  option: string | undefined,
  parent: SessionState.Service
): Effect.Effect<string> =>
  Effect.gen(function*() {
    if (named !== undefined && named !== Subagents.INHERIT) return Subagents.resolveModel(named)
    if (option !== undefined) return option
    const current = yield* Ref.get(parent.model)
    return current ?? (yield* Effect.orElseSucceed(AnthropicModel.modelConfig, () => AnthropicModel.DEFAULT_MODEL))
  })

/** What the subagent's end makes of the call: its answer, or why there is none. */
const outcome = (
  agent: Subagents.Definition,
  maxTurns: number,
  end: Extract<TurnEvent.TurnEvent, { _tag: "TurnComplete" }> | undefined
): Effect.Effect<string, Tool.ToolError> => {
  const who = `The ${agent.agentType} subagent`
  const stopped = (why: string) => Tool.fail(`${who} stopped without a final answer: ${why}`)
  if (end === undefined) return Tool.fail(`${who} ended without a result.`)
  switch (end.reason) {
    case "completed":
      return Effect.succeed(end.lastMessage?.text ?? "")
    case "model_error":
      return Tool.fail(`${who} failed: API Error: ${end.error === undefined ? "the model call failed" : ModelError.describe(end.error)}`)
    case "max_turns":
      return stopped(`it reached its limit of ${maxTurns} model calls. Give it a narrower task, or do the rest yourself.`)
    case "aborted_streaming":
    case "aborted_tools":
      return stopped("Interrupted by user")
    case "budget_exhausted":
    case "max_output_tokens":
    case "structured_output_retry_exhausted":
      return stopped(end.message ?? end.reason)
    case "prompt_too_long":
      return stopped(
        `${end.message ?? (end.error !== undefined ? ModelError.describe(end.error) : "The prompt is too long")}. ` +
          "Its conversation no longer fits the context window."
      )
  }
}

/** Adds what the subagent used to its parent's totals. */
const addToParent = (parent: SessionState.Service, child: SessionState.Service): Effect.Effect<void> =>
  Effect.gen(function*() {
    const usage = yield* Ref.get(child.usage)
    yield* Ref.update(parent.usage, (u) => TokenUsage.merge(u, usage))
    const apiMs = yield* Ref.get(child.apiDurationMs)
    yield* Ref.update(parent.apiDurationMs, (d) => d + apiMs)
    const denials = yield* Ref.get(child.permissionDenials)
    if (denials.length > 0) yield* Ref.update(parent.permissionDenials, (ds) => [...ds, ...denials])
  })

/** The services a subagent runs on: the turn's that runs the call. */
type Requirements =
  | SessionState.SessionState
  | ModelClient.ModelClient
  | Pipeline.Pipeline
  | Compactor.Compactor
  | ToolRegistry.ToolRegistry
  | Permissions.Permissions
  | Ids.Ids
  | Hooks.Hooks

/** The subagent's turn: its events reported to the parent's output as they come, its end returned. */
const runSubagent = (
  turn: TurnLoop.Options,
  emit: ((event: ToolEvent.ToolEvent) => Effect.Effect<void>) | undefined
) =>
  Effect.gen(function*() {
    let end: Extract<TurnEvent.TurnEvent, { _tag: "TurnComplete" }> | undefined
    yield* TurnLoop.run(turn).pipe(
      Stream.runForEach((event) => {
        if (event._tag === "TurnComplete") {
          end = event
          return Effect.void
        }
        return emit === undefined ? Effect.void : emit(ToolEvent.ToolEvent.SubagentEvent({ event }))
      })
    )
    return end
  })

/**
 * The Task tool, offering `options.agents` (default: `general-purpose` and `Explore`).
 *
 * @category Constructors
 */
export const make = (options: Options = {}): Tool.Tool<typeof Input.Type, Requirements> => {
  const agents = options.agents ?? Subagents.builtin
  return Tool.make({
    name: Subagents.TASK_TOOL_NAME,
    // A subagent runs as long as its own turns do (each of its tool calls is bounded).
    timeoutMs: Infinity,
    description: describeTool(agents, options.maxTurns ?? DEFAULT_MAX_TURNS),
    input: Input,
    isReadOnly: true,
    isConcurrencySafe: true,
    // A subagent's own tools may write: one cut short by a crash is answered so, never run again.
    isIdempotent: false,
    call: (input, context) =>
      Effect.gen(function*() {
        const agentType = input.subagent_type ?? Subagents.DEFAULT_TYPE
        const agent = agents.find((a) => a.agentType === agentType)
        if (agent === undefined) {
          return yield* Tool.fail(
            `Agent type '${agentType}' not found. Available agents: ${agents.map((a) => a.agentType).join(", ")}`
          )
        }
        const parent = yield* SessionState.SessionState
        const parentTools = yield* ToolRegistry.ToolRegistry
        const ids = yield* Ids.Ids
        const registry = ToolRegistry.make(Subagents.toolsFor(agent, parentTools.tools))
        const maxConcurrency = yield* Effect.orElseSucceed(ToolRuntime.maxConcurrencyConfig, () => 10)
        const runtime = ToolRuntime.make(registry, yield* Permissions.Permissions, { maxConcurrency })
        const model = yield* modelFor(input.model ?? agent.model, options.model, parent)
        const maxTurns = agent.maxTurns ?? options.maxTurns ?? DEFAULT_MAX_TURNS
        // Each model's own output cap, or CLAUDE_CODE_MAX_OUTPUT_TOKENS up to its limit, as the parent's.
        const asked = yield* Effect.orElseSucceed(ModelCapabilities.maxOutputTokensConfig, () => undefined)
        const maxTokensFor = (m: string) => ModelCapabilities.maxTokensFor(m, asked)
        // A message, not a string: the model's prompt is not a user's input (no slash commands, no @ mentions).
        const prompt = Message.user(input.prompt)
        const child = yield* SessionState.make(ids.uuid(), [prompt])
        if (context.emit !== undefined) yield* context.emit(ToolEvent.ToolEvent.SubagentPrompt({ message: prompt }))
        // The parent's thinking setting, resolved for the subagent's own model.
        const thinking = yield* Ref.get(parent.thinking)
        const run = runSubagent({
          model,
          maxTokens: maxTokensFor(model),
          maxTokensFor,
          maxTurns,
          ...(thinking !== undefined ? { thinking } : {}),
          system: agent.systemPrompt(context.cwd),
          cwd: context.cwd,
          emitStreamEvents: false,
          // SubagentStop: its hooks may make the subagent go on (bounded, as Stop).
          onStop: SessionHooks.stopCheck(yield* Hooks.Hooks, { sessionId: parent.sessionId, cwd: context.cwd }, {
            id: child.sessionId,
            type: agentType
          })
        }, context.emit).pipe(
          Effect.provideService(SessionState.SessionState, child),
          Effect.provideService(ToolRegistry.ToolRegistry, registry),
          Effect.provideService(ToolRuntime.ToolRuntime, runtime)
        )
        const end = yield* Effect.ensuring(run, addToParent(parent, child))
        return yield* outcome(agent, maxTurns, end)
      })
  })
}

/** The Task tool with the built-in subagent types. @category Constructors */
export const tool: Tool.Tool<typeof Input.Type, Requirements> = make()
