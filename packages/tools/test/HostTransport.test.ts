/**
 * The transport to an MCP server in the host's process, with the real MCP SDK on both sides: Keel's
 * `Client` over `HostTransport`, and a real `Server` behind a link that does what the Agent SDK
 * host does with `mcp_message` (a request's answer is the server's response with its id; other
 * messages are acknowledged with an empty result; the server's own messages come back through
 * `listen`). Timeouts run under TestClock.
 */
import { assert, describe, it } from "@effect/vitest"
import { HostTransport } from "@keel/tools/mcp"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import {
  CallToolRequestSchema,
  type JSONRPCMessage,
  ListToolsRequestSchema,
  ToolListChangedNotificationSchema
} from "@modelcontextprotocol/sdk/types.js"
import { Deferred, Effect, Fiber, Option, TestClock } from "effect"

const TOOLS = [{ name: "add", description: "Adds", inputSchema: { type: "object" as const, properties: { a: { type: "number" }, b: { type: "number" } } } }]

/** A real MCP server with one tool, `add`; a call with `slow: true` waits for `release`. */
const calcServer = (release: Promise<void> = Promise.resolve()) => {
  const server = new Server({ name: "calc", version: "1.0.0" }, { capabilities: { tools: { listChanged: true } } })
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }))
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const args = request.params.arguments as { a: number; b: number; slow?: boolean }
    if (args.slow === true) await release
    return { content: [{ type: "text", text: String(args.a + args.b) }] }
  })
  return server
}

/** What the host's side saw: every message sent through the link, by method (or "response"). */
interface Host {
  readonly link: HostTransport.HostLink
  readonly sent: Array<string>
  /** Makes the server send a message of its own to Keel (through `listen`). */
  readonly server: Server
}

/** The Agent SDK host's side, in process: the link delivers to `server` and answers as the SDK does. */
const hostOf = (server: Server): Effect.Effect<Host> =>
  Effect.promise(async () => {
    const [hostEnd, serverEnd] = InMemoryTransport.createLinkedPair()
    const waiting = new Map<unknown, (response: JSONRPCMessage) => void>()
    const listeners = new Map<string, (message: JSONRPCMessage) => void>()
    const sent: Array<string> = []
    hostEnd.onmessage = (message) => {
      const id = (message as { id?: unknown }).id
      if (!("method" in message) && waiting.has(id)) {
        waiting.get(id)!(message)
        waiting.delete(id)
      } else listeners.get("calc")?.(message)
    }
    await server.connect(serverEnd)
    await hostEnd.start()
    const link: HostTransport.HostLink = {
      send: (_server, message) =>
        Effect.promise(() => {
          sent.push("method" in message ? message.method : "response")
          if ("method" in message && "id" in message) {
            return new Promise<unknown>((resolve) => {
              waiting.set(message.id, resolve)
              void hostEnd.send(message)
            })
          }
          return hostEnd.send(message).then(() => ({ jsonrpc: "2.0", result: {}, id: 0 }))
        }),
      listen: (server, receive) => {
        listeners.set(server, receive)
        return () => listeners.delete(server)
      }
    }
    return { link, sent, server }
  })

const connect = (link: HostTransport.HostLink, options: Partial<HostTransport.Options> = {}) =>
  Effect.gen(function*() {
    const transport = new HostTransport.HostTransport("calc", link, {
      timeout: "5 seconds",
      runtime: yield* Effect.runtime<never>(),
      ...options
    })
    const client = new Client({ name: "keel", version: "0" })
    yield* Effect.promise(() => client.connect(transport))
    return { client, transport }
  })

const textOf = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0]!.text

