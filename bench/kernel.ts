/**
 * What the benchmarks run the kernel's turn loop on besides its model: no context stages, no
 * compaction, the given tools with no permission checks (the explicit allow-all policy), ids from
 * the platform's generator; and `Sink`, the tool the `bench-tool-N` scenarios call.
 */
import { Compactor, Hooks, Ids, Permissions, Pipeline, Tool, ToolRegistry, ToolRuntime } from "@keel/core"
import { Effect, Layer, Schema } from "effect"

/** Takes data, returns its length. */
export const sink = Tool.make({
  name: "Sink",
  description: "Takes data, returns its length",
  input: Schema.Struct({ data: Schema.String }),
  isReadOnly: true,
  call: (input) => Effect.succeed(`${input.data.length} bytes`)
})

/** A turn's services besides its model, with `tools` (default none). */
export const turnServices = (tools: ReadonlyArray<Tool.Any> = []) =>
  Layer.mergeAll(
    Pipeline.layerEmpty,
    Compactor.layerNone,
    ToolRuntime.layer().pipe(
      Layer.provideMerge(ToolRegistry.layer(tools)),
      Layer.provideMerge(Permissions.layerAllowAll)
    ),
    Ids.layer,
    Hooks.layerNone
  )
