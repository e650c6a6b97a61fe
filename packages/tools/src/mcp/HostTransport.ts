/**
 * An MCP `Transport` to a server that lives in the host's own process (a Claude Agent SDK host's
 * `createSdkMcpServer`), carried by a {@link HostLink}: each JSON-RPC message Keel's MCP client
 * sends goes to the host (over stream-json, as an `mcp_message` control request), and a request's
 * answer (the host's `mcp_response`) comes back to the client as the server's response, matched by
 * its JSON-RPC id. The server's own messages reach the client through the link's `listen`.
 *
 * Every wait is bounded: a request the host does not answer within `timeout` (under `Clock`), a
 * host that answers with an error or with no JSON-RPC response, and a link that is gone each come
 * back to the client as a JSON-RPC error response naming the server, so the client's request fails
 * with that reason instead of hanging. The client's `notifications/cancelled` (its own timeout, or
 * a tool call interrupted) withdraws the request from the host, and is passed on to the server.
 *
 * When the host already captured the server's handshake (the SDK's `sdkMcpServerManifests`), the
 * client's first `initialize` and `tools/list` are answered from that manifest, as Claude Code
 * does, and only later requests (tool calls) cross the link.
 *
 * @since 0.1.0
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  ErrorCode,
  isJSONRPCNotification,
  isJSONRPCRequest,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  JSONRPCResponseSchema,
  type RequestId
} from "@modelcontextprotocol/sdk/types.js"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Runtime from "effect/Runtime"
import * as HostLink from "./HostLink.js"

export {
  /** The link could not carry a message (the host refused it, or is gone). @category Errors */
  HostLinkError
} from "./HostLink.js"
/** How messages reach a server in the host's process and come back. @category Models */
export type { HostLink, Manifest } from "./HostLink.js"

/** Options of {@link HostTransport}. @category Models */
export interface Options {
  /** Most time one request may wait for the host's answer. */
  readonly timeout: Duration.DurationInput
  /** The handshake the host captured, answered locally. */
  readonly manifest?: HostLink.Manifest | undefined
  /** Where the waits run (their `Clock`); default the default runtime. */
  readonly runtime?: Runtime.Runtime<never> | undefined
}

/** One JSON-RPC message (MCP's). @category Models */
export type Message = HostLink.Message

/** `u` as a JSON-RPC message, or `undefined` when it is not one. @category Decoding */
export const toMessage = (u: unknown): Message | undefined => {
  const parsed = JSONRPCMessageSchema.safeParse(u)
  return parsed.success ? parsed.data : undefined
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * An MCP transport to the server `server` over `link`.
 *
 * @category Constructors
 */
export class HostTransport implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: ((message: JSONRPCMessage) => void) | undefined

  private readonly pending = new Map<RequestId, Fiber.RuntimeFiber<void>>()
  private readonly timeout: Duration.Duration
  private readonly runtime: Runtime.Runtime<never>
  private capturedInitialize: Record<string, unknown> | undefined
  private capturedTools: Record<string, unknown> | undefined
  private initializedLocally = false
  private unlisten: (() => void) | undefined
  private closed = false

  constructor(readonly server: string, private readonly link: HostLink.HostLink, options: Options) {
    this.timeout = Duration.decode(options.timeout)
    this.runtime = options.runtime ?? Runtime.defaultRuntime
    this.capturedInitialize = options.manifest?.initializeResult
    this.capturedTools = options.manifest?.toolsListResult
  }

  async start(): Promise<void> {
    this.unlisten = this.link.listen(this.server, (message) => this.onmessage?.(message))
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) throw new Error(`the connection to MCP server ${this.server} is closed`)
    if (isJSONRPCRequest(message)) {
      const local = this.fromManifest(message.method, message.params)
      if (local !== undefined) {
        queueMicrotask(() => this.onmessage?.({ jsonrpc: "2.0", id: message.id, result: local }))
        return
      }
      this.request(message.id, message)
      return
    }
    if (isJSONRPCNotification(message)) {
      // The host's server took its `initialized` with the captured handshake.
      if (message.method === "notifications/initialized" && this.initializedLocally) return
      if (message.method === "notifications/cancelled") {
        const id = (message.params as { requestId?: RequestId } | undefined)?.requestId
        const fiber = id === undefined ? undefined : this.pending.get(id)
        if (fiber !== undefined) {
          this.pending.delete(id!)
          Runtime.runFork(this.runtime)(Fiber.interrupt(fiber))
        }
      }
    }
    await Runtime.runPromise(this.runtime)(this.bounded(this.link.send(this.server, message)).pipe(
      Effect.catchAll((error) => Effect.sync(() => this.onerror?.(new Error(error.message))))
    ))
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    const fibers = [...this.pending.values()]
    this.pending.clear()
    await Runtime.runPromise(this.runtime)(Fiber.interruptAll(fibers))
    this.unlisten?.()
    this.onclose?.()
  }

  /** The captured answer to `method`, each used once; `undefined` when there is none. */
  private fromManifest(method: string, params: unknown): Record<string, unknown> | undefined {
    if (method === "initialize" && this.capturedInitialize !== undefined) {
      const result = this.capturedInitialize
      this.capturedInitialize = undefined
      this.initializedLocally = true
      return result
    }
    const paged = isRecord(params) && params.cursor !== undefined
    if (method === "tools/list" && !paged && this.capturedTools !== undefined) {
      const result = this.capturedTools
      this.capturedTools = undefined
      return result
    }
    return undefined
  }

  private bounded<A>(effect: Effect.Effect<A, HostLink.HostLinkError>): Effect.Effect<A, HostLink.HostLinkError> {
    return Effect.timeoutFail(effect, {
      duration: this.timeout,
      onTimeout: () =>
        new HostLink.HostLinkError({
          message: `the host did not answer within ${Duration.format(this.timeout)}`
        })
    })
  }

  /** Sends a request, and hands its answer (or why there is none) to the client as the response. */
  private request(id: RequestId, message: JSONRPCMessage): void {
    const failure = (reason: string): JSONRPCMessage => ({
      jsonrpc: "2.0",
      id,
      error: { code: ErrorCode.InternalError, message: `MCP server ${this.server} (in the host's process): ${reason}` }
    })
    const answered = this.bounded(this.link.send(this.server, message)).pipe(
      Effect.map((answer): JSONRPCMessage => {
        const parsed = JSONRPCResponseSchema.safeParse(answer)
        if (!parsed.success) return failure("the host's answer is not a JSON-RPC response")
        if (parsed.data.id !== id) return failure(`the host answered request ${String(parsed.data.id)}, not ${String(id)}`)
        return parsed.data
      }),
      Effect.catchAll((error) => Effect.succeed(failure(error.message))),
      Effect.flatMap((response) =>
        Effect.sync(() => {
          this.pending.delete(id)
          this.onmessage?.(response)
        })
      )
    )
    const fiber = Runtime.runFork(this.runtime)(answered)
    // An answer that came at once has already been handed over.
    if (fiber.unsafePoll() === null) this.pending.set(id, fiber)
  }
}
