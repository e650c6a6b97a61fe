/**
 * Headless mode (`keel -p`): one turn, its messages printed as text, one JSON result, or
 * `stream-json` lines in Claude Code's headless shape. Builds the Layer graph from flags and the
 * environment; the exit code is 1 when the result is an error.
 *
 * @since 0.1.0
 */
import { NodeContext } from "@effect/platform-node"
import {
  AnthropicModel,
  type Compactor,
  ContextAssembly,
  ContextManagement,
  type ModelClient,
  Permissions,
  type Pipeline,
  Pricing,
  PromptCaching,
  Resilience,
  Session,
  SessionStore,
  ToolRegistry,
  ToolRuntime,
  TranscriptError
} from "@keel/core"
import type { SdkMessage } from "@keel/core"
import { BuiltinTools, type McpConfig, McpServers, Read } from "@keel/tools"
import * as Cause from "effect/Cause"
import type { ConfigError } from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import type { Flags } from "./Flags.js"
import * as Settings from "./Settings.js"

/** Where headless output goes (stdout and stderr, or test sinks). @category Models */
export interface Io {
  readonly out: (text: string) => void
  readonly err: (text: string) => void
  /** Called with the session's interrupt once it exists, so a signal handler can stop the turn. */
  readonly onInterruptReady?: (interrupt: () => void) => void
}

/**
 * The model for a headless run: the Anthropic API from the environment, under the idle watchdog
 * (`KEEL_STREAM_IDLE_TIMEOUT_MS`), retries (`KEEL_MAX_RETRIES`, `KEEL_UNATTENDED_RETRY`) and, with
 * fallback models (`--fallback-model`, else `KEEL_FALLBACK_MODEL`), model fallback; its requests
 * carry prompt-cache breakpoints unless `DISABLE_PROMPT_CACHING` is set.
 *
 * @category Layers
 */
export const modelLayer = (
  fallbackModels: ReadonlyArray<string> | undefined
): Layer.Layer<ModelClient.ModelClient, AnthropicModel.MissingCredentials | ConfigError> =>
  PromptCaching.layerConfig.pipe(
    Layer.provide(Resilience.layerConfig({ fallbackModels })),
    Layer.provide(AnthropicModel.layerConfig)
  )

/**
 * The kernel layers for a headless run: the model (see {@link modelLayer}), built-in tools, the
 * context management pipeline (window from `KEEL_AUTO_COMPACT_WINDOW`, large results saved under
 * `KEEL_HOME`), which also answers the API's "prompt is too long" with a reactive compaction, and
 * the context assembly (the default system prompt: instruction files, git, environment), and the
 * session store (transcripts under `KEEL_HOME`).
 *
 * @category Layers
 */
export const layer = (
  flags: Pick<
    Flags,
    | "fallbackModels"
    | "allowedTools"
    | "disallowedTools"
    | "permissionMode"
    | "tools"
    | "addDirs"
    | "model"
    | "mcpConfig"
    | "strictMcpConfig"
  >
): Layer.Layer<
  | ModelClient.ModelClient
  | Pipeline.Pipeline
  | Compactor.Compactor
  | ToolRuntime.ToolRuntime
  | ToolRegistry.ToolRegistry
  | Permissions.Permissions
  | McpServers.McpServers
  | ContextAssembly.ContextAssembly
  | SessionStore.SessionStore,
  AnthropicModel.MissingCredentials | ConfigError | Settings.InvalidSettings | McpConfig.InvalidMcpConfig
