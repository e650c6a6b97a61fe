/**
 * `query()`'s options in the Claude Agent SDK's names and meanings (sdk.d.ts), for the part Keel
 * supports, and how they resolve to a run's `Runtime.Options`: the checks plain JavaScript callers
 * do not get from the types, the environment (`env` over `process.env`) and its config provider.
 *
 * @since 0.1.0
 */
import * as QueryHooks from "./QueryHooks.js"
import { Message, Permissions, type SdkMessage } from "@keel/core"
import * as fs from "node:fs"
import * as path from "node:path"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import { builtinToolNames } from "../Flags.js"
import * as JsonSchemaOption from "../output/JsonSchemaOption.js"
import * as Runtime from "../Runtime.js"
import { QueryError } from "./QueryError.js"
import * as ThinkingOptions from "./ThinkingOptions.js"

/**
 * `system`/`init` as a query yields it: with the Agent SDK's `capabilities`, the protocol features a
 * host may rely on ({@link CAPABILITIES}).
 *
 * @category Models
 */
export type SDKSystemInit = SdkMessage.SystemInit & { readonly capabilities: ReadonlyArray<string> }

/** Every message a query yields (Keel's `SdkMessage`, shaped as the Agent SDK's `SDKMessage`). @category Models */
export type SDKMessage = Exclude<SdkMessage.SdkMessage, SdkMessage.SystemInit> | SDKSystemInit

/**
 * The capabilities a query's `system`/`init` advertises, in the Agent SDK's names:
 * `interrupt_receipt_v1`, `interrupt()` resolves to the receipt (`still_queued`).
 *
 * @category Constants
 */
export const CAPABILITIES: ReadonlyArray<string> = ["interrupt_receipt_v1"]

/**
 * What `interrupt()` resolves to (the Agent SDK's interrupt receipt): `still_queued` lists, in the
 * order they will run, the `uuid`s of the host's user messages that were waiting (or read and not
 * yet queued) when the running turn was stopped; they still run. Messages sent without a `uuid` run
 * too but cannot be listed.
 *
 * @category Models
 */
export interface SDKControlInterruptResponse {
  still_queued: Array<string>
}

/** Permission modes Keel has (the Agent SDK's, without `auto`). @category Models */
export type PermissionMode = "default" | "acceptEdits" | "bypassPermissions" | "plan" | "dontAsk"

/**
 * A change to the permission policy ("always allow"), in the Agent SDK's shape: rules added,
 * replaced or removed, a mode, directories; `destination` says where it is kept (`session`, or a
 * settings file: `userSettings`, `projectSettings`, `localSettings`).
 *
 * @category Models
 */
export type PermissionUpdate =
  | {
    type: "addRules" | "replaceRules" | "removeRules"
    rules: Array<{ toolName: string; ruleContent?: string }>
    behavior: "allow" | "deny" | "ask"
    destination: PermissionUpdateDestination
  }
  | {
    /** (`auto`, an SDK mode Keel does not have, makes the answer a denial.) */
    type: "setMode"
    mode: PermissionMode | "auto"
    destination: PermissionUpdateDestination
  }
  | { type: "addDirectories" | "removeDirectories"; directories: Array<string>; destination: PermissionUpdateDestination }

/** Where a permission update is kept. @category Models */
export type PermissionUpdateDestination = "userSettings" | "projectSettings" | "localSettings" | "session" | "cliArg"

/**
 * What a `canUseTool` callback answers: allow (optionally with a changed input, and policy changes
 * applied before the call runs: the `suggestions` Keel offered, or others), or deny with the
 * message the model is told; `interrupt: true` also stops the turn.
 *
 * @category Models
 */
export type PermissionResult =
  | {
    readonly behavior: "allow"
    readonly updatedInput?: Record<string, unknown>
    readonly updatedPermissions?: Array<PermissionUpdate>
  }
  | {
    readonly behavior: "deny"
    readonly message: string
    readonly interrupt?: boolean
  }

/**
 * The permission callback, in the Agent SDK's shape: asked for every tool call that no rule or mode
 * decides (it would prompt in the REPL). `null` counts as a denial. Without a callback those calls
 * are denied.
 *
 * @category Models
 */
export type CanUseTool = (
  toolName: string,
  input: Record<string, unknown>,
  options: {
    /** Aborted when the turn stops (interrupt, abort, the consumer leaving). */
    readonly signal: AbortSignal
    /** The `tool_use` block's id. */
    readonly toolUseID: string
    /** A fresh id per ask. */
    readonly requestId: string
    /** Why Keel asks (which rule, or that the call goes outside the working directory). */
    readonly decisionReason?: string
    /** What the host may remember if it allows: pass them back as `updatedPermissions` to keep them. */
    readonly suggestions?: Array<PermissionUpdate>
  }
) => Promise<PermissionResult | null>

