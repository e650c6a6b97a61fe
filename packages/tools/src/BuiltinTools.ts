/**
 * The built-in tool set as a `ToolRegistry` layer.
 *
 * @since 0.1.0
 */
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import { type Tool, ToolRegistry } from "@keel/core"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as AskUserQuestion from "./AskUserQuestion.js"
import * as Bash from "./Bash.js"
import * as Edit from "./Edit.js"
import * as Glob from "./Glob.js"
import * as Grep from "./Grep.js"
import * as Read from "./Read.js"
import * as Task from "./Task.js"
import * as TodoWrite from "./TodoWrite.js"
import * as UpdateGoal from "./UpdateGoal.js"
import * as Write from "./Write.js"

/** Options of the built-in tools. @category Models */
export interface Options {
  /** Options of the `Task` tool (its subagent types, their default model and budget). */
  readonly task?: Task.Options | undefined
  /** The environment Bash commands run in (default: this process's). */
  readonly env?: Readonly<Record<string, string>> | undefined
}

/** Every built-in tool, with these options. @category Constructors */
export const make = (
  options: Options = {}
): Effect.Effect<ReadonlyArray<Tool.Any>, never, CommandExecutor.CommandExecutor | FileSystem.FileSystem | Path.Path> =>
  Effect.map(
    Effect.all([Read.make, Write.make, Edit.make, Bash.makeWith({ env: options.env }), Grep.make]),
    ([read, write, edit, bash, grep]) => [
      read,
      write,
      edit,
      bash,
      Glob.tool,
      grep,
      TodoWrite.tool,
      options.task === undefined ? Task.tool : Task.make(options.task),
      AskUserQuestion.tool,
      UpdateGoal.tool
    ]
  )

/** Every built-in tool. @category Constructors */
export const all: Effect.Effect<
  ReadonlyArray<Tool.Any>,
  never,
  CommandExecutor.CommandExecutor | FileSystem.FileSystem | Path.Path
> = make()

/** Names of the built-in tools. @category Constants */
export const names: ReadonlyArray<string> = [
  "Read",
  "Write",
  "Edit",
  "Bash",
  "Glob",
  "Grep",
  "TodoWrite",
  "Task",
  "AskUserQuestion",
  "update_goal"
]

/**
 * A registry of the built-in tools, or of those named in `only` (in the order given). An unknown
 * name in `only` is reported by the caller; here it is skipped.
 *
 * @category Layers
 */
export const layer = (
  only?: ReadonlyArray<string>,
  options: Options = {}
): Layer.Layer<ToolRegistry.ToolRegistry, never, CommandExecutor.CommandExecutor | FileSystem.FileSystem | Path.Path> =>
  ToolRegistry.layerEffect(
    Effect.map(make(options), (tools) => only === undefined ? tools : tools.filter((t) => only.includes(t.name)))
  )
