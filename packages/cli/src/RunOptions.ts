/**
 * What a run is built from: the flags that shape the kernel, the working directory, who answers
 * permission asks, the embedder's and the host's hooks, and whether it records or replays a journal.
 *
 * @since 0.1.0
 */
import type { Hooks, JournalEntry, Permissions, ToolsInFlight, TurnEnvelope } from "@keel/core"
import type { HostLink, McpConfig } from "@keel/tools"
import type { Flags } from "./Flags.js"
import type * as HostHooks from "./hook/HostHooks.js"

/** What a run is built from: the flags that shape the kernel, the working directory, and who answers permission asks. @category Models */
export interface Options extends
  Pick<
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
    | "maxTurns"
    | "maxBudgetUsd"
    | "includePartialMessages"
    | "systemPrompt"
    | "appendSystemPrompt"
    | "resume"
    | "continue"
    | "forkSession"
    | "resumeSessionAt"
    | "sessionId"
    | "sessionPersistence"
    | "effort"
    | "thinking"
    | "maxThinkingTokens"
  >
{
  readonly cwd: string
  /** Agent definitions over the agent files: `--agents` JSON, or the Agent SDK's `agents` record (see `Agents`). */
  readonly agents?: unknown
  /** Where `agents` came from, for messages (default `--agents`). */
  readonly agentsOrigin?: string | undefined
  /** The agent the main thread runs as (`--agent`): its prompt as the base instructions, its tools, its model. */
  readonly agent?: string | undefined
  /** Where `agent` came from, for messages (default `--agent`). */
  readonly agentOrigin?: string | undefined
  /** Asked for every tool call that would ask (the REPL's prompt, `query()`'s `canUseTool`); without it those calls are denied. */
  readonly canUseTool?: Permissions.CanUseTool | undefined
  /**
   * Tool calls that would ask become pending actions (`Actions`), answered with `respond` by
   * whoever fronts the runtime (a stream-json host's `control_response`, an RPC client); without it
   * (and without `canUseTool`) those calls are denied.
   */
  readonly askThroughActions?: boolean | undefined
  /** The environment of MCP configs' `${VAR}` expansion, of the MCP servers Keel starts and of Bash commands (default `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  /**
   * Journal the run beside its transcript (`--record`, `KEEL_RECORD=1`: see `Journal`): every model
   * call and tool call, its ids and random draws from a seed the journal's header keeps.
   */
  readonly record?: boolean | undefined
  /**
   * Run a recorded journal again (`keel replay`): the model serves its calls, tools are served from
   * it (`recorded`) or run (`live`), ids and random draws come from its seed, the system prompt is
   * the recorded one, and nothing is saved.
   */
  readonly replay?: {
    readonly entries: ReadonlyArray<JournalEntry.Entry>
    readonly seed: number | undefined
    readonly tools: "recorded" | "live"
    readonly prompt: TurnEnvelope.Recorded | undefined
    /** Counts the live tool calls running now (`tools: "live"`), for the virtual clock to wait on. */
    readonly running?: ToolsInFlight.Counter | undefined
  } | undefined
  /** The command line a recording keeps for `keel replay` (default this process's arguments). */
  readonly argv?: ReadonlyArray<string> | undefined
  /** Log the kernel's notable events (retries, fallbacks, compactions) on stderr (`--debug`). */
  readonly debug?: boolean | undefined
  /** Where those lines go instead of stderr (`--debug-file`). */
  readonly debugFile?: string | undefined
  /**
   * A stream-json host's `initialize` request (its fields), when it came as the first input line:
   * read before the session opens, so what it configures (system prompt, agents, hooks, SDK MCP
   * servers, output schema) is part of what the session is built from.
   */
  readonly initialize?: Readonly<Record<string, unknown>> | undefined
  /** MCP servers in an Agent SDK host's process (its `initialize` names them), and the link through the host. */
  readonly sdkMcpServers?: { readonly servers: ReadonlyArray<McpConfig.Server>; readonly link: HostLink.HostLink } | undefined
  /** More settings (`--settings`): a settings file's path, or its JSON text. */
  readonly settings?: string | undefined
  /** The settings files to read (`--setting-sources`); all when undefined. */
  readonly settingSources?: Flags["settingSources"] | undefined
  /** Let a later `setMode` switch into bypassPermissions (`--allow-dangerously-skip-permissions`). */
  readonly allowDangerouslySkipPermissions?: boolean | undefined
  /** The JSON Schema (JSON text) every answer must match: `--json-schema`, `query()`'s `outputFormat`. */
  readonly jsonSchema?: string | undefined
  /** The embedder's callback hooks (`query()`'s `hooks`), run after the settings files' hooks. */
  readonly hookCallbacks?: Hooks.Config | undefined
  /** A stream-json host's callback hooks (registered by its `initialize`), run after those. */
  readonly hostHooks?: HostHooks.Bridge | undefined
  /** Told of every hook run (`--include-hook-events`). */
  readonly onHookEvent?: ((event: Hooks.Lifecycle) => void) | undefined
}
