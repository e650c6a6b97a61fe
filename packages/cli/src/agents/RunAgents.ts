/**
 * A run's custom agents as layers of its graph (`Runtime.layer`): the agent types (`Agents`, from
 * the agent files and the run's `agents`), and the system prompt's assembly when the main thread
 * runs as an agent (`--agent`).
 *
 * @since 0.1.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { ContextAssembly, ContextManagement } from "@keel/core"
import { type AgentDefinition, Agents } from "@keel/tools"
import type { ConfigError } from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as os from "node:os"

/** What a run's agents are built from (these fields of `Runtime.Options`). @category Models */
export interface AgentOptions {
  readonly cwd: string
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  /** `--agents` JSON, or the Agent SDK's `agents` record. */
  readonly agents?: unknown
  /** Where `agents` came from, for messages (default `--agents`). */
  readonly agentsOrigin?: string | undefined
  /** The agent the main thread runs as (`--agent`). */
  readonly agent?: string | undefined
  /** Where `agent` came from, for messages (default `--agent`). */
  readonly agentOrigin?: string | undefined
}

/**
 * The run's agent types (see `Agents`): the agent files of the project, of `$KEEL_HOME` and of the
 * user's `~/.claude` (`HOME` from the run's environment), under `options.agents`.
 *
 * @category Layers
 */
export const layer = (
  options: AgentOptions
): Layer.Layer<Agents.Agents, AgentDefinition.InvalidAgents | Agents.UnknownAgent | ConfigError> =>
  Layer.unwrapEffect(Effect.map(ContextManagement.homeConfig, (home) =>
    Agents.layer({
      cwd: options.cwd,
      home,
      userHome: options.env?.HOME ?? os.homedir(),
      agents: options.agents,
      agentsOrigin: options.agentsOrigin,
      main: options.agent,
      mainOrigin: options.agentOrigin
    }))).pipe(Layer.provide(NodeContext.layer))

/**
 * The default system prompt's assembly; when the main thread runs as an agent, its prompt is the
 * base instructions (the instruction files and the environment still follow, as in Claude Code).
 *
 * @category Layers
 */
export const assemblyLayer = (cwd: string) =>
  Layer.unwrapEffect(Effect.gen(function*() {
    const { main } = yield* Agents.Agents
    if (main === undefined) return ContextAssembly.layerConfig
    const home = yield* ContextManagement.homeConfig
    return ContextAssembly.layer({ home, base: main.prompt ?? main.systemPrompt(cwd) })
  }))
