/**
 * The embedding facade for TypeScript programs that do not use Effect: `query({ prompt, options })`
 * in the Claude Agent SDK's shape. It returns a {@link Query}, an `AsyncGenerator` of the messages
 * headless `stream-json` prints (`system`/`init`, `assistant`, `user`, `stream_event`, one `result`
 * per turn, ...), with `interrupt()`, `setModel()` and `close()`; `options` takes the Agent SDK's
 * names and meanings for what Keel supports.
 *
 * Inside it is the same Layer graph and session as `keel -p` (`Runtime`), run as one Effect stream:
 * nothing starts until the first `next()`; the stream is drained into a small bounded queue, so it
 * runs at most {@link BUFFER} messages ahead of the consumer; `return()` (a `break` out of
 * `for await`) interrupts it, which stops the running turn (its HTTP request is aborted) and closes
 * the MCP servers. Errors before a turn (no API key, invalid settings, a bad MCP config, an option
 * Keel does not support) reject `next()` with a {@link QueryError} whose message is the line `keel`
 * would print.
 *
 * @since 0.1.0
 */
import { AnthropicModel, Message, Permissions, type SdkMessage, type Session } from "@keel/core"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Cause from "effect/Cause"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { builtinToolNames } from "./Flags.js"
import * as Runtime from "./Runtime.js"

// ---------------------------------------------------------------------------------------------
// Types, in the Agent SDK's names (sdk.d.ts) for the part Keel supports
// ---------------------------------------------------------------------------------------------

/** Every message a query yields (Keel's `SdkMessage`, shaped as the Agent SDK's `SDKMessage`). @category Models */
export type SDKMessage = SdkMessage.SdkMessage

/** Permission modes Keel has (the Agent SDK's, without `auto`). @category Models */
export type PermissionMode = "default" | "acceptEdits" | "bypassPermissions" | "plan" | "dontAsk"

/**
 * What a `canUseTool` callback answers: allow (optionally with a changed input), or deny with the
 * message the model is told; `interrupt: true` also stops the turn. (The Agent SDK's
 * `updatedPermissions` are not applied; Keel has no rules to update from the callback.)
 *
 * @category Models
 */
export type PermissionResult =
  | {
    readonly behavior: "allow"
    readonly updatedInput?: Record<string, unknown>
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
 * A user message of streaming input (the Agent SDK's `SDKUserMessage`): one turn each. Content may
 * be a string (slash commands and `@path` mentions apply, as for a string prompt) or content blocks
 * (sent as they are).
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
  readonly uuid?: string
  readonly session_id?: string
}

/**
 * Options of {@link query}: the Agent SDK's `Options`, the keys Keel supports, with their meanings.
 * Any other key (`hooks`, `agents`, `settingSources`, `outputFormat`, `thinking`, ...) rejects the
 * query with a {@link QueryError} rather than being ignored.
 *
 * @category Models
 */
export interface Options {
  /** Aborting it interrupts the running turn (its `result` is still yielded) and ends the query. */
  readonly abortController?: AbortController
  /** Folders besides `cwd` that file tools may use without asking (relative ones resolve against `cwd`). */
  readonly additionalDirectories?: Array<string>
  /** Permission rules allowed without asking, e.g. `"Bash(git status:*)"`, `"Edit"`, `"mcp__server"`. */
  readonly allowedTools?: Array<string>
  /** Required with `permissionMode: "bypassPermissions"`, as in the Agent SDK. */
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
  /** Default: the settings' `defaultMode`, else `default`. */
  readonly permissionMode?: PermissionMode
  /** Save the session's transcript under `KEEL_HOME` (default true). */
  readonly persistSession?: boolean
  /** The id of a saved session of `cwd` to continue. */
  readonly resume?: string
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
  "allowedTools",
  "allowDangerouslySkipPermissions",
  "canUseTool",
  "continue",
  "cwd",
  "debug",
  "disallowedTools",
  "env",
  "fallbackModel",
  "forkSession",
  "includePartialMessages",
  "maxBudgetUsd",
  "maxTurns",
  "mcpServers",
  "model",
  "permissionMode",
  "persistSession",
  "resume",
  "sessionId",
  "strictMcpConfig",
  "systemPrompt",
  "tools"
]

/**
 * A running query: iterate it (`for await`) for its messages. Leaving the loop early, `return()`
 * and `close()` stop the running turn and close everything the query started (MCP servers, HTTP
 * connections).
 *
 * @category Models
 */
export interface Query extends AsyncGenerator<SDKMessage, void> {
  /** Stops the running turn, if any: it ends with an `error_during_execution` result. Later streamed messages still run. */
  interrupt(): Promise<void>
  /** Switches later model calls to `model`; without one, back to the model the query started with. */
  setModel(model?: string): Promise<void>
  /** Ends the query now, as `return()` does, without waiting. */
  close(): void
}

/** How many messages the run may get ahead of the consumer. @category Constants */
export const BUFFER = 16

/**
 * Why a query could not run: an option Keel does not support or a value it cannot use (`code` 2),
 * or a failure before or outside a turn (`code` 1 or 2, as `keel`'s exit code): the message is
 * the line `keel` would print, e.g. that `ANTHROPIC_API_KEY` is not set.
 *
 * @category Errors
 */
export class QueryError extends Schema.TaggedError<QueryError>("@keel/cli/QueryError")("QueryError", {
  message: Schema.String,
  code: Schema.Literal(1, 2)
}) {}

/** A failure of the caller's prompt iterable, rethrown as it was. */
class PromptFailure extends Data.TaggedError("PromptFailure")<{ readonly error: unknown }> {}

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

/** What the options resolve to. */
interface Resolved {
  readonly runtime: Runtime.Options
  readonly signal: AbortSignal | undefined
}

const invalid = (message: string) => Effect.fail(new QueryError({ message: `query(): ${message}`, code: 2 }))

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const isStringArray = (u: unknown): u is ReadonlyArray<string> => Array.isArray(u) && u.every((s) => typeof s === "string")

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The checks plain JavaScript callers do not get from the types, and the mapping onto `Runtime.Options`. */
const resolve = (
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
    for (const key of ["cwd", "model", "fallbackModel", "resume", "sessionId"] as const) {
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
    if (options.sessionId !== undefined && !UUID.test(options.sessionId)) {
      return yield* invalid(`sessionId must be a UUID, got ${JSON.stringify(options.sessionId)}`)
    }
    const resuming = options.resume !== undefined || options.continue === true
    if (options.sessionId !== undefined && resuming && options.forkSession !== true) {
      return yield* invalid("sessionId with resume or continue needs forkSession: a resumed session keeps its id")
    }
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
    return {
      runtime: {
        cwd,
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
        sessionId: options.sessionId,
        sessionPersistence: options.persistSession !== false,
        canUseTool,
        env
      },
      signal: options.abortController?.signal
    }
  })

/** The run's environment: `process.env` with `options.env` over it, unset keys removed (`undefined` without `env`). */
const environment = (options: Options): Record<string, string> | undefined => {
  if (!isRecord(options.env)) return undefined
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries({ ...process.env, ...options.env })) if (typeof v === "string") out[k] = v
  return out
}

