/**
 * MCP servers over streamable HTTP: the real server-everything in its `streamableHttp` mode,
 * including a server that dies mid-session; a server that wants authorization (`needs-auth`); and
 * an address where nothing listens.
 */
import { afterEach, assert, describe, it } from "@effect/vitest"
import { McpServers } from "@keel/tools"
import { Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { freePort, remote, startEverythingHttp, statusOf, tempDir, toolOf } from "./support/Mcp.js"
import { callServices } from "./support/Calls.js"

const context = (cwd: string) => ({ toolUseId: "toolu_1", cwd })

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((f) => f()))
})

/** A loopback HTTP server answering every request with `status`; records the requests' headers. */
const answering = async (status: number) => {
  const seen: Array<http.IncomingHttpHeaders> = []
  const server = http.createServer((req, res) => {
    seen.push(req.headers)
    req.resume()
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ error: "unauthorized" }))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  cleanups.push(() => new Promise((resolve) => server.close(() => resolve())))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, seen }
}

describe("McpServers over HTTP", () => {
  it.live("server-everything over streamable HTTP: tools work; when the server dies its calls fail naming it", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const server = yield* Effect.promise(startEverythingHttp)
      cleanups.push(server.stop)
      const service = yield* McpServers.make([remote("web", server.url)], { cwd: dir })
      const web = yield* statusOf(service, "web")
      assert.strictEqual(web.status, "connected")
      assert.strictEqual(web.serverInfo?.name, "mcp-servers/everything")
      const echo = toolOf(service, "mcp__web__echo")
      assert.strictEqual(yield* echo.call({ message: "over http" }, context(dir)), "Echo: over http")
      yield* Effect.promise(server.stop)
      const error = yield* echo.call({ message: "anyone?" }, context(dir)).pipe(Effect.flip)
      assert.match(error.message, /^MCP server web: calling echo failed: fetch failed \(ECONNREFUSED\)$/)
    }).pipe(Effect.scoped, Effect.provide(callServices())))

  it.live("a server that answers 401 is needs-auth, with what to do; the config's headers are sent", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const guarded = yield* Effect.promise(() => answering(401))
      const service = yield* McpServers.make([remote("guarded", guarded.url, "http", { Authorization: "Bearer nope" })], { cwd: dir })
      const status = yield* statusOf(service, "guarded")
      assert.strictEqual(status.status, "needs-auth")
      assert.include(status.error!, "give a token in the config's \"headers\"")
      assert.strictEqual(guarded.seen[0]!.authorization, "Bearer nope")
      assert.deepStrictEqual(service.tools, [])
    }).pipe(Effect.scoped))

  it.live("nothing listening at the URL: failed, saying it cannot reach it", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const url = `http://127.0.0.1:${yield* Effect.promise(freePort)}/mcp`
      const service = yield* McpServers.make([remote("gone", url), remote("gone-sse", url, "sse")], { cwd: dir })
      const all = yield* service.status
      assert.deepStrictEqual(all.map((s) => [s.status, s.error]), [
        ["failed", `cannot reach ${url} (ECONNREFUSED)`],
        ["failed", `cannot reach ${url} (ECONNREFUSED)`]
      ])
    }).pipe(Effect.scoped))
})
