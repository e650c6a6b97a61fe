/**
 * MCP server configuration in Claude Code's shape: `.mcp.json` in the working directory and
 * `--mcp-config` files or JSON strings, each `{"mcpServers": {"<name>": <server>}}`. A server is a
 * command run as a child process (`command`, `args`, `env`; `"type": "stdio"` optional) or an
 * endpoint (`"type": "http"` for streamable HTTP or `"sse"`, with `url` and `headers`); `timeout`
 * bounds each of its tool calls (ms). `${VAR}` and `${VAR:-default}` are expanded in commands,
 * arguments, environment values, URLs and headers, as Claude Code does; a server that uses an unset
 * variable without a default fails to start, and the others still run. A config that cannot be
 * read, is not JSON or is not shaped like this is an `InvalidMcpConfig` naming the file and what to
 * fix (nothing is half-applied).
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as HostTransport from "./HostTransport.js"

const StringMap = Schema.Record({ key: Schema.String, value: Schema.String })
const Timeout = Schema.Int.pipe(Schema.positive())

/** A server run as a child process, spoken to over its stdin and stdout. @category Schemas */
export const StdioServer = Schema.Struct({
  type: Schema.optional(Schema.Literal("stdio")),
  command: Schema.String,
  args: Schema.optional(Schema.Array(Schema.String)),
  env: Schema.optional(StringMap),
  /** Most milliseconds one tool call may take (overrides `MCP_TOOL_TIMEOUT`). */
  timeout: Schema.optional(Timeout)
})

/** @category Models */
export type StdioServer = typeof StdioServer.Type

/** A server at a URL: streamable HTTP (`http`) or the older HTTP with server-sent events (`sse`). @category Schemas */
export const RemoteServer = Schema.Struct({
  type: Schema.Literal("http", "sse"),
  url: Schema.String,
  headers: Schema.optional(StringMap),
  /** Most milliseconds one tool call may take (overrides `MCP_TOOL_TIMEOUT`). */
  timeout: Schema.optional(Timeout)
})

/** @category Models */
export type RemoteServer = typeof RemoteServer.Type

/**
 * A server in the host's own process (a Claude Agent SDK host's `createSdkMcpServer`), named in the
 * host's `initialize` and reached through it (see `HostTransport`); never read from a config file.
 *
 * @category Models
 */
export interface SdkServer {
  readonly type: "sdk"
  /** Most milliseconds one tool call may take (the host's `timeout` for it). */
  readonly timeout?: number | undefined
  /** The handshake the host captured (`sdkMcpServerManifests`), answered without asking it again. */
  readonly manifest?: HostTransport.Manifest | undefined
}

/** One server's configuration. @category Models */
export type ServerConfig = StdioServer | RemoteServer | SdkServer

/** Whether the server lives in the host's process. @category Guards */
export const isSdk = (config: ServerConfig): config is SdkServer => config.type === "sdk"

/** Whether the server is reached at a URL (rather than started as a process). @category Guards */
export const isRemote = (config: ServerConfig): config is RemoteServer => config.type === "http" || config.type === "sse"

/** One configured server, after `${VAR}` expansion. @category Models */
export interface Server {
  readonly name: string
  readonly config: ServerConfig
  /** Where it was configured: a file's path, or `--mcp-config` for JSON given on the command line. */
  readonly source: string
  /** Variables it uses that are unset and have no default; such a server fails to start. */
  readonly missingVariables: ReadonlyArray<string>
}

/** A config that cannot be used; the message names the file and what to fix. @category Errors */
export class InvalidMcpConfig extends Schema.TaggedError<InvalidMcpConfig>("@keel/tools/InvalidMcpConfig")(
  "InvalidMcpConfig",
  { message: Schema.String }
) {}

/** The environment variables expansion reads. @category Models */
export type Environment = Readonly<Record<string, string | undefined>>

/**
 * Expands `${VAR}` and `${VAR:-default}` in `text` as Claude Code does: a set variable (even empty)
 * gives its value, an unset one its default; an unset one without a default stays as written and is
 * reported in `missing`.
 *
 * @category Expansion
 */
