/**
 * One MCP server's connection: its transport (a child process for a stdio server, HTTP for `http`
 * and `sse`, the host's control channel for a server in an Agent SDK host's process), the SDK client over it, the server's tools and its status. A connection lives in a
 * Scope: closing the scope closes the client; a stdio server's stdin is ended, then it gets SIGTERM
 * after 0.5 s and SIGKILL after 1.5 s more; an HTTP session is ended with a DELETE first. A server
 * that fails to start, or does not within the start-up timeout (under `Clock`), is closed at once
 * and reported `failed` (`needs-auth` for an HTTP 401) with why; one that exits later turns
 * `failed`, and its calls fail naming it. Stdio servers still running when the process exits
 * without closing them (Ctrl+C during start-up, a second Ctrl+C) are killed by an exit hook, so
 * none is orphaned.
 *
 * @since 0.1.0
 */
import { Session } from "@keel/core"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { type CallToolResult, ElicitRequestSchema, type ElicitResult, type Tool as McpToolInfo } from "@modelcontextprotocol/sdk/types.js"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import * as HostTransport from "./HostTransport.js"
import * as McpConfig from "./McpConfig.js"
import { DEFAULT_STARTUP_TIMEOUT_MS } from "./McpDefaults.js"
import { describeStartError, StartTimeout, withStderr } from "./McpStartError.js"
import { stop, STOP_GRACE_MS, track, TrackedStdioTransport, untrack } from "./McpStdioProcess.js"

/** Claude Code's default start-up timeout (`MCP_TIMEOUT`). @category Constants */
export { DEFAULT_STARTUP_TIMEOUT_MS }

/** Time a stdio server gets to exit after its stdin ends, then after SIGTERM, before SIGKILL. @category Constants */
export { STOP_GRACE_MS }

/** A server's status, in Claude Code's words. @category Models */
export type Status = "pending" | "connected" | "failed" | "needs-auth" | "closed"

/** A server's status and, unless connected, why. @category Models */
export interface State {
  readonly status: Status
  readonly error?: string | undefined
}

/** What a connection offers. @category Models */
export interface Connection {
  readonly server: McpConfig.Server
  /** The status now: a connected server that exits turns `failed`. */
  readonly state: Effect.Effect<State>
  /** The server's tools (none unless it connected). */
  readonly tools: ReadonlyArray<McpToolInfo>
  /** The server's name and version, as it reported them. */
  readonly serverInfo?: { readonly name: string; readonly version: string } | undefined
  /** The process id of a stdio server. */
  readonly pid?: number | undefined
  /** Calls a tool; rejects on transport errors, timeouts and when `signal` aborts. */
  readonly callTool: (
    name: string,
    args: Record<string, unknown>,
    options: { readonly signal: AbortSignal; readonly timeoutMs: number }
  ) => Promise<CallToolResult>
}

/** Options of {@link connect}. @category Models */
export interface Options {
  /** The working directory of stdio servers. */
  readonly cwd: string
  /** How long a server may take to start and list its tools (default {@link DEFAULT_STARTUP_TIMEOUT_MS}). */
  readonly startupTimeout?: Duration.DurationInput | undefined
  /** The environment stdio servers start with, before their config's `env` (default `process.env`). */
  readonly env?: McpConfig.Environment | undefined
  /**
   * Who answers a server's elicitation (its request for input from the user, MCP
   * `elicitation/create`); with it Keel declares the `elicitation` capability, without it servers
   * cannot ask. Aborting `signal` (the server or the turn gave up) withdraws the question.
   */
  readonly elicit?: ((request: Elicitation, signal: AbortSignal) => Promise<ElicitResult>) | undefined
  /** How servers in the host's process (`"type": "sdk"`) are reached; without it they fail to start. */
  readonly host?: HostTransport.HostLink | undefined
  /**
   * Most milliseconds a message to a host's server may wait for the host's answer (the tool call
   * timeout; at least the start-up timeout). The client's own timeouts usually end a wait first.
   */
  readonly hostTimeoutMs?: number | undefined
}