/** Configuration from `env` as `ConfigProvider.fromEnv` reads `process.env`. */
const providerOf = (env: Readonly<Record<string, string>>): ConfigProvider.ConfigProvider =>
  ConfigProvider.fromMap(new Map(Object.entries(env)), { pathDelim: "_", seqDelim: "," })

// ---------------------------------------------------------------------------------------------
// The run
// ---------------------------------------------------------------------------------------------

/** Completes when `signal` aborts (at once if it has). */
const abortedBy = (signal: AbortSignal): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (signal.aborted) return resume(Effect.void)
    const onAbort = () => resume(Effect.void)
    signal.addEventListener("abort", onAbort, { once: true })
    return Effect.sync(() => signal.removeEventListener("abort", onAbort))
  })

/**
 * The caller's prompt messages, pulled one at a time (the next only once the previous turn is
 * done). Unlike `Stream.fromAsyncIterable`, closing does not wait for the iterator's `return()`: a
 * generator waiting for its next input would keep the query from closing.
 */
const promptsOf = (iterable: AsyncIterable<SDKUserMessage>): Stream.Stream<SDKUserMessage, PromptFailure> =>
  Stream.unwrapScoped(Effect.map(
    Effect.acquireRelease(
      Effect.try({ try: () => iterable[Symbol.asyncIterator](), catch: (error) => new PromptFailure({ error }) }),
      (iterator) =>
        Effect.sync(() => {
          Promise.resolve(iterator.return?.()).catch(() => undefined)
        })
    ),
    (iterator) =>
      Stream.repeatEffectOption(
        Effect.tryPromise({ try: () => iterator.next(), catch: (error) => Option.some(new PromptFailure({ error })) }).pipe(
          Effect.flatMap((next) => next.done === true ? Effect.fail(Option.none()) : Effect.succeed(next.value))
        )
      )
  ))