export const expand = (text: string, env: Environment): { readonly value: string; readonly missing: ReadonlyArray<string> } => {
  const missing: Array<string> = []
  const value = text.replace(/\$\{([^}]+)\}/g, (whole, inner: string) => {
    const split = inner.indexOf(":-")
    const name = split === -1 ? inner : inner.slice(0, split)
    const fallback = split === -1 ? undefined : inner.slice(split + 2)
    const set = env[name]
    if (set !== undefined) return set
    if (fallback !== undefined) return fallback
    missing.push(name)
    return whole
  })
  return { value, missing }
}

/** The server's configuration with every expandable field expanded, and the unset variables it uses. */
const expandServer = (config: ServerConfig, env: Environment): { config: ServerConfig; missing: Array<string> } => {
  const missing: Array<string> = []
  if (isSdk(config)) return { config, missing }
  const one = (text: string) => {
    const expanded = expand(text, env)
    missing.push(...expanded.missing)
    return expanded.value
  }
  const map = (record: Readonly<Record<string, string>> | undefined) =>
    record === undefined ? undefined : Object.fromEntries(Object.entries(record).map(([k, v]) => [k, one(v)]))
  if (isRemote(config)) {
    const headers = map(config.headers)
    return {
      config: { ...config, url: one(config.url), ...(headers === undefined ? {} : { headers }) },
      missing: [...new Set(missing)]
    }
  }
  const env_ = map(config.env)
  return {
    config: {
      ...config,
      command: one(config.command),
      ...(config.args === undefined ? {} : { args: config.args.map(one) }),
      ...(env_ === undefined ? {} : { env: env_ })
    },
    missing: [...new Set(missing)]
  }
}

const SHAPE = `{"mcpServers": {"<name>": {"command": "...", "args": [...]}}}`

const decodeStdio = Schema.decodeUnknownEither(StdioServer, { errors: "all" })
const decodeRemote = Schema.decodeUnknownEither(RemoteServer, { errors: "all" })

/** The first problem of a failed decode, as `path: message` on one line. */
const firstIssue = (error: ParseResult.ParseError): string => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  if (issue === undefined) return "is not valid"
  const where = issue.path.map(String).join(".")
  const message = issue.message.split("\n")[0]!.replace(/^Expected/, "expected")
  return where === "" ? message : `${where}: ${message}`
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** One server entry, checked and expanded. */
const parseServer = (name: string, raw: unknown, source: string, env: Environment): Either.Either<Server, InvalidMcpConfig> => {
  const invalid = (message: string) => Either.left(new InvalidMcpConfig({ message: `${source}: mcpServers.${name} ${message}` }))
  if (name.trim() === "") {
    return Either.left(new InvalidMcpConfig({ message: `${source}: a server in mcpServers has an empty name; give it a name` }))
  }
  if (!isObject(raw)) {
    return invalid(`must be an object: {"command": ...} for a server Keel starts, {"type": "http", "url": ...} for one at a URL`)
  }
  const type = raw.type
  let decoded: Either.Either<ServerConfig, ParseResult.ParseError>
  if (type === undefined || type === "stdio") {
    if (raw.command === undefined) {
      return invalid(`has no "command"; a stdio server needs the command to run (or give "type": "http" and a "url")`)
    }
    if (typeof raw.command === "string" && raw.command.trim() === "") {
      return invalid(`has an empty "command"; name the program to run`)
    }
    decoded = decodeStdio(raw)
  } else if (type === "http" || type === "sse") {
    if (raw.url === undefined) return invalid(`has no "url"; an ${type} server needs the URL of its endpoint`)
    decoded = decodeRemote(raw)
  } else {
    return invalid(`has "type": ${JSON.stringify(type)}; Keel runs "stdio", "http" and "sse" servers`)
  }
  if (Either.isLeft(decoded)) {
    return Either.left(new InvalidMcpConfig({ message: `${source}: mcpServers.${name}.${firstIssue(decoded.left)}` }))
  }
  const { config, missing } = expandServer(decoded.right, env)
  if (isRemote(config) && missing.length === 0) {
    let ok = false
    try {
      ok = ["http:", "https:"].includes(new URL(config.url).protocol)
    } catch {
      ok = false
    }
    if (!ok) return invalid(`has "url": ${JSON.stringify(config.url)}, which is not an http:// or https:// URL`)
  }
  return Either.right({ name, config, source, missingVariables: missing })
}