> => {
  const model = modelLayer(flags.fallbackModels)
  const permissions = Layer.effect(
    Permissions.Permissions,
    Effect.gen(function*() {
      const home = yield* ContextManagement.homeConfig
      return Permissions.make(yield* Settings.permissions(flags, home, process.cwd()))
    })
  )
  // The built-in tools, then the tools of the MCP servers of .mcp.json and --mcp-config (started
  // when the layer is built, closed with it: at the end of the run or on interruption).
  const mcp = McpServers.layerConfig({ cwd: process.cwd(), configs: flags.mcpConfig, strict: flags.strictMcpConfig })
  const tools = ToolRegistry.layerAppend(Effect.map(McpServers.McpServers, (servers) => servers.tools)).pipe(
    // Subagents (Task) run on --model unless their call or type names another.
    Layer.provide(BuiltinTools.layer(flags.tools, { task: { model: flags.model } })),
    Layer.provideMerge(mcp)
  )
  return Layer.mergeAll(
    model,
    ContextManagement.layerConfig.pipe(Layer.provide(model)),
    ToolRuntime.layerConfig,
    ContextAssembly.layerConfig,
    SessionStore.layerConfig
  ).pipe(
    Layer.provideMerge(tools),
    Layer.provideMerge(permissions),
    Layer.provide(NodeContext.layer)
  )
}

/**
 * One line per problem in a configuration error: the variable, and what is wrong with its value.
 *
 * @category Rendering
 */
