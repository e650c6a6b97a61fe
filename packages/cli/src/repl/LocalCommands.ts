/**
 * The REPL's commands about the run's setup, answered by the REPL rather than the session because
 * they read or change what only the command line owns (the settings files, the MCP servers, the
 * terminal's `$EDITOR`, the version and the API's address): `/status`, `/permissions`, `/mcp` and
 * `/memory`. Each answers with text shown as the command's output; the session journals it as a
 * reply, like `/resume`'s.
 *
 * @since 0.1.0
 */
import type { Session } from "@keel/core"
import type * as Effect from "effect/Effect"
import type * as Runtime from "../Runtime.js"
import * as McpCommand from "./McpCommand.js"
import * as MemoryCommand from "./MemoryCommand.js"
import * as PermissionsCommand from "./PermissionsCommand.js"
import * as StatusCommand from "./StatusCommand.js"
import type * as Style from "./Style.js"

/** What the REPL's commands read. @category Models */
export interface Context {
  readonly version: string
  readonly cwd: string
  readonly style: Style.Style
  /** The session the REPL is in now. */
  readonly session: Session.Service
  readonly options: Runtime.Options
  /** The environment the run goes on with (the settings' `env` applied). */
  readonly env: Readonly<Record<string, string | undefined>>
  /** Runs `$EDITOR` on a file in the terminal (the input line set aside meanwhile); `undefined` from a pipe. */
  readonly edit: ((editor: string, file: string) => number) | undefined
}

/** A command's answer: the text to show. @category Models */
export type Answer = Effect.Effect<string, never, Runtime.Services>

/** The commands, by name. @category Constants */
export const COMMANDS: Readonly<Record<string, (args: string, context: Context) => Answer>> = {
  status: StatusCommand.run,
  permissions: PermissionsCommand.run,
  mcp: McpCommand.run,
  memory: MemoryCommand.run
}

/** The answer to `text` when it invokes one of these commands; `undefined` otherwise. @category Running */
export const answer = (text: string, context: Context): Answer | undefined => {
  const match = /^\/([a-z]+)(?:\s+([\s\S]*))?$/.exec(text.trim())
  const run = match === null || !Object.hasOwn(COMMANDS, match[1]!) ? undefined : COMMANDS[match[1]!]
  return run === undefined ? undefined : run((match![2] ?? "").trim(), context)
}
