/**
 * What every way of running Keel shares (headless `-p`, the REPL, `query()`): the Layer graph built
 * from run options, the session opened on it, and the one-line message (and exit code) for each
 * error that can stop a run before or outside a turn.
 *
 * @since 0.1.0
 */
import { appendFileSync } from "node:fs"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as NodeContext from "@effect/platform-node/NodeContext"
import {
  Actions,
  AnthropicModel,
  type OutputSchema,
  BuiltinCommands,
  type Commands,
  MarkdownCommands,
  type Compactor,
  ContextAssembly,
  ContextManagement,
  Fallback,
  Hooks,
  Ids,
  Journal,
  ModelCapabilities,
  type ModelClient,
  NestedMemory,
  Permissions,
  type Pipeline,
  Pricing,
  Resume,
  Session,
  type SessionRuntime,
  SessionStore,
  Thinking,
  ToolRegistry,
  ToolRuntime,
  TranscriptError
} from "@keel/core"
import { type AgentDefinition, Agents, BuiltinTools, type McpConfig, McpServers, Read } from "@keel/tools"
import type { ConfigError } from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import type * as Scope from "effect/Scope"
import type { Options } from "./RunOptions.js"
import * as JsonSchemaOption from "./output/JsonSchemaOption.js"
import * as HooksLayer from "./hook/HooksLayer.js"
import * as Settings from "./Settings.js"
import * as SavedPermissions from "./settings/SavedPermissions.js"
import * as ApiKeyHelper from "./settings/ApiKeyHelper.js"
import * as RunJournal from "./RunJournal.js"
import * as RunSettings from "./settings/RunSettings.js"
import * as SettingsEnv from "./settings/SettingsEnv.js"
import * as RunAgents from "./agents/RunAgents.js"
import * as Telemetry from "./Telemetry.js"

export type { Options } from "./RunOptions.js"

/**
 * Where the kernel's logs go: stderr (stdout is the answer, or `stream-json`), one `keel:` line
 * each. Silent but for warnings; with `debug`, the notable events of a run too (each retry and its
 * wait, fallbacks, compactions), at level `DEBUG`.
 *
 * @category Layers
 */
export const logging = (debug: boolean, file?: string | undefined): Layer.Layer<never> =>
  Layer.merge(
    Logger.replace(
      Logger.defaultLogger,
      Logger.make((entry) => {
        const line = `keel: ${Logger.logfmtLogger.log(entry)}\n`
        if (file === undefined) return void process.stderr.write(line)
        try {
          appendFileSync(file, `${new Date().toISOString()} ${line}`)
        } catch {
          process.stderr.write(line)
        }
      })
    ),
    Logger.minimumLogLevel(debug ? LogLevel.Debug : LogLevel.Warning)
  )

export { describeConfigError, describeFailure, type Failure } from "./RunFailure.js"

/** The services a run's session needs. @category Models */
export type Services =
  | ModelClient.ModelClient
  | Pipeline.Pipeline
  | Compactor.Compactor
  | ToolRuntime.ToolRuntime
  | ToolRegistry.ToolRegistry
  | Permissions.Permissions
  | McpServers.McpServers
  | ContextAssembly.ContextAssembly
  | SessionStore.SessionStore
  | Commands.Commands
  | Ids.Ids
  | Journal.Journal
  | Actions.Actions
  | NestedMemory.NestedMemory
  | RunSettings.RunSettings
  | Agents.Agents
  | Hooks.Hooks

/** Errors of building the layers. @category Errors */
export type LayerError =
  | AnthropicModel.MissingCredentials
  | ApiKeyHelper.ApiKeyHelperFailed
  | ConfigError
  | Settings.InvalidSettings
  | McpConfig.InvalidMcpConfig
  | Telemetry.InvalidTelemetryConfig
  | AgentDefinition.InvalidAgents
  | Agents.UnknownAgent
  | OutputSchema.InvalidOutputSchema
  | ModelCapabilities.InvalidModels

/**
 * The kernel layers for a run, built after its settings are read and their `env` applied (see
 * `settings/RunSettings.ts`; an environment of the run's own then configures every layer): the
 * settings, the model (see `RunModel.modelLayer`), built-in tools and the tools of
 * the MCP servers (`.mcp.json`, `--mcp-config`; started when the layer is built, closed with it),
 * permissions (settings, then flags), the context management pipeline (window from
 * `KEEL_AUTO_COMPACT_WINDOW`, large results saved under `KEEL_HOME`), which also answers the API's
 * "prompt is too long" with a reactive compaction, the context assembly (the default system
 * prompt: instruction files, git, environment), the session store (transcripts under
 * `KEEL_HOME`), the slash commands (built-in, then the project's and the user's Markdown commands),
 * ids from the platform's generator, and, with `OTEL_EXPORTER_OTLP_ENDPOINT`, the trace exporter
 * (built first and closed last, so the last spans are delivered).
 *
 * @category Layers
 */