/** A server's request for input, as Keel passes it on. @category Models */
export interface Elicitation {
  readonly serverName: string
  readonly message: string
  readonly requestedSchema?: unknown
}

const makeTransport = (
  server: McpConfig.Server,
  options: Options,
  runtime: Runtime.Runtime<never>,
  onSpawn: (pid: number) => void
): { readonly transport: Transport; readonly stderr: () => string } => {
  const config = server.config
  if (McpConfig.isSdk(config)) {
    if (options.host === undefined) {
      throw new Error(
        "it lives in an Agent SDK host's process, and this run has no host to reach it through " +
          "(only a host speaking stream-json, whose initialize names it)"
      )
    }
    const startup = Duration.toMillis(Duration.decode(options.startupTimeout ?? DEFAULT_STARTUP_TIMEOUT_MS))
    const timeout = Math.max(startup, config.timeout ?? options.hostTimeoutMs ?? 0)
    return {
      transport: new HostTransport.HostTransport(server.name, options.host, { timeout, manifest: config.manifest, runtime }),
      stderr: () => ""
    }
  }
  if (McpConfig.isRemote(config)) {
    const init = { requestInit: { headers: { ...config.headers } } }
    const url = new URL(config.url)
    return {
      transport: config.type === "http" ? new StreamableHTTPClientTransport(url, init) : new SSEClientTransport(url, init),
      stderr: () => ""
    }
  }
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(options.env ?? process.env)) if (v !== undefined) env[k] = v
  Object.assign(env, config.env)
  const transport = new TrackedStdioTransport(
    { command: config.command, args: [...(config.args ?? [])], env, cwd: options.cwd, stderr: "pipe" },
    onSpawn
  )
  let tail = ""
  transport.stderr?.on("data", (chunk: Buffer) => {
    tail = (tail + chunk.toString("utf8")).slice(-4000)
  })
  return { transport, stderr: () => tail }
}

/** Every page of the server's tools (at most 100 pages), without those that only run as tasks. */
const listTools = async (client: Client, signal: AbortSignal, timeoutMs: number): Promise<Array<McpToolInfo>> => {
  if (client.getServerCapabilities()?.tools === undefined) return []
  const tools: Array<McpToolInfo> = []
  let cursor: string | undefined
  for (let page = 0; page < 100; page++) {
    const result = await client.listTools(cursor === undefined ? undefined : { cursor }, { signal, timeout: timeoutMs })
    tools.push(...result.tools)
    if (result.nextCursor === undefined || result.nextCursor === cursor) break
    cursor = result.nextCursor
  }
  return tools.filter((t) => t.execution?.taskSupport !== "required")
}

/** Why a server that uses unset variables without defaults is not started. */
const unsetVariables = (server: McpConfig.Server): string => {
  const [first, ...rest] = server.missingVariables
  return rest.length === 0
    ? `the environment variable ${first} is not set (used in ${server.source}); set it or write \${${first}:-default}`
    : `the environment variables ${server.missingVariables.join(", ")} are not set (used in ${server.source}); ` +
      `set them or give defaults (\${${first}:-default})`
}

/**
 * Starts and connects one server in the current scope. Never fails: a server that cannot be used
 * is a connection with status `failed` (or `needs-auth`), no tools, and its process already closed.
 *
 * @category Constructors
 */