describe("HostTransport", () => {
  it.live("without a captured handshake: initialize, tools/list and tools/call all cross the link, answers matched by id", () =>
    Effect.gen(function*() {
      let release: () => void = () => {}
      const host = yield* hostOf(calcServer(new Promise<void>((resolve) => (release = resolve))))
      const { client } = yield* connect(host.link)
      assert.deepStrictEqual((yield* Effect.promise(() => client.listTools())).tools.map((t) => t.name), ["add"])
      // The slow call's answer comes after the fast one's: each reaches its own request.
      const slow = client.callTool({ name: "add", arguments: { a: 1, b: 1, slow: true } })
      const fast = yield* Effect.promise(() => client.callTool({ name: "add", arguments: { a: 2, b: 3 } }))
      assert.strictEqual(textOf(fast), "5")
      release()
      assert.strictEqual(textOf(yield* Effect.promise(() => slow)), "2")
      assert.deepStrictEqual(host.sent, ["initialize", "notifications/initialized", "tools/list", "tools/call", "tools/call"])
      yield* Effect.promise(() => client.close())
    }))

  it.live("with the host's captured handshake: initialize and the first tools/list are answered locally, calls cross", () =>
    Effect.gen(function*() {
      const host = yield* hostOf(calcServer())
      const { client } = yield* connect(host.link, {
        manifest: {
          initializeResult: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "calc", version: "9.9.9" } },
          toolsListResult: { tools: TOOLS }
        }
      })
      assert.strictEqual(client.getServerVersion()?.version, "9.9.9")
      assert.deepStrictEqual((yield* Effect.promise(() => client.listTools())).tools.map((t) => t.name), ["add"])
      assert.strictEqual(textOf(yield* Effect.promise(() => client.callTool({ name: "add", arguments: { a: 20, b: 22 } }))), "42")
      // A second listing is the server's own, not the captured one.
      yield* Effect.promise(() => client.listTools())
      assert.deepStrictEqual(host.sent, ["tools/call", "tools/list"])
      yield* Effect.promise(() => client.close())
    }))

  it.live("the server's own messages reach the client through listen", () =>
    Effect.gen(function*() {
      const host = yield* hostOf(calcServer())
      const { client } = yield* connect(host.link)
      const changed = yield* Deferred.make<void>()
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => Effect.runPromise(Effect.asVoid(Deferred.succeed(changed, undefined))))
      yield* Effect.promise(() => host.server.sendToolListChanged())
      yield* Deferred.await(changed).pipe(Effect.timeout("5 seconds"))
      yield* Effect.promise(() => client.close())
    }))

  it.effect("the host refuses, or answers with something that is not a JSON-RPC response: the request fails naming the server and why", () =>
    Effect.gen(function*() {
      const refused = yield* connect({
        send: (_s, message) =>
          "method" in message && message.method === "tools/call"
            ? Effect.fail(new HostTransport.HostLinkError({ message: "the host refused the mcp_message request: SDK MCP server not found: calc" }))
            : Effect.succeed({ jsonrpc: "2.0", id: 0, result: {} }),
        listen: () => () => {}
      }, { manifest: { initializeResult: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "calc", version: "1" } } } })
      const error = yield* Effect.flip(Effect.tryPromise(() => refused.client.callTool({ name: "add", arguments: {} })))
      assert.include(String(error.error), "MCP server calc (in the host's process): the host refused the mcp_message request: SDK MCP server not found: calc")

      const garbled = yield* connect({
        send: () => Effect.succeed({ not: "a response" }),
        listen: () => () => {}
      }, { manifest: { initializeResult: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "calc", version: "1" } } } })
      const bad = yield* Effect.flip(Effect.tryPromise(() => garbled.client.callTool({ name: "add", arguments: {} })))
      assert.include(String(bad.error), "the host's answer is not a JSON-RPC response")

      const wrongId = yield* connect({
        send: () => Effect.succeed({ jsonrpc: "2.0", id: 999, result: { content: [] } }),
        listen: () => () => {}
      }, { manifest: { initializeResult: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "calc", version: "1" } } } })
      const mismatched = yield* Effect.flip(Effect.tryPromise(() => wrongId.client.callTool({ name: "add", arguments: {} })))
      assert.include(String(mismatched.error), "the host answered request 999, not 1")
    }))

  it.effect("a host that never answers: the request fails exactly at the timeout, and the wait is withdrawn", () =>
    Effect.gen(function*() {
      let withdrawn = 0
      const { client } = yield* connect({
        send: (_s, message) =>
          "id" in message ? Effect.onInterrupt(Effect.never, () => Effect.sync(() => withdrawn++)) : Effect.succeed({}),
        listen: () => () => {}
      }, { manifest: { initializeResult: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "calc", version: "1" } } } })
      const call = yield* Effect.fork(Effect.tryPromise(() => client.callTool({ name: "add", arguments: {} }, undefined, { timeout: 600_000 })))
      yield* TestClock.adjust("4999 millis")
      yield* Effect.yieldNow()
      assert.isTrue(Option.isNone(yield* Fiber.poll(call)), "still waiting before 5 s")
      yield* TestClock.adjust("1 millis")
      const error = yield* Effect.flip(Fiber.join(call))
      assert.include(String(error.error), "MCP server calc (in the host's process): the host did not answer within 5s")
      assert.strictEqual(withdrawn, 1)
    }))

  it.effect("the client's cancellation (an aborted call) withdraws the wait and is passed on to the server", () =>
    Effect.gen(function*() {
      const sent: Array<string> = []
      let withdrawn = 0
      const { client } = yield* connect({
        send: (_s, message) => {
          sent.push("method" in message ? message.method : "response")
          return "id" in message ? Effect.onInterrupt(Effect.never, () => Effect.sync(() => withdrawn++)) : Effect.succeed({})
        },
        listen: () => () => {}
      }, { manifest: { initializeResult: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "calc", version: "1" } } } })
      const controller = new AbortController()
      const call = client.callTool({ name: "add", arguments: {} }, undefined, { signal: controller.signal }).catch((e: Error) => e.message)
      yield* Effect.yieldNow()
      controller.abort("stop")
      assert.include(String(yield* Effect.promise(() => call)), "stop")
      yield* Effect.yieldNow()
      assert.strictEqual(withdrawn, 1)
      assert.deepStrictEqual(sent, ["tools/call", "notifications/cancelled"])
    }))

  it.effect("closing fails nothing silently: pending waits are withdrawn, later sends are refused", () =>
    Effect.gen(function*() {
      let withdrawn = 0
      const { client, transport } = yield* connect({
        send: (_s, message) => "id" in message ? Effect.onInterrupt(Effect.never, () => Effect.sync(() => withdrawn++)) : Effect.succeed({}),
        listen: () => () => {}
      }, { manifest: { initializeResult: { protocolVersion: "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "calc", version: "1" } } } })
      const call = client.callTool({ name: "add", arguments: {} }).catch((e: Error) => e.message)
      yield* Effect.yieldNow()
      yield* Effect.promise(() => transport.close())
      assert.include(String(yield* Effect.promise(() => call)), "Connection closed")
      assert.strictEqual(withdrawn, 1)
      const late = yield* Effect.flip(Effect.tryPromise(() => transport.send({ jsonrpc: "2.0", method: "ping", id: 7 })))
      assert.include(String(late.error), "the connection to MCP server calc is closed")
    }))
})