export const layer = (options: Options): Layer.Layer<Services, LayerError> =>
  Layer.unwrapEffect(Effect.map(RunSettings.prepare(options), ({ env, loaded }) => {
    const run = env === options.env ? options : { ...options, env }
    const layers = layerWith(run, loaded)
    return env === undefined ? layers : layers.pipe(Layer.provide(Layer.setConfigProvider(SettingsEnv.providerOf(env))))
  })).pipe(Layer.provide(NodeContext.layer))

/** {@link layer} once the settings are read. */
const layerWith = (options: Options, loaded: Settings.Loaded): Layer.Layer<Services, LayerError> => {
  // Recording (--record) or replaying (keel replay): ids, random draws, model, tools and store.
  const journaling = RunJournal.of(options)
  const { ids, journal, store } = journaling
  const model = journaling.model(Settings.apiKeyHelper(loaded, options.cwd, options.env))
  const permissions = Layer.effect(
    Permissions.Permissions,
    Effect.gen(function*() {
      const home = yield* ContextManagement.homeConfig
      const config = yield* Settings.permissions(options, loaded, options.cwd)
      // "Always allow" answers kept for a settings file are written to Keel's files there.
      const asking = { persist: SavedPermissions.save(home) }
      return options.canUseTool !== undefined || options.askThroughActions !== true
        ? Permissions.make(config, options.canUseTool, asking)
        : Permissions.makeAsking(config, Permissions.actionsAsker(yield* Actions.Actions), asking)
    })
  )
  const actions = Actions.layerConfig.pipe(Layer.provide(ids))
  const mcp = McpServers.layerConfig({
    cwd: options.cwd,
    configs: options.mcpConfig,
    strict: options.strictMcpConfig,
    env: options.env,
    elicitations: options.askThroughActions === true,
    host: options.sdkMcpServers
  })
  const agents = RunAgents.layer(options)
  // Subagents (Task) run on --model unless their call or type names another.
  const builtin = Layer.unwrapEffect(Effect.map(Agents.Agents, (catalog) =>
    BuiltinTools.layer(options.tools, {
      task: { model: options.model, agents: catalog.definitions },
      env: definedEnv(options.env)
    })))
  const registry = Agents.layerMainTools.pipe(
    Layer.provide(ToolRegistry.layerAppend(Effect.map(McpServers.McpServers, (servers) => servers.tools))),
    Layer.provide(builtin)
  )
  // --json-schema: the StructuredOutput tool, after all the others (and whatever --agent keeps).
  const offered = options.jsonSchema === undefined
    ? registry
    : JsonSchemaOption.registryLayer(options.jsonSchema).pipe(Layer.provide(registry))
  const tools = journaling.tools(offered).pipe(
    Layer.provideMerge(mcp.pipe(Layer.provide(actions))),
    Layer.provideMerge(agents)
  )
  return Layer.mergeAll(
    model,
    ContextManagement.layerConfig.pipe(Layer.provide(model)),
    ToolRuntime.layerConfig,
    RunAgents.assemblyLayer(options.cwd).pipe(Layer.provide(agents)),
    NestedMemory.layerConfig,
    store,
    commands(options.cwd),
    ids,
    journal,
    RunSettings.layer(loaded),
    // Hooks: the settings files' commands, then the embedder's and the host's callbacks.
    HooksLayer.layer({
      cwd: options.cwd,
      loaded,
      env: definedEnv(options.env),
      callbacks: options.hookCallbacks,
      host: options.hostHooks,
      observe: options.onHookEvent
    }).pipe(Layer.provide(Layer.merge(store, ids)))
  ).pipe(
    Layer.provideMerge(tools),
    Layer.provideMerge(permissions),
    Layer.provideMerge(actions),
    Layer.provide(NodeContext.layer),
    Layer.provide(Telemetry.layerConfig),
    Layer.provideMerge(logging(options.debug === true, options.debugFile)),
    Layer.provideMerge(journaling.random)
  )
}

/**
 * The slash commands of a run: the built-in ones, then the project's Markdown commands
 * (`.keel/commands/`), then the user's (`$KEEL_HOME/commands/`).
 *
 * @category Layers
 */
export const commands = (cwd: string): Layer.Layer<Commands.Commands, ConfigError, FileSystem.FileSystem | Path.Path> =>
  Layer.unwrapEffect(Effect.map(ContextManagement.homeConfig, (home) =>
    MarkdownCommands.layer({ cwd, home }).pipe(Layer.provide(BuiltinCommands.layer))))

/** `env` without its unset keys (`undefined` when there is no `env`). */
const definedEnv = (
  env: Readonly<Record<string, string | undefined>> | undefined
): Readonly<Record<string, string>> | undefined =>
  env === undefined
    ? undefined
    : Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined))

/** A session opened for a run, with what its start reported. @category Models */
export interface Opened {
  readonly session: Session.Service
  /** One line per MCP server that did not connect, and per agent definition that failed to load. */
  readonly warnings: ReadonlyArray<string>
  /**
   * What a torn transcript lost on resume: the session also reports these as `system` warnings in
   * its output, so a consumer that prints the output prints them once from there.
   */
  readonly transcriptWarnings: ReadonlyArray<string>
}

