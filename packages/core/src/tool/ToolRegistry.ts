/**
 * The tools a session offers, by name, provided as a Layer so an embedder chooses the set.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { ToolDefinition } from "../model/ModelRequest.js"
import { type Any, toDefinition } from "./Tool.js"

/** @category Models */
export interface Service {
  readonly tools: ReadonlyArray<Any>
  readonly get: (name: string) => Any | undefined
  /** The tools' definitions for the API, in registry order. */
  readonly definitions: ReadonlyArray<ToolDefinition>
}

/** @category Context */
export class ToolRegistry extends Context.Tag("@keel/core/ToolRegistry")<ToolRegistry, Service>() {}

/** A registry of these tools. Two tools with one name is a defect. @category Constructors */
export const make = (tools: ReadonlyArray<Any>): Service => {
  const byName = new Map<string, Any>()
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new Error(`Two tools are named ${tool.name}`)
    byName.set(tool.name, tool)
  }
  return ToolRegistry.of({ tools, get: (name) => byName.get(name), definitions: tools.map(definitionOf) })
}

/**
 * A tool's definition, made once per tool: deriving a JSON Schema costs ~1 ms a tool at start-up, and
 * a registry with tools appended (`layerAppend`) holds the tools below it again.
 */
const definitions = new WeakMap<Any, ToolDefinition>()
const definitionOf = (tool: Any): ToolDefinition => {
  let definition = definitions.get(tool)
  if (definition === undefined) definitions.set(tool, definition = toDefinition(tool))
  return definition
}

/** A registry layer of these tools. @category Layers */
export const layer = (tools: ReadonlyArray<Any>): Layer.Layer<ToolRegistry> =>
  Layer.effect(ToolRegistry, Effect.sync(() => make(tools)))

/** A registry layer of tools built by an effect (tools that need platform services). @category Layers */
export const layerEffect = <E, R>(tools: Effect.Effect<ReadonlyArray<Any>, E, R>): Layer.Layer<ToolRegistry, E, R> =>
  Layer.effect(ToolRegistry, Effect.map(tools, make))

/**
 * A registry layer of the registry below plus the tools built by an effect, after them: the
 * built-in tools, then an embedder's or MCP servers' tools. A name taken twice is a defect.
 *
 * @category Layers
 */
export const layerAppend = <E, R>(
  tools: Effect.Effect<ReadonlyArray<Any>, E, R>
): Layer.Layer<ToolRegistry, E, ToolRegistry | R> =>
  Layer.effect(
    ToolRegistry,
    Effect.gen(function*() {
      const below = yield* ToolRegistry
      return make([...below.tools, ...(yield* tools)])
    })
  )

/**
 * The registry below with each tool replaced by `f(tool)`: a decorator of every call (recording,
 * replay, counting) that keeps the tools' names and definitions as the model sees them.
 *
 * @category Layers
 */
export const layerMap = (f: (tool: Any) => Any): Layer.Layer<ToolRegistry, never, ToolRegistry> =>
  Layer.effect(
    ToolRegistry,
    Effect.map(ToolRegistry, (below) => {
      const tools = below.tools.map(f)
      const byName = new Map(tools.map((tool) => [tool.name, tool]))
      return ToolRegistry.of({ tools, get: (name) => byName.get(name), definitions: below.definitions })
    })
  )

/** No tools at all. @category Layers */
export const layerEmpty: Layer.Layer<ToolRegistry> = layer([])