/**
 * The servers of one config's text. `source` names it in errors (a file's path, or `--mcp-config`).
 *
 * @category Parsing
 */
export const parse = (
  text: string,
  source: string,
  env: Environment = process.env
): Either.Either<ReadonlyArray<Server>, InvalidMcpConfig> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    return Either.left(
      new InvalidMcpConfig({ message: `${source} is not valid JSON (${(e as Error).message}); fix it to read like ${SHAPE}` })
    )
  }
  if (!isObject(json) || !isObject(json.mcpServers)) {
    return Either.left(
      new InvalidMcpConfig({
        message: `${source} has no "mcpServers" object; an MCP config reads like ${SHAPE}`
      })
    )
  }
  const servers: Array<Server> = []
  for (const [name, raw] of Object.entries(json.mcpServers)) {
    const server = parseServer(name, raw, source, env)
    if (Either.isLeft(server)) return Either.left(server.left)
    servers.push(server.right)
  }
  return Either.right(servers)
}

/**
 * Servers of several configs, in order: a later server with the name of an earlier one replaces it
 * (in the earlier one's place).
 *
 * @category Combining
 */
export const merge = (configs: ReadonlyArray<ReadonlyArray<Server>>): ReadonlyArray<Server> => {
  const byName = new Map<string, Server>()
  for (const servers of configs) for (const server of servers) byName.set(server.name, server)
  return [...byName.values()]
}

/** Options of {@link load}. @category Models */
export interface LoadOptions {
  /** The working directory: `.mcp.json` is read there, and relative `--mcp-config` paths resolve against it. */
  readonly cwd: string
  /** `--mcp-config` values: paths of JSON files, or JSON text (anything starting with `{`). */
  readonly configs?: ReadonlyArray<string> | undefined
  /** `--strict-mcp-config`: only the servers of `configs`, not `.mcp.json`'s. */
  readonly strict?: boolean | undefined
  /** Where `${VAR}` values come from (default `process.env`). */
  readonly env?: Environment | undefined
}

/**
 * The servers to start: `.mcp.json` in the working directory (unless `strict`; a missing file is no
 * servers), then each `--mcp-config`, later ones replacing earlier servers of the same name.
 *
 * @category Loading
 */
export const load = (
  options: LoadOptions
): Effect.Effect<ReadonlyArray<Server>, InvalidMcpConfig, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const env = options.env ?? process.env
    const configs: Array<ReadonlyArray<Server>> = []
    const parsed = (text: string, source: string) =>
      Either.match(parse(text, source, env), { onLeft: (e) => Effect.fail(e), onRight: (s) => Effect.succeed(s) })
    if (options.strict !== true) {
      const file = path.join(options.cwd, ".mcp.json")
      const text = yield* fs.readFileString(file).pipe(
        Effect.map((t): string | undefined => t),
        Effect.catchAll((e) =>
          e._tag === "SystemError" && e.reason === "NotFound"
            ? Effect.succeed(undefined)
            : Effect.fail(
              new InvalidMcpConfig({ message: `${file} cannot be read (${e.message}); fix its permissions or remove it` })
            )
        )
      )
      if (text !== undefined) configs.push(yield* parsed(text, file))
    }
    for (const value of options.configs ?? []) {
      if (value.trim().startsWith("{")) {
        configs.push(yield* parsed(value, "--mcp-config"))
        continue
      }
      const file = path.resolve(options.cwd, value)
      const text = yield* fs.readFileString(file).pipe(
        Effect.mapError((e) =>
          new InvalidMcpConfig({
            message: e._tag === "SystemError" && e.reason === "NotFound"
              ? `--mcp-config ${file}: no such file; give the path of a JSON file or the JSON itself` +
                (/\s/.test(value) ? " (if this is your prompt, put it before --mcp-config or after --)" : "")
              : `--mcp-config ${file} cannot be read (${e.message}); give the path of a readable JSON file`
          })
        )
      )
      configs.push(yield* parsed(text, file))
    }
    return merge(configs)
  })