/** An MCP server Keel starts as a child process. @category Models */
export interface McpStdioServerConfig {
  readonly type?: "stdio"
  readonly command: string
  readonly args?: Array<string>
  readonly env?: Record<string, string>
  /** Most milliseconds one tool call may take (overrides `MCP_TOOL_TIMEOUT`). */
  readonly timeout?: number
}

/** An MCP server at a URL, over HTTP with server-sent events. @category Models */
export interface McpSSEServerConfig {
  readonly type: "sse"
  readonly url: string
  readonly headers?: Record<string, string>
  readonly timeout?: number
}

/** An MCP server at a URL, over streamable HTTP. @category Models */
export interface McpHttpServerConfig {
  readonly type: "http"
  readonly url: string
  readonly headers?: Record<string, string>
  readonly timeout?: number
}

/** The MCP server shapes Keel runs (the Agent SDK's, without in-process `sdk` servers). @category Models */
export type McpServerConfig = McpStdioServerConfig | McpSSEServerConfig | McpHttpServerConfig

/**
 * A user message of streaming input (the Agent SDK's `SDKUserMessage`): one turn each, queued as
 * soon as the host yields it. Content may be a string (slash commands and `@path` mentions apply, as
 * for a string prompt) or content blocks (sent as they are).
 *
 * @category Models
 */
export interface SDKUserMessage {
  readonly type: "user"
  readonly message: Message.MessageParam
  readonly parent_tool_use_id: string | null
  readonly isSynthetic?: boolean
  /** Keel runs a turn for every message: `false` is rejected. */
  readonly shouldQuery?: boolean
  /**
   * Where it waits while a turn runs: `next` (the default) after the other `now` and `next`
   * messages, `later` after every other message, `now` at the head, and it stops the running turn.
   */
  readonly priority?: "now" | "next" | "later"
  /** Named in `interrupt()`'s receipt while the message waits. */
  readonly uuid?: string
  readonly session_id?: string
}

/**
 * Options of {@link query}: the Agent SDK's `Options`, the keys Keel supports, with their meanings.
 * Any other key (`sandbox`, ...) rejects the
 * query with a {@link QueryError} rather than being ignored.
 *
 * @category Models
 */
