/**
 * Slash commands: a prompt that starts with `/name` is a command for the session, not a message for
 * the model. This module says which prompts are commands (`parse`), which commands exist
 * (`builtin`, also listed in `system`/`init`'s `slash_commands`), and what `/help` and an unknown
 * command say. As in Claude Code, `/usr/bin/env is broken` is not a command: a name holds no `/`.
 *
 * @since 0.1.0
 */

/** A prompt read as a command: its name (without the slash) and the rest of the line. @category Models */
export interface Invocation {
  readonly name: string
  /** The text after the name, trimmed ("" when none). */
  readonly args: string
}

/** A command the session answers. @category Models */
export interface Command {
  readonly name: string
  /** What follows the name, for `/help` (`[instructions]`). */
  readonly argumentHint?: string | undefined
  readonly description: string
}

/** The commands a session answers itself, in the order `/help` lists them. @category Constants */
export const builtin: ReadonlyArray<Command> = [
  {
    name: "compact",
    argumentHint: "[instructions]",
    description: "Summarise the conversation so far to free context (optional focus instructions)"
  },
  { name: "clear", description: "Start a new session with an empty conversation (the current one stays saved)" },
  { name: "context", description: "Show what the context window holds: system prompt, tools, messages, free space" },
  { name: "cost", description: "Show the session's cost and token usage so far, per model" },
  {
    name: "model",
    argumentHint: "[name]",
    description: "Show the model, or switch later turns to another (sonnet, opus, haiku, default or a model id)"
  },
  { name: "help", description: "Show the commands and how to attach files with @path" }
]

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

/** The command of this name among `commands`. @category Lookup */
export const find = (name: string, commands: ReadonlyArray<Command> = builtin): Command | undefined =>
  commands.find((c) => c.name === name)

/** `/name [hint]`. @category Rendering */
export const usage = (command: Command): string =>
  command.argumentHint === undefined ? `/${command.name}` : `/${command.name} ${command.argumentHint}`

/** What `/help` prints. @category Rendering */
export const help = (commands: ReadonlyArray<Command> = builtin): string => {
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
export const unknown = (name: string, commands: ReadonlyArray<Command> = builtin): string =>
  `Unknown command: /${name}. The commands are ${commands.map((c) => `/${c.name}`).join(", ")} (see /help). ` +
  "Nothing was sent to the model; to send text that starts with a slash, begin the prompt with another word."