export const describeConfigError = (error: ConfigError): Array<string> => {
  switch (error._op) {
    case "And":
    case "Or":
      return [...describeConfigError(error.left), ...describeConfigError(error.right)]
    case "InvalidData":
    case "MissingData":
    case "SourceUnavailable":
    case "Unsupported":
      return [`${error.path.join(".")}: ${error.message}`]
  }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s`

/**
 * What text mode prints on stderr while a turn waits or recovers, so a person can tell waiting from
 * hung (stdout keeps only the answer).
 *
 * @category Rendering
 */
export const progressLine = (message: SdkMessage.SdkMessage): string | undefined => {
  if (message.type !== "system") return undefined
  switch (message.subtype) {
    case "api_retry":
      return `keel: ${message.error_message}; retrying in ${seconds(message.retry_delay_ms)} ` +
        `(retry ${message.attempt}/${message.max_retries ?? "unlimited"})\n`
    case "model_fallback":
      return `keel: ${message.content}\n`
    case "status":
      switch (message.status) {
        case "stalled":
          return `keel: no data from the API for ${seconds(message.idle_ms ?? 0)}; the request is retried at ${
            seconds(message.timeout_ms ?? 0)
          }\n`
        case "retrying":
          return `keel: still waiting to retry (${seconds(message.retry_in_ms ?? 0)} left)\n`
        case "compacting":
          return "keel: compacting the conversation\n"
        default:
          return undefined
      }
    case "permission_denied":
      return `keel: ${message.message}\n`
    case "informational":
      return `keel: ${message.content}\n`
    case "compact_boundary":
      return `keel: compacted the conversation from ~${message.compact_metadata.pre_tokens} to ~${message.compact_metadata.post_tokens} tokens\n`
    default:
      return undefined
  }
}

/**
 * Runs one headless turn for `prompt` and prints its output. Returns the process exit code.
 *
 * @category Running
 */
export const run = async (flags: Flags, prompt: string, io: Io): Promise<number> => {
  const cwd = process.cwd()
  const program = Effect.gen(function*() {
    // The session to continue (--resume, --continue) is loaded before anything else runs; its model
    // is this run's default (--model still wins, $ANTHROPIC_MODEL only comes after it).
    const store = yield* SessionStore.SessionStore
    const resumed = flags.resume !== undefined
      ? yield* store.load(cwd, flags.resume)
      : flags.continue
      ? yield* SessionStore.loadLatest(store, cwd)
      : undefined
    if (flags.sessionId !== undefined && flags.sessionPersistence && (yield* store.exists(cwd, flags.sessionId))) {
      return yield* Effect.fail(
        new TranscriptError.SessionExists({ sessionId: flags.sessionId, file: store.fileOf(cwd, flags.sessionId) })
      )
    }
    const model = flags.model ?? resumed?.model ?? (yield* AnthropicModel.modelConfig)
    const permissions = yield* Permissions.Permissions
    const mcpServers = yield* (yield* McpServers.McpServers).status
    for (const server of mcpServers) {
      if (server.status === "connected") continue
      const what = server.status === "needs-auth" ? "needs authorization" : "failed to start"
      io.err(`keel: MCP server ${server.name} ${what}: ${server.error}\n`)
    }
    const session = yield* Session.make({
      model,
      cwd,
      permissionMode: permissions.config.mode,
      mcpServers: mcpServers.map((server) => ({ name: server.name, status: server.status })),
      maxTurns: flags.maxTurns,
      maxBudgetUsd: flags.maxBudgetUsd,
      // The default prices, with KEEL_PRICING_FILE's over them.
      pricing: yield* Pricing.tableConfig.pipe(Effect.provide(NodeContext.layer)),
      // @path mentions are read by the built-in Read, even when --tools does not offer it to the model.
      mentionReader: yield* Read.make.pipe(Effect.provide(NodeContext.layer)),
      includePartialMessages: flags.includePartialMessages,
      systemPrompt: flags.systemPrompt,
      appendSystemPrompt: flags.appendSystemPrompt,
      resume: resumed,
      forkSession: flags.forkSession,
      sessionId: flags.sessionId,
      persist: flags.sessionPersistence
    })
    io.onInterruptReady?.(() => Effect.runFork(session.interrupt))
    const messages: Array<SdkMessage.SdkMessage> = []
    let result: SdkMessage.Result | undefined
    yield* session.submit(prompt).pipe(Stream.runForEachChunk((chunk) =>
      Effect.sync(() => {
        let lines = ""
        for (const message of chunk) {
          if (message.type === "result") result = message
          if (flags.outputFormat === "text" && message.type === "system") {
            const line = progressLine(message)
            if (line !== undefined) io.err(line)
          }
          if (flags.outputFormat === "stream-json") lines += JSON.stringify(message) + "\n"
          else if (flags.outputFormat === "json" && flags.verbose) messages.push(message)
        }
        if (lines.length > 0) io.out(lines)
      })
    ))
    return { result, messages }
  }).pipe(Effect.provide(layer(flags)))

  const exit = await Effect.runPromiseExit(program)
  if (Exit.isFailure(exit)) {
    const failure = Cause.failureOption(exit.cause)
    if (failure._tag === "Some") {
      const error = failure.value
      if (error._tag === "MissingCredentials") {
        io.err(`keel: ${error.message}\n`)
        return 1
      }
      if (
        error._tag === "SessionNotFound" || error._tag === "CorruptTranscript" || error._tag === "ForeignTranscript" ||
        error._tag === "SessionExists" || error._tag === "TranscriptIoError"
      ) {
        io.err(`keel: ${error.message}\n`)
        return 1
      }
      if (error._tag === "InvalidSettings") {
        io.err(`keel: ${error.message}\n`)
        return 2
      }
      if (error._tag === "InvalidPricing") {
        io.err(`keel: ${error.message}\n`)
        return 2
      }
      if (error._tag === "InvalidMcpConfig") {
        io.err(`keel: ${error.message}\n`)
        return 2
      }
      io.err(`${describeConfigError(error).map((line) => `keel: invalid environment: ${line}`).join("\n")}\n`)
      return 2
    } else {
      io.err(`keel: internal error: ${Cause.pretty(exit.cause)}\n`)
    }
    return 1
  }
  const { messages, result } = exit.value
  if (result === undefined) {
    io.err("keel: the turn ended without a result\n")
    return 1
  }
  switch (flags.outputFormat) {
    case "text":
      if (result.is_error) io.err(`${result.result ?? result.errors?.join("\n") ?? "Execution error"}\n`)
      else io.out(`${result.result ?? ""}\n`)
      break
    case "json":
      io.out(JSON.stringify(flags.verbose ? messages : result) + "\n")
      break
    case "stream-json":
      break
  }
  return result.is_error ? 1 : 0
}
