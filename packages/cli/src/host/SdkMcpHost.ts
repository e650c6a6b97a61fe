/**
 * In-process MCP servers of a Claude Agent SDK host (`createSdkMcpServer`, passed in `mcpServers`):
 * the host names them in its `initialize` (`sdkMcpServers`, with `sdkMcpServerConfigs` and the
 * handshakes it captured, `sdkMcpServerManifests`), and every MCP message to them travels through
 * the host as an `mcp_message` control request, whose success response carries the server's
 * JSON-RPC response (`mcp_response`). The server's own messages come the other way, as the host's
 * `mcp_message` requests, acknowledged with an empty success. Keel connects them like any MCP
 * server (see `@keel/tools` `HostTransport`): their tools are offered as `mcp__<server>__<tool>`.
 *
 * @since 0.1.0
 */
import { HostLink, type McpConfig, McpServers } from "@keel/tools"
import type { ConfigError } from "effect/ConfigError"
import * as Effect from "effect/Effect"
import type * as HostChannel from "./HostChannel.js"

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The names `initialize` gives its in-process servers. */
const namesOf = (initialize: Record<string, unknown>): ReadonlyArray<string> =>
  Array.isArray(initialize.sdkMcpServers) ? initialize.sdkMcpServers.filter((n): n is string => typeof n === "string") : []

/** The SDK ignores a per-server `timeout` under one second, and so does Keel. */
const MIN_TIMEOUT_MS = 1000

/**
 * What of the servers' settings (`sdkMcpServerConfigs`) Keel does not honour, by name
 * (`sdkMcpServerConfigs.<server>.<key>`): everything but `timeout`. Empty: all is honoured.
 *
 * @category Checking
 */
export const unsupported = (initialize: Record<string, unknown>): ReadonlyArray<string> => {
  const configs = initialize.sdkMcpServerConfigs
  if (configs === undefined || configs === null) return []
  if (!isRecord(configs)) return ["sdkMcpServerConfigs (not an object)"]
  return Object.entries(configs).flatMap(([server, settings]) =>
    isRecord(settings)
      ? Object.keys(settings).filter((key) => key !== "timeout").map((key) => `sdkMcpServerConfigs.${server}.${key}`)
      : [`sdkMcpServerConfigs.${server} (not an object)`]
  )
}

/**
 * The servers `initialize` names, as MCP servers of type `sdk`, with their `timeout` and captured
 * handshake. A server named twice is taken once.
 *
 * @category Reading
 */
export const serversOf = (initialize: Record<string, unknown>): ReadonlyArray<McpConfig.Server> => {
  const configs = isRecord(initialize.sdkMcpServerConfigs) ? initialize.sdkMcpServerConfigs : {}
  const manifests = isRecord(initialize.sdkMcpServerManifests) ? initialize.sdkMcpServerManifests : {}
  return [...new Set(namesOf(initialize))].map((name) => {
    const settings = configs[name]
    const timeout = isRecord(settings) && typeof settings.timeout === "number" && settings.timeout >= MIN_TIMEOUT_MS
      ? Math.floor(settings.timeout)
      : undefined
    const manifest = manifests[name]
    const captured = isRecord(manifest) && isRecord(manifest.initializeResult)
      ? {
        initializeResult: manifest.initializeResult,
        toolsListResult: isRecord(manifest.toolsListResult) ? manifest.toolsListResult : undefined
      }
      : undefined
    return {
      name,
      config: { type: "sdk", timeout, manifest: captured },
      source: "the Agent SDK host's initialize",
      missingVariables: []
    }
  })
}

/** What became of a server's message from the host. @category Models */
export type Delivery = "delivered" | "unknown-server" | "invalid"

/** @category Models */
export interface Service {
  /** The link the servers' transports use. */
  readonly link: HostLink.HostLink
  /**
   * Hands a server's own message (the host's `mcp_message` request) to Keel's client of it. (An
   * Effect: checking that it is JSON-RPC loads the MCP SDK's schemas, already loaded once a client
   * is listening.)
   */
  readonly deliver: (server: string, message: unknown) => Effect.Effect<Delivery>
}

/**
 * The link over `channel`. A message waits for the host's answer at most the longer of the MCP
 * start-up and tool-call timeouts (`MCP_TIMEOUT`, `MCP_TOOL_TIMEOUT`); the client's own timeouts
 * usually end the wait first, and withdraw the request from the host.
 *
 * @category Constructors
 */
export const make = (channel: HostChannel.Service): Effect.Effect<Service, ConfigError> =>
  Effect.gen(function*() {
    const timeout = Math.max(yield* McpServers.startupTimeoutConfig, yield* McpServers.toolTimeoutConfig)
    const receivers = new Map<string, (message: HostLink.Message) => void>()
    const link: HostLink.HostLink = {
      send: (server, message) =>
        channel.request({ subtype: "mcp_message", server_name: server, message }, timeout).pipe(
          Effect.map((answer) => (isRecord(answer) ? answer.mcp_response : undefined)),
          Effect.mapError((error) => new HostLink.HostLinkError({ message: error.message }))
        ),
      listen: (server, receive) => {
        receivers.set(server, receive)
        return () => {
          if (receivers.get(server) === receive) receivers.delete(server)
        }
      }
    }
    const deliver = (server: string, message: unknown): Effect.Effect<Delivery> =>
      receivers.has(server)
        ? Effect.map(HostLink.toMessage(message), (parsed): Delivery => {
          const receive = receivers.get(server)
          if (receive === undefined) return "unknown-server"
          if (parsed === undefined) return "invalid"
          receive(parsed)
          return "delivered"
        })
        : Effect.succeed("unknown-server")
    return { link, deliver }
  })
