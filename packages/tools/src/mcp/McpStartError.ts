/**
 * Why an MCP server failed to start, in the user's words: a start-up timeout, a command that is
 * not found or not executable, a server that exited early (with the tail of its stderr), an
 * unreachable URL, or a server that asks for authorization (`needs-auth`).
 *
 * @since 0.1.0
 */
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js"
import * as Duration from "effect/Duration"
import * as Schema from "effect/Schema"
import * as McpConfig from "./McpConfig.js"

/** A server did not start within its start-up timeout. @category Errors */
export class StartTimeout extends Schema.TaggedError<StartTimeout>()("StartTimeout", {}) {}

/** A failed start, as a connection's state reports it. @category Models */
export interface StartFailure {
  readonly status: "failed" | "needs-auth"
  readonly error: string
}

const oneLine = (text: string, max = 300) => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? `…${flat.slice(-max)}` : flat
}

/** `message`, followed by the tail of the server's stderr when it wrote any. @category Formatting */
export const withStderr = (message: string, stderr: string) =>
  stderr.trim() === "" ? message : `${message}; its stderr ends: ${oneLine(stderr)}`

const NETWORK_CODE = /\b(ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EHOSTUNREACH|EAI_AGAIN)\b/

/** The system error code of `e` or its cause (`ENOENT`, `ECONNREFUSED`, ...), also when only its message names it. */
const errorCode = (e: unknown): string | undefined => {
  const code = (e as { code?: unknown } | null)?.code ?? (e as { cause?: { code?: unknown } } | null)?.cause?.code
  if (typeof code === "string") return code
  return NETWORK_CODE.exec(e instanceof Error ? e.message : String(e))?.[1]
}

/** Why a server failed to start, and whether it wants authorization. @category Formatting */
export const describeStartError = (
  e: unknown,
  server: McpConfig.Server,
  stderr: string,
  timeout: Duration.Duration
): StartFailure => {
  const config = server.config
  if (e instanceof StartTimeout || (e instanceof McpError && e.code === ErrorCode.RequestTimeout)) {
    return {
      status: "failed",
      error: withStderr(`did not start within ${Duration.format(timeout)} (raise MCP_TIMEOUT if it needs longer)`, stderr)
    }
  }
  const status = (e as { code?: unknown } | null)?.code
  if (status === 401 || status === 403 || (e as Error | null)?.name === "UnauthorizedError") {
    return {
      status: "needs-auth",
      error: "the server asks for authorization; give a token in the config's \"headers\" (Keel does not run OAuth sign-ins)"
    }
  }
  const code = errorCode(e)
  if (McpConfig.isSdk(config)) {
    return { status: "failed", error: e instanceof Error ? e.message : String(e) }
  }
  if (!McpConfig.isRemote(config)) {
    if (code === "ENOENT") return { status: "failed", error: `cannot run ${JSON.stringify(config.command)}: command not found` }
    if (code === "EACCES") return { status: "failed", error: `cannot run ${JSON.stringify(config.command)}: permission denied` }
    if (e instanceof McpError && e.code === ErrorCode.ConnectionClosed) {
      return { status: "failed", error: withStderr("the server exited before it was ready", stderr) }
    }
  } else if (code !== undefined && NETWORK_CODE.test(code)) {
    return { status: "failed", error: `cannot reach ${config.url} (${code})` }
  } else if (e instanceof TypeError && e.message === "fetch failed") {
    const cause = (e as { cause?: { message?: unknown } }).cause?.message
    return { status: "failed", error: `cannot reach ${config.url}${typeof cause === "string" ? ` (${cause})` : ""}` }
  }
  return { status: "failed", error: withStderr(e instanceof Error ? e.message : String(e), stderr) }
}
