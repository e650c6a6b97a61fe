/**
 * `/status`: the run at a glance: Keel's version, the session's id, its model, the working folder,
 * the API it talks to (the base URL and where the credentials come from, never the key), the
 * permission mode, the MCP servers, the context in use (estimated as `/context` does) and the
 * settings files in force. The REPL answers it: the version, the API and the settings files are
 * the command line's.
 *
 * @since 0.1.0
 */
import { ContextUsage, Permissions, SystemPrompt, TokenEstimate, ToolRegistry } from "@keel/core"
import { McpServers } from "@keel/tools"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type { Answer, Context } from "./LocalCommands.js"
import * as SettingsNow from "./SettingsNow.js"

/** The Messages API's address when `ANTHROPIC_BASE_URL` is not set. @category Constants */
export const DEFAULT_BASE_URL = "https://api.anthropic.com"

/** Where the credentials come from, by name only. @category Rendering */
export const credentialsOf = (env: Context["env"], apiKeyHelper: boolean): string =>
  env.ANTHROPIC_API_KEY !== undefined && env.ANTHROPIC_API_KEY !== ""
    ? "key from ANTHROPIC_API_KEY"
    : env.ANTHROPIC_AUTH_TOKEN !== undefined && env.ANTHROPIC_AUTH_TOKEN !== ""
    ? "token from ANTHROPIC_AUTH_TOKEN"
    : apiKeyHelper
    ? "key from the settings' apiKeyHelper"
    : "no credentials"

/** The MCP servers in a few words. @category Rendering */
export const mcpSummary = (servers: ReadonlyArray<McpServers.ServerStatus>): string => {
  if (servers.length === 0) return "none"
  const count = (status: string) => servers.filter((s) => s.status === status).length
  const parts = [
    `${count("connected")} connected`,
    ...(count("failed") > 0 ? [`${count("failed")} failed`] : []),
    ...(count("needs-auth") > 0 ? [`${count("needs-auth")} need authorization`] : [])
  ]
  const bad = servers.filter((s) => s.status !== "connected").map((s) => s.name)
  return `${parts.join(", ")}${bad.length > 0 ? ` (${bad.join(", ")})` : ""} · /mcp for details`
}

/** Answers `/status`. @category Running */
export const run = (args: string, context: Context): Answer =>
  Effect.gen(function*() {
    const { session, style } = context
    if (args !== "") return style.red(`/status takes no argument; got "${args}".`)
    const model = yield* session.model
    const state = yield* session.state
    const prompt = yield* session.systemPrompt
    const usage = ContextUsage.measure({
      model,
      system: SystemPrompt.toRequest(prompt).system,
      tools: (yield* ToolRegistry.ToolRegistry).definitions,
      messages: yield* Ref.get(state.messages),
      window: yield* Effect.orElseSucceed(TokenEstimate.windowConfig, () => undefined)
    })
    const loaded = yield* SettingsNow.load(context.options, context.cwd)
    const servers = yield* (yield* McpServers.McpServers).status
    const count = (n: number) => n.toLocaleString("en-US")
    const rows: ReadonlyArray<readonly [string, string]> = [
      ["Version", context.version],
      ["Session", yield* session.sessionId],
      ["Model", model],
      ["Folder", context.cwd],
      ["API", `${context.env.ANTHROPIC_BASE_URL ?? DEFAULT_BASE_URL} · ${credentialsOf(context.env, loaded.merged.apiKeyHelper !== undefined)}`],
      ["Permission mode", (yield* Permissions.Permissions).config.mode],
      ["MCP servers", mcpSummary(servers)],
      ["Context", `${count(usage.used)} / ${count(usage.window)} tokens (${Math.round((usage.used / usage.window) * 100)}%, estimated) · /context for details`],
      [
        "Settings",
        loaded.layers.length === 0
          ? "no settings files"
          : loaded.layers.map((l) => `${l.name} (${l.origin === "flag" ? "flag" : l.origin})`).join(", ")
      ]
    ]
    const width = Math.max(...rows.map(([label]) => label.length))
    return [style.bold("Status"), ...rows.map(([label, value]) => `  ${style.dim(label.padEnd(width))}  ${value}`)].join("\n")
  })