export interface Options extends ThinkingOptions.ThinkingOptions {
  /** Aborting it interrupts the running turn (its `result` is still yielded), drops what waits, ends the query. */
  readonly abortController?: AbortController
  /** The agent the main thread runs as (its prompt as the base instructions, its tools, its model), by name. */
  readonly agent?: string
  /**
   * Custom subagents for `Task`, by name (the Agent SDK's `AgentDefinition`: `description`,
   * `prompt`, `tools`, `disallowedTools`, `model`, `maxTurns`), over the agent files of the project
   * and the user. Keys Keel cannot honour (`mcpServers`, `skills`, `memory`, ...) reject the query.
   */
  readonly agents?: Record<string, {
    readonly description: string
    readonly prompt: string
    readonly tools?: Array<string>
    readonly disallowedTools?: Array<string>
    readonly model?: string
    readonly maxTurns?: number
  }>
  /** Folders besides `cwd` that file tools may use without asking (relative ones resolve against `cwd`). */
  readonly additionalDirectories?: Array<string>
  /** Permission rules allowed without asking, e.g. `"Bash(git status:*)"`, `"Edit"`, `"mcp__server"`. */
  readonly allowedTools?: Array<string>
  /** Required with `permissionMode: "bypassPermissions"`, as in the Agent SDK; also lets the session switch into it later. */
  readonly allowDangerouslySkipPermissions?: boolean
  /** Asked for the tool calls that would ask; without it they are denied. */
  readonly canUseTool?: CanUseTool
  /** Continue the most recent session of `cwd` (not with `resume`). */
  readonly continue?: boolean
  /** The working directory (default `process.cwd()`): tools, settings (`.keel/`), `.mcp.json`, sessions. */
  readonly cwd?: string
  /** Internal errors carry their full cause (stack traces) in the message. */
  readonly debug?: boolean
  /** Permission rules to deny, e.g. `"Bash(rm:*)"`. */
  readonly disallowedTools?: Array<string>
  /**
   * Environment of the run: Keel's configuration (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`,
   * `ANTHROPIC_MODEL`, `KEEL_*`, ...) and the MCP servers it starts read `{ ...process.env, ...env }`;
   * a key set to `undefined` is unset. (Unlike the Agent SDK, it is merged with `process.env`
   * rather than replacing it, and `process.env` itself is never changed. Bash commands still run
   * with `process.env`.)
   */
  readonly env?: { [envVar: string]: string | undefined }
  /** Models to switch to, in order, after repeated overloads: one name or a comma-separated list. */
  readonly fallbackModel?: string
  /** With `resume` or `continue`: go on as a new session (`sessionId`, or a new id) carrying the history. */
  readonly forkSession?: boolean
  /** Callback hooks by event, as the Agent SDK's (see `QueryHooks`); they run after the settings files' hooks. */
  readonly hooks?: QueryHooks.HooksOption
  /** Also yield `stream_event` messages with the raw model stream events. */
  readonly includePartialMessages?: boolean
  /** Ends a turn with `error_max_budget_usd` once the session has cost this many USD. */
  readonly maxBudgetUsd?: number
  /** The most model calls in one turn (then `error_max_turns`). */
  readonly maxTurns?: number
  /** MCP servers, by name, besides those of `.mcp.json` (unless `strictMcpConfig`). */
  readonly mcpServers?: Record<string, McpServerConfig>
  /** The model (default: `ANTHROPIC_MODEL`, else Keel's default). */
  readonly model?: string
  /**
   * Structured output: each turn's answer must match `schema` (a JSON Schema of an object); its
   * `result` carries it as `structured_output`, or is `error_max_structured_output_retries` when the
   * model fails to give one after the retries (5; `KEEL_MAX_STRUCTURED_OUTPUT_RETRIES`).
   */
  readonly outputFormat?: { readonly type: "json_schema"; readonly schema: Record<string, unknown> }
  /** Default: the settings' `defaultMode`, else `default`. */
  readonly permissionMode?: PermissionMode
  /** Save the session's transcript under `KEEL_HOME` (default true). */
  readonly persistSession?: boolean
  /**
   * More settings, over the settings files (`--settings`): a settings file's path, JSON text, or
   * the settings as an object. Their `env` goes over the query's environment (never `process.env`).
   */
  readonly settings?: string | Record<string, unknown>
  /** Which settings files to read (`user`, `project`, `local`); all when left out, none for `[]`. */
  readonly settingSources?: Array<"user" | "project" | "local">
  /** The id of a saved session of `cwd` to continue. */
  readonly resume?: string
  /**
   * With `resume` (or `continue`) and `forkSession`: the uuid of the user or assistant message the
   * fork's history ends at (a message's `uuid` as this session's messages gave it).
   */
  readonly resumeSessionAt?: string
  /** The id (a UUID) of the new session, or of the fork. */
  readonly sessionId?: string
  /** Only the servers of `mcpServers`, not those of `.mcp.json`. */
  readonly strictMcpConfig?: boolean
  /**
   * A string replaces Keel's system prompt (instruction files, git status, environment); the
   * `claude_code` preset keeps it, with `append` added at the end.
   */
  readonly systemPrompt?: string | {
    readonly type: "preset"
    readonly preset: "claude_code"
    readonly append?: string
  }
  /** The built-in tools to offer (`[]` for none); the preset, or leaving it out, offers all of them. */
  readonly tools?: Array<string> | { readonly type: "preset"; readonly preset: "claude_code" }
}

/** The keys of {@link Options}, checked at run time. @category Constants */
export const SUPPORTED_OPTIONS: ReadonlyArray<keyof Options> = [
  "abortController",
  "additionalDirectories",
  "agent",
  "agents",
  "allowedTools",
  "allowDangerouslySkipPermissions",
  "canUseTool",
  "continue",
  "cwd",
  "debug",
  "disallowedTools",
  "effort",
  "env",
  "fallbackModel",
  "forkSession",
  "hooks",
  "includePartialMessages",
  "maxBudgetUsd",
  "maxThinkingTokens",
  "maxTurns",
  "mcpServers",
  "model",
  "outputFormat",
  "permissionMode",
  "persistSession",
  "resume",
  "resumeSessionAt",
  "settings",
  "settingSources",
  "sessionId",
  "strictMcpConfig",
  "systemPrompt",
  "thinking",
  "tools"
]


/** What the options resolve to. */
export interface Resolved {
  readonly runtime: Runtime.Options
  readonly signal: AbortSignal | undefined
}

const invalid = (message: string) => Effect.fail(new QueryError({ message: `query(): ${message}`, code: 2 }))

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const isStringArray = (u: unknown): u is ReadonlyArray<string> => Array.isArray(u) && u.every((s) => typeof s === "string")

