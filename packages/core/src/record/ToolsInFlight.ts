/**
 * Counts the tool calls running now: a registry decorator for a replay that runs its tools live
 * (`keel replay --tools live`), whose virtual clock must stand still while real work is in flight
 * (see `VirtualTime.run`'s `busy`).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Tool from "../tool/Tool.js"
import * as ToolRegistry from "../tool/ToolRegistry.js"

/** The number of calls running now. @category Models */
export interface Counter {
  running: number
}

/** A counter at zero. @category Constructors */
export const counter = (): Counter => ({ running: 0 })

/** The registry below with each call counted in `counter` while it runs. @category Layers */
export const layer = (count: Counter): Layer.Layer<ToolRegistry.ToolRegistry, never, ToolRegistry.ToolRegistry> =>
  ToolRegistry.layerMap((tool): Tool.Any => ({
    ...tool,
    call: (input, context) =>
      Effect.acquireUseRelease(
        Effect.sync(() => void count.running++),
        () => tool.call(input, context),
        () => Effect.sync(() => void count.running--)
      )
  }))
