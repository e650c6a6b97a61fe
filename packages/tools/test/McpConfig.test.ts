/**
 * MCP configs in Claude Code's shape: stdio and remote servers, `${VAR}` expansion, merging
 * `.mcp.json` and `--mcp-config`, and one-line errors that name the file and what to fix.
 */
import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { McpConfig } from "@keel/tools"
import { Effect, Either } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const tempDir = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "keel-mcp-config-")))

const servers = (config: unknown, env: McpConfig.Environment = {}) => {
  const parsed = McpConfig.parse(JSON.stringify(config), "/p/.mcp.json", env)
  if (Either.isLeft(parsed)) assert.fail(`expected servers, got: ${parsed.left.message}`)
  return parsed.right
}

const problem = (text: string, env: McpConfig.Environment = {}) => {
  const parsed = McpConfig.parse(text, "/p/.mcp.json", env)
  if (Either.isRight(parsed)) assert.fail("expected an error")
  assert.notInclude(parsed.left.message, "\n", "the message is one line")
  return parsed.left.message
}

describe("McpConfig.parse", () => {
  it("reads stdio servers (type optional) and http and sse servers", () => {
    const parsed = servers({
      mcpServers: {
        fs: { command: "npx", args: ["-y", "server"], env: { A: "1" } },
        typed: { type: "stdio", command: "node", timeout: 5000 },
        web: { type: "http", url: "https://example.com/mcp", headers: { Authorization: "Bearer x" } },
        old: { type: "sse", url: "http://localhost:9/sse" }
      }
    })
    assert.deepStrictEqual(parsed.map((s) => s.name), ["fs", "typed", "web", "old"])
    assert.deepStrictEqual(parsed[0]!.config, { command: "npx", args: ["-y", "server"], env: { A: "1" } })
    assert.deepStrictEqual(parsed[1]!.config, { type: "stdio", command: "node", timeout: 5000 })
    assert.deepStrictEqual(parsed[2]!.config, { type: "http", url: "https://example.com/mcp", headers: { Authorization: "Bearer x" } })
    assert.isTrue(McpConfig.isRemote(parsed[3]!.config))
    assert.isFalse(McpConfig.isRemote(parsed[0]!.config))
    assert.deepStrictEqual(parsed.map((s) => s.missingVariables), [[], [], [], []])
    assert.strictEqual(parsed[0]!.source, "/p/.mcp.json")
  })

  it("expands ${VAR} and ${VAR:-default} in command, args, env, url and headers", () => {
    const env = { HOME_DIR: "/home/me", TOKEN: "s3cret", EMPTY: "" }
    const [stdio, http] = servers({
      mcpServers: {
        a: { command: "${HOME_DIR}/bin/server", args: ["--root=${ROOT:-/srv}", "${EMPTY:-unused}"], env: { T: "${TOKEN}" } },
        b: { type: "http", url: "https://${HOST:-example.com}/mcp", headers: { Authorization: "Bearer ${TOKEN}" } }
      }
    }, env)
    assert.deepStrictEqual(stdio!.config, { command: "/home/me/bin/server", args: ["--root=/srv", ""], env: { T: "s3cret" } })
    assert.deepStrictEqual(http!.config, { type: "http", url: "https://example.com/mcp", headers: { Authorization: "Bearer s3cret" } })
  })

  it("a variable that is unset without a default is reported on its server (which will fail), not an error of the file", () => {
    const [a, b] = servers({ mcpServers: { a: { command: "x", env: { K: "${API_KEY}", L: "${OTHER}${API_KEY}" } }, b: { command: "y" } } })
    assert.deepStrictEqual(a!.missingVariables, ["API_KEY", "OTHER"])
    assert.deepStrictEqual(b!.missingVariables, [])
    assert.deepStrictEqual(McpConfig.expand("${A:-x:-y} ${B}", {}), { value: "x:-y ${B}", missing: ["B"] })
  })

  it("ignores keys it does not know (Claude Code's alwaysLoad, descriptions)", () => {
    const [s] = servers({ other: true, mcpServers: { a: { command: "x", alwaysLoad: true, description: "d" } } })
    assert.deepStrictEqual(s!.config, { command: "x" })
  })

  it("says what is wrong, naming the file and the server, in one line", () => {
    assert.match(problem("{ \"mcpServers\": { "), /^\/p\/\.mcp\.json is not valid JSON \(.+\); fix it to read like \{"mcpServers"/)
    assert.include(problem("[]"), "/p/.mcp.json has no \"mcpServers\" object; an MCP config reads like")
    assert.include(problem(JSON.stringify({ servers: {} })), "has no \"mcpServers\" object")
    assert.strictEqual(
      problem(JSON.stringify({ mcpServers: { fs: { args: ["x"] } } })),
      "/p/.mcp.json: mcpServers.fs has no \"command\"; a stdio server needs the command to run (or give \"type\": \"http\" and a \"url\")"
    )
    assert.strictEqual(
      problem(JSON.stringify({ mcpServers: { fs: { command: "npx", args: ["-y", 3] } } })),
      "/p/.mcp.json: mcpServers.fs.args.1: expected string, actual 3"
    )
    assert.strictEqual(
      problem(JSON.stringify({ mcpServers: { fs: { command: "npx", env: { PORT: 80 } } } })),
      "/p/.mcp.json: mcpServers.fs.env.PORT: expected string, actual 80"
    )
    assert.strictEqual(
      problem(JSON.stringify({ mcpServers: { w: { type: "ws", url: "ws://x" } } })),
      "/p/.mcp.json: mcpServers.w has \"type\": \"ws\"; Keel runs \"stdio\", \"http\" and \"sse\" servers"
    )
    assert.include(problem(JSON.stringify({ mcpServers: { w: { type: "http" } } })), "mcpServers.w has no \"url\"")
    assert.include(
      problem(JSON.stringify({ mcpServers: { w: { type: "http", url: "localhost:3000" } } })),
      "mcpServers.w has \"url\": \"localhost:3000\", which is not an http:// or https:// URL"
    )
    assert.include(problem(JSON.stringify({ mcpServers: { w: "npx server" } })), "mcpServers.w must be an object")
    assert.include(problem(JSON.stringify({ mcpServers: { w: { command: " " } } })), "mcpServers.w has an empty \"command\"")
    assert.include(problem(JSON.stringify({ mcpServers: { w: { command: "x", timeout: -1 } } })), "mcpServers.w.timeout:")
  })
})

describe("McpConfig.load", () => {
  const load = (options: McpConfig.LoadOptions) => McpConfig.load(options).pipe(Effect.provide(NodeContext.layer), Effect.either)

  it.effect("reads .mcp.json in the working directory, then each --mcp-config (files or JSON), later names winning", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      fs.writeFileSync(path.join(dir, ".mcp.json"), JSON.stringify({ mcpServers: { a: { command: "from-project" }, b: { command: "b" } } }))
      fs.writeFileSync(path.join(dir, "extra.json"), JSON.stringify({ mcpServers: { a: { command: "from-flag" } } }))
      const loaded = yield* load({ cwd: dir, configs: ["extra.json", "{\"mcpServers\": {\"c\": {\"type\": \"http\", \"url\": \"http://h/\"}}}"] })
      assert.isTrue(Either.isRight(loaded))
      const list = Either.getOrThrow(loaded)
      assert.deepStrictEqual(list.map((s) => [s.name, s.source]), [
        ["a", path.join(dir, "extra.json")],
        ["b", path.join(dir, ".mcp.json")],
        ["c", "--mcp-config"]
      ])
      assert.deepStrictEqual(list[0]!.config, { command: "from-flag" })

      const strict = Either.getOrThrow(yield* load({ cwd: dir, configs: ["extra.json"], strict: true }))
      assert.deepStrictEqual(strict.map((s) => s.name), ["a"])
      assert.deepStrictEqual(Either.getOrThrow(yield* load({ cwd: tempDir() })), [])
    }))

  it.effect("an unreadable --mcp-config or .mcp.json is an error naming it and what to do", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const missing = yield* load({ cwd: dir, configs: ["nope.json"] })
      assert.strictEqual(
        Either.getLeft(missing).pipe((o) => o._tag === "Some" ? o.value.message : ""),
        `--mcp-config ${path.join(dir, "nope.json")}: no such file; give the path of a JSON file or the JSON itself`
      )
      const prompt = yield* load({ cwd: dir, configs: ["summarise the readme"] })
      assert.include(Either.getLeft(prompt).pipe((o) => o._tag === "Some" ? o.value.message : ""), "if this is your prompt, put it before --mcp-config")
      fs.mkdirSync(path.join(dir, "folder.json"))
      const folder = yield* load({ cwd: dir, configs: ["folder.json"] })
      assert.match(Either.getLeft(folder).pipe((o) => o._tag === "Some" ? o.value.message : ""), /^--mcp-config .*folder\.json cannot be read \(.+\); give the path of a readable JSON file$/)
      fs.writeFileSync(path.join(dir, ".mcp.json"), "{ nope")
      const broken = yield* load({ cwd: dir })
      assert.match(Either.getLeft(broken).pipe((o) => o._tag === "Some" ? o.value.message : ""), new RegExp(`^${path.join(dir, ".mcp.json").replace(/[.]/g, "\\.")} is not valid JSON`))
      assert.isTrue(Either.isRight(yield* load({ cwd: dir, strict: true })), "--strict-mcp-config ignores .mcp.json")
    }))
})
