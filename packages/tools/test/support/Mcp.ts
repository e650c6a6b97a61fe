/**
 * MCP test helpers: the real servers from npm (`server-everything`, `server-filesystem`), the
 * misbehaving test server in test/support, configs for them, and process checks.
 */
import { Tool } from "@keel/core"
import { McpConfig, McpServers } from "@keel/tools"
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "..", "..", "..", "..")

/** `@modelcontextprotocol/server-everything`'s entry point. */
export const everything = path.join(root, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")

/** `@modelcontextprotocol/server-filesystem`'s entry point. */
export const filesystem = path.join(root, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")

/** The misbehaving test server (see its header). */
export const testServer = path.join(root, "test", "support", "mcp-test-server.mjs")

/** A fresh temporary folder, symlinks resolved. */
export const tempDir = (): string => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "keel-mcp-")))

/** A stdio server running `node script args` (no missing variables). */
export const stdio = (
  name: string,
  script: string,
  args: ReadonlyArray<string> = [],
  env?: Record<string, string>,
  extra: Partial<McpConfig.StdioServer> = {}
): McpConfig.Server => ({
  name,
  config: { command: process.execPath, args: [script, ...args], ...(env === undefined ? {} : { env }), ...extra },
  source: "test",
  missingVariables: []
})

/** A remote server. */
export const remote = (name: string, url: string, type: "http" | "sse" = "http", headers?: Record<string, string>): McpConfig.Server => ({
  name,
  config: { type, url, ...(headers === undefined ? {} : { headers }) },
  source: "test",
  missingVariables: []
})

export { alive } from "./Processes.js"

/** Waits (real time, bounded to ~5 s) until `check` holds; fails the test with `what` if it never does. */
export const eventually = (check: () => boolean, what: string): Effect.Effect<void> =>
  Effect.gen(function*() {
    for (let i = 0; i < 500; i++) {
      if (check()) return
      yield* Effect.promise(() => new Promise((r) => setTimeout(r, 10)))
    }
    return yield* Effect.die(new Error(`timed out waiting for ${what}`))
  })

/** The status of the server named `name`. */
export const statusOf = (service: McpServers.Service, name: string) =>
  Effect.map(service.status, (all) => {
    const found = all.find((s) => s.name === name)
    if (found === undefined) throw new Error(`no server ${name}`)
    return found
  })

/** The tool named `name`, its calls giving the output alone. */
export const toolOf = (service: McpServers.Service, name: string) => {
  const tool = structuredToolOf(service, name)
  return { ...tool, call: (input: unknown, context: Tool.ToolContext) => Effect.map(tool.call(input, context), Tool.outputOf) }
}

/** The MCP tool named `name`, as it is: its calls give the structured result too. */
export const structuredToolOf = (service: McpServers.Service, name: string) => {
  const tool = service.tools.find((t) => t.name === name)
  if (tool === undefined) throw new Error(`no tool ${name}; there are ${service.tools.map((t) => t.name).join(", ")}`)
  return tool
}

/** A port nobody listens on right now. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

/**
 * `server-everything` as a streamable HTTP server on a free port, once it says it listens; the
 * child is killed by `stop` (idempotent).
 */
export const startEverythingHttp = async (): Promise<{ url: string; child: ChildProcess; stop: () => Promise<void> }> => {
  const port = await freePort()
  const child = spawn(process.execPath, [everything, "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"]
  })
  await new Promise<void>((resolve, reject) => {
    let err = ""
    child.stderr!.on("data", (d) => {
      err += d
      if (err.includes("listening on port")) resolve()
    })
    child.once("exit", (code) => reject(new Error(`server-everything exited (${code}): ${err}`)))
  })
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      child.once("exit", () => resolve())
      child.kill("SIGKILL")
    })
  return { url: `http://127.0.0.1:${port}/mcp`, child, stop }
}
