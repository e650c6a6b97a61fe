/**
 * The agent types of a run: the built-in subagent types, the user's and the project's Markdown
 * agents, and the agents given as definitions (`--agents`, `query()`'s or the host's `initialize`
 * `agents`), merged by name with Claude Code's precedence: definitions over the project's files over
 * the user's over the built-in types. The files are read from, lowest first:
 * `~/.claude/agents`, `$KEEL_HOME/agents` (the user's), `<cwd>/.claude/agents`,
 * `<cwd>/.keel/agents` (the project's); Keel's folder wins over Claude Code's at the same level.
 *
 * The `Task` tool offers them all; `main`, when the run names one (`--agent`), is the agent the main
 * thread runs as (its prompt, tools and model). Unusable definitions stop the run
 * (`InvalidAgents`), as does a `main` no agent has (`UnknownAgent`); an unusable file only skips
 * that file, with a warning.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { ToolRegistry } from "@keel/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Subagents from "../Subagents.js"
import * as AgentDefinition from "./AgentDefinition.js"
import * as AgentFiles from "./AgentFiles.js"

/** An agent type as hosts see it (the Agent SDK's `AgentInfo`). @category Models */
export interface Info {
  readonly name: string
  readonly description: string
  readonly model?: string
}

/** @category Models */
export interface Service {
  /** The agent types the `Task` tool offers: the built-in ones (or what replaced them), then the others by name. */
  readonly definitions: ReadonlyArray<Subagents.Definition>
  /** The agent the main thread runs as (`--agent`), if any. */
  readonly main: Subagents.Definition | undefined
  /** {@link definitions} as hosts list them. */
  readonly info: ReadonlyArray<Info>
  /** One line per agent file skipped or key ignored. */
  readonly warnings: ReadonlyArray<string>
}

/** @category Context */
export class Agents extends Context.Tag("@keel/tools/Agents")<Agents, Service>() {}

/** `--agent` (or `query()`'s `agent`) names no agent. @category Errors */
export class UnknownAgent extends Schema.TaggedError<UnknownAgent>("@keel/tools/UnknownAgent")("UnknownAgent", {
  /** Where the name came from (`--agent`, `query() option agent`). */
  origin: Schema.String,
  agent: Schema.String,
  known: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `${this.origin} ${this.agent}: no agent has that name; the agents are ${this.known.join(", ")}. ` +
      `Define it in .claude/agents/${this.agent}.md or with --agents.`
  }
}

/** Options of {@link make}. @category Models */
export interface Options {
  /** The working directory: the project's agents are in its `.claude/agents` and `.keel/agents`. */
  readonly cwd: string
  /** Keel's home folder (`$KEEL_HOME`): the user's agents are in its `agents`. */
  readonly home: string
  /** The user's home folder: Claude Code's user agents are in its `.claude/agents`. */
  readonly userHome: string
  /** Agent definitions over the files: JSON text (`--agents`) or the Agent SDK's `agents` record. */
  readonly agents?: unknown
  /** Where `agents` came from, for messages (default `--agents`). */
  readonly agentsOrigin?: string | undefined
  /** The agent the main thread runs as. */
  readonly main?: string | undefined
  /** Where `main` came from, for messages (default `--agent`). */
  readonly mainOrigin?: string | undefined
  /** The built-in types (default `Subagents.builtin`). */
  readonly builtin?: ReadonlyArray<Subagents.Definition> | undefined
}

/** The folders of agent files, lowest precedence first. @category Files */
export const folders = (options: Pick<Options, "cwd" | "home" | "userHome">, path: Path.Path): ReadonlyArray<string> => [
  path.join(options.userHome, ".claude", "agents"),
  path.join(options.home, "agents"),
  path.join(options.cwd, ".claude", "agents"),
  path.join(options.cwd, ".keel", "agents")
]

/**
 * Merges agent types by name, each later list over the earlier ones: the first list's order
 * (replaced in place), then the other names in alphabetical order.
 *
 * @category Combinators
 */
export const merge = (...layers: ReadonlyArray<ReadonlyArray<Subagents.Definition>>): ReadonlyArray<Subagents.Definition> => {
  const byName = new Map<string, Subagents.Definition>()
  for (const list of layers) for (const definition of list) byName.set(definition.agentType, definition)
  const first = (layers[0] ?? []).map((d) => d.agentType)
  const rest = [...byName.keys()].filter((name) => !first.includes(name)).sort((a, b) => a.localeCompare(b))
  return [...first, ...rest].map((name) => byName.get(name)!)
}

/** The agent types of a run (see the module's description). @category Constructors */
export const make = (
  options: Options
): Effect.Effect<Service, AgentDefinition.InvalidAgents | UnknownAgent, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const warnings: Array<string> = []
    const files: Array<ReadonlyArray<Subagents.Definition>> = []
    for (const folder of new Set(folders(options, path))) {
      const loaded = yield* AgentFiles.load(folder)
      files.push(loaded.definitions)
      warnings.push(...loaded.warnings)
    }
    let given: ReadonlyArray<Subagents.Definition> = []
    if (options.agents !== undefined) {
      const read = AgentDefinition.readRecord(options.agents, options.agentsOrigin ?? "--agents")
      if (Either.isLeft(read)) return yield* read.left
      given = read.right.definitions
      warnings.push(...read.right.warnings)
    }
    const definitions = merge(options.builtin ?? Subagents.builtin, ...files, given)
    let main: Subagents.Definition | undefined
    if (options.main !== undefined) {
      main = definitions.find((d) => d.agentType === options.main)
      if (main === undefined) {
        return yield* new UnknownAgent({
          origin: options.mainOrigin ?? "--agent",
          agent: options.main,
          known: definitions.map((d) => d.agentType)
        })
      }
    }
    const info = definitions.map((d): Info => ({
      name: d.agentType,
      description: d.whenToUse,
      ...(d.model !== undefined ? { model: d.model } : {})
    }))
    return Agents.of({ definitions, main, info, warnings })
  })

/** {@link make} as a layer. @category Layers */
export const layer = (
  options: Options
): Layer.Layer<Agents, AgentDefinition.InvalidAgents | UnknownAgent, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(Agents, make(options))

/**
 * The tools of the main thread: the registry below, or, when the main thread runs as an agent,
 * those of its tools the agent allows (its `tools` and `disallowedTools`; `Task` and the tools
 * that talk to the user only when its `tools` name them or it names none).
 *
 * @category Layers
 */
export const layerMainTools: Layer.Layer<ToolRegistry.ToolRegistry, never, ToolRegistry.ToolRegistry | Agents> = Layer
  .effect(
    ToolRegistry.ToolRegistry,
    Effect.gen(function*() {
      const below = yield* ToolRegistry.ToolRegistry
      const { main } = yield* Agents
      return main === undefined ? below : ToolRegistry.make(below.tools.filter((t) => Subagents.allows(main, t.name)))
    })
  )

/**
 * The model the main thread runs on as `main`: its `model` with aliases resolved, or `undefined`
 * for none or `inherit` (the run's own model).
 *
 * @category Models
 */
export const mainModel = (main: Subagents.Definition | undefined): string | undefined =>
  main?.model === undefined || main.model === Subagents.INHERIT ? undefined : Subagents.resolveModel(main.model)