/** A streamed message as a session prompt: string content as a prompt, blocks as a `UserMessage`. */
const toPrompt = (input: SDKUserMessage): Effect.Effect<string | Message.UserMessage, QueryError> => {
  const bad = (why: string) =>
    Effect.fail(new QueryError({ message: `query(): a streamed prompt message ${why}`, code: 2 }))
  if (!isRecord(input) || input.type !== "user" || !isRecord(input.message) || input.message.role !== "user") {
    return bad(`must be { type: "user", message: { role: "user", content }, parent_tool_use_id: null }`)
  }
  if (input.shouldQuery === false) return bad("has shouldQuery: false; Keel runs a turn for every message")
  const content = input.message.content
  if (typeof content === "string") return Effect.succeed(content)
  return Message.decode({ role: "user", content }).pipe(
    Effect.flatMap((m) => m.role === "user" ? Effect.succeed(m) : bad("is not a user message")),
    Effect.catchTag("ParseError", (e) => bad(`has content Keel cannot read: ${e.message.split("\n")[0]}`))
  )
}

/** What the run tells the {@link Query} object once the session is open. */
interface Controls {
  readonly opened: (session: Session.Service, defaultModel: string) => void
  readonly model: () => string | undefined
}

/** The whole run as one stream: options, layers, session, then one turn per prompt. */
const run = (
  prompt: string | AsyncIterable<SDKUserMessage>,
  options: Options,
  env: Readonly<Record<string, string>> | undefined,
  controls: Controls
): Stream.Stream<SDKMessage, QueryError | PromptFailure> => {
  let session: Session.Service | undefined
  // The Agent SDK's callback shape over Keel's (`interrupt: true` also stops the turn).
  const canUseTool: Permissions.CanUseTool | undefined = options.canUseTool === undefined ? undefined : (() => {
    const ask = options.canUseTool
    return async (toolName, input, { reason, signal, toolUseId }) => {
      const answer = await ask(toolName, isRecord(input) ? input : {}, {
        signal,
        toolUseID: toolUseId,
        requestId: crypto.randomUUID(),
        decisionReason: reason
      })
      if (answer === null) {
        return { behavior: "deny", message: `Permission to use ${toolName} was denied: the permission callback gave no answer.` }
      }
      if (answer.behavior === "allow") return answer
      if (answer.interrupt === true && session !== undefined) Effect.runFork(session.interrupt)
      return { behavior: "deny", message: answer.message }
    }
  })()
  const setup = Effect.gen(function*() {
    const resolved = yield* resolve(options, env, canUseTool)
    const opened = Effect.gen(function*() {
      const requested = controls.model()
      const runtime = requested === undefined ? resolved.runtime : { ...resolved.runtime, model: requested }
      const context = yield* Layer.build(Runtime.layer(runtime))
      const { session: opened, warnings } = yield* Runtime.openSession(runtime).pipe(Effect.provide(context))
      session = opened
      // `setModel()` without a model goes back to this one: the session's own, unless `setModel` came before it opened.
      controls.opened(
        opened,
        requested === undefined ? opened.init.model : resolved.runtime.model ??
          (yield* AnthropicModel.modelConfig.pipe(Effect.orElseSucceed(() => opened.init.model)))
      )
      const notes = warnings.map((content): SdkMessage.Informational => ({
        type: "system",
        subtype: "informational",
        level: "warning",
        content,
        uuid: crypto.randomUUID(),
        session_id: opened.sessionId
      }))
      return turns(opened, notes, resolved.signal)
    })
    return yield* resolved.signal === undefined
      ? opened
      : Effect.raceFirst(opened, Effect.as(abortedBy(resolved.signal), Stream.empty))
  })

  /** One turn per prompt; after an abort, no further prompt is read. `warnings` follow the first `init`. */
  const turns = (
    session: Session.Service,
    warnings: ReadonlyArray<SDKMessage>,
    signal: AbortSignal | undefined
  ): Stream.Stream<SDKMessage, QueryError | PromptFailure> => {
    const prompts: Stream.Stream<string | Message.UserMessage, QueryError | PromptFailure> = typeof prompt === "string"
      ? Stream.make(prompt)
      : Stream.mapEffect(promptsOf(prompt), toPrompt)
    let pending = warnings
    return (signal === undefined ? prompts : Stream.interruptWhen(prompts, abortedBy(signal))).pipe(
      Stream.flatMap((p) => session.submit(p, { signal })),
      Stream.mapConcat((message) => {
        if (pending.length === 0 || message.type !== "system" || message.subtype !== "init") return [message]
        const out = [message, ...pending]
        pending = []
        return out
      })
    )
  }

  // Any other failure (no API key, invalid settings or MCP config, a defect) as `keel` would print it.
  return Stream.unwrapScoped(setup).pipe(
    Stream.catchAllCause((cause): Stream.Stream<never, QueryError | PromptFailure> => {
      if (Cause.isInterruptedOnly(cause)) return Stream.empty
      const failure = Cause.failureOption(cause)
      if (Option.isSome(failure) && (failure.value instanceof QueryError || failure.value instanceof PromptFailure)) {
        return Stream.fail(failure.value)
      }
      const described = Runtime.describeFailure(
        cause,
        options.debug === true,
        "set debug: true in the query options for the stack trace"
      )
      return Stream.fail(new QueryError({ message: described.lines.join("\n"), code: described.code }))
    })
  )
}

