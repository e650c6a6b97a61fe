/**
 * The link to MCP servers in an Agent SDK host's own process (see `HostTransport`): how a message
 * reaches such a server through the host and comes back, and its error. A module of its own, free
 * of the MCP SDK, so that a host can be served without loading the SDK until a server connects.
 *
 * @since 0.1.0
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** The link could not carry a message (the host refused it, or is gone). @category Errors */
export class HostLinkError extends Schema.TaggedError<HostLinkError>("@keel/tools/HostLinkError")("HostLinkError", {
  message: Schema.String
}) {}

/** One JSON-RPC message (MCP's). @category Models */
export type Message = JSONRPCMessage

/**
 * How messages reach a server in the host's process and come back.
 *
 * @category Models
 */
export interface HostLink {
  /**
   * Sends one JSON-RPC message to `server` through the host, and succeeds with what the host
   * answered (for a request, the server's JSON-RPC response). Interrupting it withdraws the message
   * from the host.
   */
  readonly send: (server: string, message: Message) => Effect.Effect<unknown, HostLinkError>
  /** Where the server's own messages to Keel go, until the returned function is called. */
  readonly listen: (server: string, receive: (message: Message) => void) => () => void
}

/** What the host captured of the server's handshake (the SDK's `sdkMcpServerManifests` entry). @category Models */
export interface Manifest {
  readonly initializeResult: Record<string, unknown>
  readonly toolsListResult?: Record<string, unknown> | undefined
}

/**
 * `u` as a JSON-RPC message, or `undefined` when it is not one (the MCP SDK's schema, loaded on
 * first use).
 *
 * @category Decoding
 */
export const toMessage = (u: unknown): Effect.Effect<Message | undefined> =>
  Effect.map(Effect.promise(() => import("./HostTransport.js")), (transport) => transport.toMessage(u))
