/**
 * The slash commands a session answers: a service, so an embedder adds its own and the session
 * finds them all in one place. A command reads the session's state and answers with what the
 * session does next: a reply without calling the model (`/cost`), a prompt for a model turn (a
 * custom command from `.keel/commands/review.md`), a compaction, or a new session.
 *
 * Names are unique: a later source replaces an earlier command of the same name (built-in, then the
 * project's Markdown commands, the user's, then the embedder's), except that Markdown files never
 * replace the built-in commands that control the session (`/clear`, `/compact`, `/cost`, ...): a
 * repository cannot change what those do.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Ref from "effect/Ref"
import type { UserMessage } from "../message/Message.js"
import type { ModelRequest, ToolDefinition } from "../model/ModelRequest.js"
import type * as Pricing from "../session/Pricing.js"
import type * as SessionState from "../session/SessionState.js"
import type * as TurnEnvelope from "../session/TurnEnvelope.js"

/** What a command tells the session to do. @category Models */
export type CommandResult = Data.TaggedEnum<{
  /** Answer with `text` (a `system`/`local_command_output` and a result); nothing goes to the model. */
  Reply: { readonly text: string; readonly isError: boolean }
  /**
   * Run a model turn with `prompt` as the user's message, on `model` for this turn only when given
   * (a custom command's `model:`).
   */
  Prompt: { readonly prompt: UserMessage; readonly model?: string | undefined }
  /** Compact the conversation now, with the user's extra instructions. */
  Compact: { readonly instructions: string | undefined }
  /** Start a new session: a new id, an empty conversation, a new transcript. */
  Clear: {}
}>

/** Constructors and matchers for `CommandResult`. @category Constructors */
export const CommandResult = Data.taggedEnum<CommandResult>()

/** What a command can read and change. @category Models */
export interface CommandContext {
  readonly state: SessionState.Service
  /** The model later turns use; `/model name` sets it. */
  readonly model: Ref.Ref<string>
  /** The model the session started with (`/model default`). */
  readonly defaultModel: string
  readonly pricing: Pricing.Table
  readonly maxOutputTokens: (model: string) => number
  /** The system prompt the next request would carry. */
  readonly system: Effect.Effect<ModelRequest["system"] | undefined>
  readonly tools: ReadonlyArray<ToolDefinition>
  /** When the session started (`Clock` ms), for `/cost`'s wall time. */
  readonly startedAt: number
  /** Every command of the session (for `/help`). */
  readonly commands: ReadonlyArray<Command>
  /**
   * The last turn's envelope: what it was built from (a resumed transcript's last until the first
   * turn; `undefined` before the first turn of a new session).
   */
  readonly envelope: Effect.Effect<TurnEnvelope.TurnEnvelope | undefined>
  /** The system prompt the next turn sends (its sha256) and where its context came from. */
  readonly nextContext: Effect.Effect<{ readonly hash: string; readonly context: TurnEnvelope.ContextInfo }>
  /**
   * Builds the session's context again now (instruction files, environment, git), for the turns
   * after it (`/context refresh`).
   */
  readonly refreshContext: Effect.Effect<void>
}

/** Where a command comes from. @category Models */
export type Source = "builtin" | "project" | "user" | "embedder"

/** A slash command. @category Models */
export interface Command {
  /** Its name, without the slash (`review`, `frontend:component`). */
  readonly name: string
  readonly description: string
  /** What follows the name, for `/help` (`[instructions]`). */
  readonly argumentHint?: string | undefined
  readonly source: Source
  /** Answers `/name args` (`args` trimmed, "" when none). */
  readonly run: (args: string, context: CommandContext) => Effect.Effect<CommandResult>
}

/** @category Models */
export interface Service {
  /** Every command, in the order `/help` lists them. */
  readonly commands: ReadonlyArray<Command>
  readonly find: (name: string) => Command | undefined
}

/** @category Context */
export class Commands extends Context.Tag("@keel/core/Commands")<Commands, Service>() {}

/**
 * The built-in commands that Markdown files (`project`, `user`) cannot replace: they control the
 * session itself.
 *
 * @category Constants
 */
export const PROTECTED: ReadonlySet<string> = new Set(["clear", "compact", "context", "cost", "goal", "help", "model"])

/**
 * The commands of `sources`, in order: a later command replaces an earlier one of its name (in its
 * place), except that a Markdown command never replaces a protected built-in one.
 *
 * @category Constructors
 */
export const make = (...sources: ReadonlyArray<ReadonlyArray<Command>>): Service => {
  const byName = new Map<string, Command>()
  for (const command of sources.flat()) {
    const existing = byName.get(command.name)
    const markdown = command.source === "project" || command.source === "user"
    if (existing !== undefined && existing.source === "builtin" && markdown && PROTECTED.has(command.name)) continue
    byName.set(command.name, command)
  }
  const commands = [...byName.values()]
  return Commands.of({ commands, find: (name) => byName.get(name) })
}

/** These commands. @category Layers */
export const layer = (commands: ReadonlyArray<Command>): Layer.Layer<Commands> => Layer.succeed(Commands, make(commands))

/**
 * The commands below with `commands` added after them (replacing those of the same name, as
 * {@link make} says): an embedder's commands, or the Markdown commands of a folder.
 *
 * @category Layers
 */
export function layerAppend(commands: ReadonlyArray<Command>): Layer.Layer<Commands, never, Commands>
export function layerAppend<E, R>(
  commands: Effect.Effect<ReadonlyArray<Command>, E, R>
): Layer.Layer<Commands, E, Commands | R>
export function layerAppend<E, R>(
  commands: ReadonlyArray<Command> | Effect.Effect<ReadonlyArray<Command>, E, R>
): Layer.Layer<Commands, E, Commands | R> {
  return Layer.effect(
    Commands,
    Effect.gen(function*() {
      const below = yield* Commands
      const more = Effect.isEffect(commands) ? yield* commands : commands
      return make(below.commands, more)
    })
  )
}

/** An embedder's command that answers with text. @category Constructors */
export const reply = (
  name: string,
  description: string,
  answer: (args: string, context: CommandContext) => Effect.Effect<string>
): Command => ({
  name,
  description,
  source: "embedder",
  run: (args, context) => Effect.map(answer(args, context), (text) => CommandResult.Reply({ text, isError: false }))
})