// ---------------------------------------------------------------------------------------------
// The AsyncGenerator
// ---------------------------------------------------------------------------------------------

type Item = Exit.Exit<SDKMessage, Option.Option<QueryError | PromptFailure>>

type State =
  | { readonly _tag: "Idle" }
  | { readonly _tag: "Running"; readonly scope: Scope.CloseableScope; readonly queue: Queue.Dequeue<Item> }
  | { readonly _tag: "Done" }

const DONE: IteratorReturnResult<void> = { done: true, value: undefined }

class KeelQuery implements Query {
  private state: State = { _tag: "Idle" }
  private closing: Promise<void> | undefined
  private session: Session.Service | undefined
  private defaultModel: string | undefined
  private requestedModel: string | undefined

  constructor(
    private readonly prompt: string | AsyncIterable<SDKUserMessage>,
    private readonly options: Options
  ) {}

  [Symbol.asyncIterator](): this {
    return this
  }

  async next(): Promise<IteratorResult<SDKMessage, void>> {
    if (this.state._tag === "Done") return DONE
    const state = this.state._tag === "Idle" ? (this.state = this.start()) : this.state
    const taken = await Effect.runPromiseExit(Queue.take(state.queue))
    // Interrupted: the queue was shut down by `return()` while this call waited.
    if (Exit.isFailure(taken)) return DONE
    const item = taken.value
    if (Exit.isSuccess(item)) return { done: false, value: item.value }
    await this.finish()
    const failure = Cause.failureOption(item.cause)
    if (Option.isSome(failure) && Option.isSome(failure.value)) {
      const error = failure.value.value
      throw error instanceof PromptFailure ? error.error : error
    }
    if (Option.isNone(failure)) throw Cause.squash(item.cause)
    return DONE
  }

  async return(): Promise<IteratorResult<SDKMessage, void>> {
    await this.finish()
    return DONE
  }

  async throw(error: unknown): Promise<IteratorResult<SDKMessage, void>> {
    await this.finish()
    throw error
  }

  async interrupt(): Promise<void> {
    if (this.session !== undefined) await Effect.runPromise(this.session.interrupt)
  }

  async setModel(model?: string): Promise<void> {
    if (this.session === undefined) {
      this.requestedModel = model
      return
    }
    const next = model ?? this.defaultModel
    if (next !== undefined) await Effect.runPromise(this.session.setModel(next))
  }

  close(): void {
    void this.finish()
  }

  /**
   * Starts the run: a fiber drains it into a bounded queue, in a scope of its own. With `env`, the
   * fiber (and every fiber it forks) reads configuration from that environment.
   */
  private start(): Extract<State, { readonly _tag: "Running" }> {
    const env = environment(this.options)
    const stream = run(this.prompt, this.options, env, {
      opened: (session, defaultModel) => {
        this.session = session
        this.defaultModel = defaultModel
      },
      model: () => this.requestedModel
    })
    const drain = Stream.toQueueOfElements(stream, { capacity: BUFFER })
    const scope = Effect.runSync(Scope.make())
    const queue = Effect.runSync(
      (env === undefined ? drain : Effect.withConfigProvider(drain, providerOf(env))).pipe(Scope.extend(scope))
    )
    return { _tag: "Running", scope, queue }
  }

  /** Ends the query: interrupts the run (its finalizers close the MCP servers and the HTTP request) and waits for it. */
  private finish(): Promise<void> {
    if (this.closing !== undefined) return this.closing
    const state = this.state
    this.state = { _tag: "Done" }
    this.closing = state._tag === "Running" ? Effect.runPromise(Scope.close(state.scope, Exit.void)) : Promise.resolve()
    return this.closing
  }
}

/**
 * Runs Keel as the Claude Agent SDK's `query()` does: `prompt` is one prompt (one turn), or an
 * `AsyncIterable` of user messages (streaming input: one turn per message, in one session, the next
 * message read once the previous turn's `result` is out). The returned {@link Query} yields the
 * session's messages; nothing runs before the first `next()`.
 *
 * @example
 * ```ts
 * import { query } from "@keel/cli"
 *
 * for await (const message of query({ prompt: "What files are here?", options: { cwd: "." } })) {
 *   if (message.type === "result") console.log(message.result)
 * }
 * ```
 *
 * @category Constructors
 */
export const query = (params: {
  readonly prompt: string | AsyncIterable<SDKUserMessage>
  readonly options?: Options
}): Query => new KeelQuery(params.prompt, params.options ?? {})
