/**
 * Slash commands: a prompt that starts with `/name` is a command for the session, not a message for
 * the model. This module says which prompts are commands (`parse`) and what `/help` and an unknown
 * command say; the commands themselves are the `Commands` service's (`BuiltinCommands` are the
 * default). As in Claude Code, `/usr/bin/env is broken` is not a command: a name holds no `/`.
 *
 * @since 0.1.0
 */

/** A prompt read as a command: its name (without the slash) and the rest of the line. @category Models */
export interface Invocation {
  readonly name: string
  /** The text after the name, trimmed ("" when none). */
  readonly args: string
}

/** What `/help` and listings show of a command. @category Models */
export interface Command {
  readonly name: string
  /** What follows the name, for `/help` (`[instructions]`). */
  readonly argumentHint?: string | undefined
  readonly description: string
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9:_-]*$/

/**
 * The command a prompt invokes, if it is one: `/name`, then optionally whitespace and arguments.
 * A first word holding anything else (`/usr/bin/x`, `/.env`) is not a command.
 *
 * @category Parsing
 */
export const parse = (prompt: string): Invocation | undefined => {
  const trimmed = prompt.trimStart()
  if (!trimmed.startsWith("/")) return undefined
  const match = /^\/(\S+)(?:\s+([\s\S]*))?$/.exec(trimmed)
  if (match === null || !NAME.test(match[1]!)) return undefined
  return { name: match[1]!, args: (match[2] ?? "").trim() }
}

/** `/name [hint]`. @category Rendering */
export const usage = (command: Command): string =>
  command.argumentHint === undefined ? `/${command.name}` : `/${command.name} ${command.argumentHint}`

/** What `/help` prints. @category Rendering */
export const help = (commands: ReadonlyArray<Command>): string => {
  const width = Math.max(...commands.map((c) => usage(c).length))
  return [
    "Commands:",
    ...commands.map((c) => `  ${usage(c).padEnd(width)}  ${c.description}`),
    "",
    "Attach files to a prompt with @path (relative to the working directory, or absolute; @\"path with spaces\" for",
    "paths with spaces, @path#L10-20 for lines 10 to 20). Text files arrive as numbered lines, images as images."
  ].join("\n")
}

/** The error for a command no one answers; nothing is sent to the model. @category Rendering */
export const unknown = (name: string, commands: ReadonlyArray<Command>): string =>
  `Unknown command: /${name}. The commands are ${commands.map((c) => `/${c.name}`).join(", ")} (see /help). ` +
  "Nothing was sent to the model; to send text that starts with a slash, begin the prompt with another word."