/**
 * Opens the run's session: the one `--resume`/`--continue` pick (loaded before anything else; its
 * model is the default, `--model` still wins, `$ANTHROPIC_MODEL` comes after it), or a new one.
 *
 * @category Running
 */
export const openSession = (options: Options): Effect.Effect<Opened, unknown, Services | Scope.Scope> =>
  Effect.gen(function*() {
    const { cwd } = options
    const store = yield* SessionStore.SessionStore
    // Locked before it is read when this run writes it: a second writer fails here (SessionLocked).
    const { loaded: resumed, locked } = yield* Resume.lockedTranscriptOf({
      cwd,
      resume: options.resume,
      continue: options.continue,
      forkSession: options.forkSession,
      resumeSessionAt: options.resumeSessionAt,
      persist: options.sessionPersistence
    }, store)
    if (options.sessionId !== undefined && options.sessionPersistence && (yield* store.exists(cwd, options.sessionId))) {
      return yield* Effect.fail(
        new TranscriptError.SessionExists({ sessionId: options.sessionId, file: store.fileOf(cwd, options.sessionId) })
      )
    }
    const agents = yield* Agents.Agents
    // --model, else the main thread's agent's, else the resumed session's, else the default.
    const agentModel = Agents.mainModel(agents.main)
    const model = options.model ?? agentModel ?? resumed?.model ?? (yield* RunSettings.RunSettings).defaultModel
    const mcpServers = yield* (yield* McpServers.McpServers).status
    const warnings = [
      ...mcpServers.filter((server) => server.status !== "connected").map((server) =>
        `MCP server ${server.name} ${server.status === "needs-auth" ? "needs authorization" : "failed to start"}: ${server.error}`
      ),
      ...agents.warnings
    ]
    // A recorded session's journal keeps the results of tool calls a crash cut off from its
    // transcript, and says whether the crash left a turn open (it runs on: see DurableTurn); not
    // for a fork cut at a message: the calls it cuts off are answered as interrupted, as in Claude Code.
    const recorded = resumed !== undefined && options.resumeSessionAt === undefined ? RunJournal.recovered(resumed.file) : {}
    if (recorded.warning !== undefined) warnings.push(recorded.warning)
    // What a torn transcript lost (also a `system` warning in the session's output).
    const transcriptWarnings = resumed?.warnings ?? []
    const session = yield* Session.make({
      model,
      cwd,
      mcpServers: mcpServers.map((server) => ({ name: server.name, status: server.status })),
      maxTurns: options.maxTurns ?? agents.main?.maxTurns,
      agents: agents.definitions.map((d) => d.agentType),
      maxBudgetUsd: options.maxBudgetUsd,
      // Each model's output cap, or CLAUDE_CODE_MAX_OUTPUT_TOKENS up to its limit; KEEL_MODELS_FILE's rows.
      maxTokens: yield* ModelCapabilities.maxOutputTokensConfig,
      models: yield* ModelCapabilities.tableConfig.pipe(Effect.provide(NodeContext.layer)),
      // The default prices, with KEEL_PRICING_FILE's over them.
      pricing: yield* Pricing.tableConfig.pipe(Effect.provide(NodeContext.layer)),
      // @path mentions are read by the built-in Read, even when --tools does not offer it to the model.
      mentionReader: yield* Read.make.pipe(Effect.provide(NodeContext.layer)),
      includePartialMessages: options.includePartialMessages,
      systemPrompt: options.systemPrompt,
      appendSystemPrompt: options.appendSystemPrompt,
      resume: resumed,
      // Why this model, and the fallbacks in force, as each turn's envelope records them.
      modelSource: options.model !== undefined || agentModel !== undefined
        ? "flag"
        : resumed?.model !== undefined
        ? "resumed"
        : "default",
      fallbackModels: options.fallbackModels ?? (yield* Fallback.modelsConfig),
      forkSession: options.forkSession,
      resumeSessionAt: options.resumeSessionAt,
      locked,
      sessionId: options.sessionId,
      persist: options.sessionPersistence,
      // --thinking, --max-thinking-tokens (else MAX_THINKING_TOKENS) and --effort; each model its own form.
      thinking: Thinking.fromFlags({
        thinking: options.thinking,
        maxThinkingTokens: options.maxThinkingTokens ?? (yield* Thinking.maxThinkingTokensConfig),
        effort: options.effort
      }),
      structuredOutput: yield* JsonSchemaOption.sessionOption(options.jsonSchema),
      recordedPrompt: options.replay?.prompt,
      recovered: recorded.recovered
    })
    return { session, warnings, transcriptWarnings }
  })

/**
 * Refuses the actions a resumed transcript left pending, in a run where nobody can answer them
 * (`-p` without `--permission-prompt-tool stdio`, `query()` without `canUseTool`): each is cancelled
 * with `reason`, so nothing waits for an answer that cannot come.
 *
 * @category Running
 */
export const refusePending = (
  resumed: SessionRuntime.Resumed,
  reason: string
): Effect.Effect<void, never, Actions.Actions> =>
  Effect.flatMap(Actions.Actions, (actions) =>
    Effect.forEach(resumed.pending, (action) => actions.cancel(action.id, reason), { discard: true }))