export const connect = (server: McpConfig.Server, options: Options): Effect.Effect<Connection, never, Scope.Scope> =>
  Effect.gen(function*() {
    const timeout = Duration.decode(options.startupTimeout ?? DEFAULT_STARTUP_TIMEOUT_MS)
    const state = yield* Ref.make<State>({ status: "pending" })
    const unusable = (s: State): Connection => ({
      server,
      state: Ref.get(state),
      tools: [],
      callTool: () => Promise.reject(new Error(s.error ?? "not connected"))
    })
    if (server.missingVariables.length > 0) {
      const s: State = { status: "failed", error: unsetVariables(server) }
      yield* Ref.set(state, s)
      return unusable(s)
    }

    let pid: number | undefined
    let closing = false
    const runtime = yield* Effect.runtime<never>()
    const made = yield* Effect.try(() =>
      makeTransport(server, options, runtime, (p) => {
        pid = p
        // A process that only came up after its connection was given up on is being closed already.
        if (!closing) track(p)
      })
    ).pipe(Effect.either)
    if (made._tag === "Left") {
      const s: State = { status: "failed", error: String((made.left.error as Error)?.message ?? made.left.error) }
      yield* Ref.set(state, s)
      return unusable(s)
    }
    const { stderr, transport } = made.right
    const elicit = options.elicit
    const client = new Client(
      { name: "keel", version: Session.VERSION },
      { capabilities: elicit === undefined ? {} : { elicitation: {} } }
    )
    if (elicit !== undefined) {
      client.setRequestHandler(ElicitRequestSchema, (request, extra) => {
        const params = request.params as { readonly message?: unknown; readonly requestedSchema?: unknown }
        return elicit({
          serverName: server.name,
          message: typeof params.message === "string" ? params.message : "",
          ...(params.requestedSchema !== undefined ? { requestedSchema: params.requestedSchema } : {})
        }, extra.signal)
      })
    }
    client.onerror = () => {
      // Failures surface on the requests they break; the SDK reports others here (and would log them).
    }
    client.onclose = () => {
      if (pid !== undefined) untrack(pid)
      if (closing) return
      const exited = McpConfig.isSdk(server.config)
        ? "the host closed the connection"
        : McpConfig.isRemote(server.config)
        ? "the connection closed"
        : withStderr("the server process exited", stderr())
      Effect.runSync(Ref.set(state, { status: "failed", error: exited }))
    }
    // Closing runs once, however many times it is asked for (a failed start, then the finalizer).
    const close = yield* Effect.cached(Effect.gen(function*() {
      closing = true
      if (transport instanceof StreamableHTTPClientTransport && transport.sessionId !== undefined) {
        yield* Effect.timeoutOption(Effect.promise(() => transport.terminateSession().catch(() => undefined)), "2 seconds")
      }
      yield* Effect.all([
        Effect.promise(() => client.close().catch(() => undefined)),
        transport instanceof TrackedStdioTransport ? stop(transport, pid) : Effect.void
      ], { concurrency: "unbounded", discard: true })
      if (pid !== undefined) untrack(pid)
    }))
    yield* Effect.addFinalizer(() =>
      close.pipe(Effect.zipRight(Ref.update(state, (s): State => s.status === "connected" ? { status: "closed" } : s)))
    )

    const timeoutMs = Duration.toMillis(timeout)
    const started = yield* Effect.tryPromise({
      try: async (signal) => {
        await client.connect(transport, { signal, timeout: timeoutMs })
        return await listTools(client, signal, timeoutMs)
      },
      catch: (e) => e
    }).pipe(
      Effect.timeoutFail({ duration: timeout, onTimeout: () => new StartTimeout() }),
      Effect.either
    )
    if (started._tag === "Left") {
      const s = describeStartError(started.left, server, stderr(), timeout)
      yield* close
      yield* Ref.set(state, s)
      return { ...unusable(s), pid }
    }
    const current = yield* Ref.get(state)
    if (current.status === "pending") yield* Ref.set(state, { status: "connected" })
    const info = client.getServerVersion()
    return {
      server,
      state: Ref.get(state),
      tools: started.right,
      serverInfo: info === undefined ? undefined : { name: info.name, version: info.version },
      pid,
      callTool: (name, args, { signal, timeoutMs }) =>
        client.callTool({ name, arguments: args }, undefined, { signal, timeout: timeoutMs }) as Promise<CallToolResult>
    }
  })