export const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The checks plain JavaScript callers do not get from the types, and the mapping onto `Runtime.Options`. */
export const resolve = (
  options: Options,
  env: Readonly<Record<string, string>> | undefined,
  canUseTool: Permissions.CanUseTool | undefined
): Effect.Effect<Resolved, QueryError> =>
  Effect.gen(function*() {
    if (typeof options !== "object" || options === null) return yield* invalid("options must be an object")
    const supported: ReadonlyArray<string> = SUPPORTED_OPTIONS
    const unsupported = Object.keys(options).filter((key) =>
      (options as Record<string, unknown>)[key] !== undefined && !supported.includes(key)
    )
    if (unsupported.length > 0) {
      return yield* invalid(
        `Keel does not support the option${unsupported.length > 1 ? "s" : ""} ${unsupported.join(", ")}; ` +
          `it supports ${SUPPORTED_OPTIONS.join(", ")}`
      )
    }
    if (options.env !== undefined && !isRecord(options.env)) return yield* invalid("env must be an object of variables")
    for (const key of ["cwd", "model", "fallbackModel", "resume", "sessionId", "agent"] as const) {
      if (options[key] !== undefined && typeof options[key] !== "string") return yield* invalid(`${key} must be a string`)
    }
    for (const key of ["allowedTools", "disallowedTools", "additionalDirectories"] as const) {
      if (options[key] !== undefined && !isStringArray(options[key])) return yield* invalid(`${key} must be an array of strings`)
    }
    const cwd = path.resolve(options.cwd ?? process.cwd())
    if (!fs.existsSync(cwd) || !fs.statSync(cwd).isDirectory()) return yield* invalid(`cwd ${cwd} is not a directory`)
    const mode = options.permissionMode
    if (mode !== undefined && !Permissions.MODES.includes(mode)) {
      return yield* invalid(`permissionMode ${JSON.stringify(mode)} is not one of Keel's modes: ${Permissions.MODES.join(", ")}`)
    }
    if (mode === "bypassPermissions" && options.allowDangerouslySkipPermissions !== true) {
      return yield* invalid(`permissionMode "bypassPermissions" needs allowDangerouslySkipPermissions: true`)
    }
    let tools: ReadonlyArray<string> | undefined
    if (Array.isArray(options.tools)) {
      if (!isStringArray(options.tools)) return yield* invalid("tools must be an array of built-in tool names")
      const unknown = options.tools.filter((t) => !builtinToolNames.includes(t))
      if (unknown.length > 0) {
        return yield* invalid(`tools names no built-in tool ${unknown.join(", ")}; the tools are ${builtinToolNames.join(", ")}`)
      }
      tools = options.tools
    } else if (
      options.tools !== undefined &&
      !(isRecord(options.tools) && options.tools.type === "preset" && options.tools.preset === "claude_code")
    ) {
      return yield* invalid(`tools must be an array of tool names or { type: "preset", preset: "claude_code" }`)
    }
    let systemPrompt: string | undefined
    let appendSystemPrompt: string | undefined
    const prompt = options.systemPrompt
    if (typeof prompt === "string") systemPrompt = prompt
    else if (prompt !== undefined) {
      if (!isRecord(prompt) || prompt.type !== "preset" || prompt.preset !== "claude_code") {
        return yield* invalid(`systemPrompt must be a string or { type: "preset", preset: "claude_code", append? }`)
      }
      appendSystemPrompt = prompt.append
    }
    for (const key of ["maxTurns", "maxBudgetUsd"] as const) {
      const n = options[key]
      const whole = key === "maxTurns"
      if (n !== undefined && (typeof n !== "number" || !Number.isFinite(n) || n <= 0 || (whole && !Number.isInteger(n)))) {
        return yield* invalid(`${key} must be a ${whole ? "positive whole number" : "positive amount of USD"}, got ${String(n)}`)
      }
    }
    const fallbackModels = options.fallbackModel?.split(",").map((m) => m.trim()).filter((m) => m.length > 0)
    if (fallbackModels !== undefined && fallbackModels.length === 0) return yield* invalid("fallbackModel names no model")
    if (options.resume !== undefined && options.continue === true) {
      return yield* invalid(
        "resume and continue cannot be used together: resume picks a session by id, continue the latest one of cwd"
      )
    }
    if (options.forkSession === true && options.resume === undefined && options.continue !== true) {
      return yield* invalid("forkSession needs resume or continue: it forks the session they pick")
    }
    if (options.resumeSessionAt !== undefined) {
      if (typeof options.resumeSessionAt !== "string" || options.resumeSessionAt.trim() === "") {
        return yield* invalid("resumeSessionAt must be the uuid of a user or assistant message of the session")
      }
      if (options.resume === undefined && options.continue !== true) {
        return yield* invalid("resumeSessionAt needs resume or continue, and forkSession: it forks the session they pick at that message")
      }
      if (options.forkSession !== true) {
        return yield* invalid("resumeSessionAt needs forkSession: the history up to that message goes to a new session (set forkSession: true)")
      }
    }
    if (options.sessionId !== undefined && !UUID.test(options.sessionId)) {
      return yield* invalid(`sessionId must be a UUID, got ${JSON.stringify(options.sessionId)}`)
    }
    const resuming = options.resume !== undefined || options.continue === true
    if (options.sessionId !== undefined && resuming && options.forkSession !== true) {
      return yield* invalid("sessionId with resume or continue needs forkSession: a resumed session keeps its id")
    }
    if (options.settings !== undefined && typeof options.settings !== "string" && !isRecord(options.settings)) {
      return yield* invalid("settings must be a settings file's path, JSON text, or an object of settings")
    }
    const sources = options.settingSources
    if (
      sources !== undefined &&
      (!isStringArray(sources) || sources.some((s) => s !== "user" && s !== "project" && s !== "local"))
    ) {
      return yield* invalid(`settingSources must be an array of "user", "project", "local", got ${JSON.stringify(sources)}`)
    }
    const thinking = yield* ThinkingOptions.resolve(options)
    const servers = options.mcpServers ?? {}
    if (!isRecord(servers)) return yield* invalid("mcpServers must be an object of server configs by name")
    for (const [name, server] of Object.entries(servers)) {
      if (!isRecord(server)) return yield* invalid(`mcpServers.${name} must be a server config object`)
      if ((server as { readonly type?: unknown }).type === "sdk" || "instance" in server) {
        return yield* invalid(
          `mcpServers.${name}: Keel does not run in-process (sdk) MCP servers; give a stdio, http or sse server`
        )
      }
    }
    const jsonSchema = yield* Effect.catchAll(JsonSchemaOption.fromOutputFormat(options.outputFormat), invalid)
    const hooks = options.hooks === undefined ? { config: undefined } : QueryHooks.fromOption(options.hooks)
    if ("problems" in hooks) return yield* invalid(`Keel cannot run these hooks: ${hooks.problems.join("; ")}`)
    return {
      runtime: {
        hookCallbacks: hooks.config,
        cwd,
        agents: options.agents,
        agentsOrigin: "query() option agents",
        agent: options.agent,
        agentOrigin: "query() option agent",
        debug: options.debug === true,
        model: options.model,
        fallbackModels,
        maxTurns: options.maxTurns,
        maxBudgetUsd: options.maxBudgetUsd,
        allowedTools: options.allowedTools ?? [],
        disallowedTools: options.disallowedTools ?? [],
        permissionMode: mode,
        tools,
        addDirs: options.additionalDirectories ?? [],
        mcpConfig: Object.keys(servers).length > 0 ? [JSON.stringify({ mcpServers: servers })] : [],
        strictMcpConfig: options.strictMcpConfig === true,
        includePartialMessages: options.includePartialMessages === true,
        systemPrompt,
        appendSystemPrompt,
        resume: options.resume,
        continue: options.continue === true,
        forkSession: options.forkSession === true,
        resumeSessionAt: options.resumeSessionAt,
        sessionId: options.sessionId,
        sessionPersistence: options.persistSession !== false,
        record: (env ?? process.env).KEEL_RECORD === "1",
        ...thinking,
        canUseTool,
        settings: isRecord(options.settings) ? JSON.stringify(options.settings) : options.settings,
        settingSources: sources,
        allowDangerouslySkipPermissions: options.allowDangerouslySkipPermissions === true,
        // Always an environment of the query's own: the settings' `env` goes over it, never over `process.env`.
        env: env ?? { ...process.env },
        jsonSchema
      },
      signal: options.abortController?.signal
    }
  })

/** The run's environment: `process.env` with `options.env` over it, unset keys removed (`undefined` without `env`). */
export const environment = (options: Options): Record<string, string> | undefined => {
  if (!isRecord(options.env)) return undefined
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries({ ...process.env, ...options.env })) if (typeof v === "string") out[k] = v
  return out
}

/** Configuration from `env` as `ConfigProvider.fromEnv` reads `process.env`. */
export const providerOf = (env: Readonly<Record<string, string>>): ConfigProvider.ConfigProvider =>
  ConfigProvider.fromMap(new Map(Object.entries(env)), { pathDelim: "_", seqDelim: "," })
