/**
 * The control requests a stream-json host sends to `keel` (Claude Code's protocol, as the Claude
 * Agent SDK speaks it), each answered with a `control_response`: `initialize` (see `Initialize`),
 * `interrupt` (with the receipt of what still waits), `set_model`, `set_permission_mode`,
 * `set_max_thinking_tokens` (see `ThinkingRequest`) and `mcp_status`. Any other subtype, or a request Keel cannot honour, is answered with an error
 * response and a line on stderr: never left unanswered, never silently ignored.
 *
 * @since 0.1.0
 */
import { type Commands, Permissions, type Session, type SessionRuntime } from "@keel/core"
import type { Agents, McpServers } from "@keel/tools"
import * as Effect from "effect/Effect"
import type * as HostHooks from "./hook/HostHooks.js"
import * as Initialize from "./Initialize.js"
import * as ThinkingRequest from "./ThinkingRequest.js"

/** A host's control request, read from its stdin line. @category Models */
export interface Request {
  readonly line: number
  readonly requestId: string
  readonly subtype: string
  /** The whole request (its fields beside `subtype`). */
  readonly request: Record<string, unknown>
}

/** What answering needs: the session, its runtime and services, and where answers go. @category Models */
export interface Context {
  readonly session: Session.Service
  readonly runtime: SessionRuntime.Service
  readonly commands: ReadonlyArray<Commands.Command>
  readonly mcpServers: McpServers.McpServers["Type"]
  readonly permissions: Permissions.Permissions["Type"]
  /** The agent types the session offers, as `initialize` lists them. */
  readonly agents: ReadonlyArray<Agents.Info>
  /** The id of the `initialize` read before the session was built (its `agents` are the session's). */
  readonly initializedAhead?: string | undefined
  /** The host's uuids of the user messages that wait, by turn id. */
  readonly uuids: ReadonlyMap<string, string>
  /** Where `initialize`'s callback hooks are registered. */
  readonly hostHooks: HostHooks.Bridge
  /** Writes one stdout line (a value as JSON). */
  readonly write: (message: unknown) => void
  /** Writes to stderr. */
  readonly err: (text: string) => void
  /** The request id of the `initialize` read before the session opened (the first input line), if any. */
  readonly firstInitialize?: string | undefined
  /** The run's `--json-schema` (an `initialize` may ask for the same one). */
  readonly jsonSchema?: string | undefined
}

/** How answering went: `refused-init` when `initialize` was refused (nothing more may run). @category Models */
export type Outcome = "answered" | "refused-init"

/** Answers `request`. @category Answering */
export const answer = (request: Request, context: Context): Effect.Effect<Outcome> => {
  const { runtime, session, write } = context
  const respond = (response?: Record<string, unknown>) =>
    Effect.as(
      Effect.sync(() =>
        write({
          type: "control_response",
          response: { subtype: "success", request_id: request.requestId, ...(response !== undefined ? { response } : {}) }
        })
      ),
      "answered" as const
    )
  const refuse = (error: string) =>
    Effect.as(
      Effect.sync(() => {
        context.err(`keel: stdin line ${request.line}: ${error}; answered with an error\n`)
        write({ type: "control_response", response: { subtype: "error", request_id: request.requestId, error } })
      }),
      "answered" as const
    )
  switch (request.subtype) {
    case "interrupt":
      return Effect.gen(function*() {
        const stillQueued = (yield* runtime.queue).flatMap((q) => context.uuids.get(q.id) ?? [])
        yield* runtime.interrupt
        return yield* respond({ still_queued: stillQueued })
      })
    case "initialize":
      return Effect.flatMap(context.mcpServers.status, (servers) => {
        const first = request.requestId === context.firstInitialize
        const missing = Initialize.unsupported(request.request, {
          first,
          connected: servers.map((s) => s.name),
          agentsApplied: request.requestId === context.initializedAhead,
          jsonSchema: context.jsonSchema
        })
        // Refused, and nothing more runs: the host asked for behaviour Keel would not give it.
        if (missing.length > 0) {
          return Effect.as(refuse(`Keel does not support these initialize options yet: ${missing.join(", ")}`), "refused-init" as const)
        }
        const hooks = context.hostHooks.register(request.request.hooks)
        if (hooks.length > 0) {
          return Effect.as(refuse(`Keel cannot run these hooks: ${hooks.join("; ")}`), "refused-init" as const)
        }
        const applied = request.request.hooks === undefined || request.request.hooks === null ? {} : { hooks_applied: true }
        return Effect.flatMap(session.init, (init) =>
          respond({ ...Initialize.response(init, context.commands, context.agents), ...applied }))
      })
    case "set_model": {
      // Later turns' model; none, null or "default" goes back to the session's first model.
      const model = request.request.model
      if (model !== undefined && model !== null && typeof model !== "string") return refuse("set_model's model is not a string")
      return Effect.zipRight(
        Effect.flatMap(session.init, (init) => session.setModel(typeof model === "string" && model !== "default" ? model : init.model)),
        respond()
      )
    }
    case "set_permission_mode": {
      const mode = request.request.mode
      if (typeof mode !== "string" || !Permissions.MODES.includes(mode as Permissions.Mode)) {
        return refuse(`set_permission_mode's mode ${JSON.stringify(mode)} is not one of ${Permissions.MODES.join(", ")}`)
      }
      return context.permissions.setMode(mode as Permissions.Mode).pipe(
        Effect.zipRight(respond()),
        Effect.catchTag("ModeRefused", (refused) => refuse(refused.message))
      )
    }
    case "set_max_thinking_tokens":
      return Effect.flatMap(
        ThinkingRequest.setMaxThinkingTokens(session, request.request),
        (refusal) => refusal === undefined ? respond() : refuse(refusal)
      )
    case "mcp_status":
      return Effect.flatMap(context.mcpServers.status, (status) =>
        respond({
          mcpServers: status.map((server) => ({
            name: server.name,
            status: server.status,
            ...(server.serverInfo !== undefined ? { serverInfo: server.serverInfo } : {}),
            ...(server.error !== undefined ? { error: server.error } : {})
          }))
        }))
    default:
      return refuse(
        `Keel does not support the control request "${request.subtype}" ` +
          "(only initialize, interrupt, set_model, set_permission_mode, set_max_thinking_tokens and mcp_status)"
      )
  }
}
