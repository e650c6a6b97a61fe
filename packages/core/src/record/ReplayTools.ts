/**
 * Tool calls served from a journal (`keel replay --tools recorded`, the default): each call of a
 * tool returns what it returned when recorded, after as long as it ran then (on `Clock`), without
 * running anything. A call the journal does not have, or one recorded for another tool, fails as a
 * tool error saying so (and the replay then diverges on the next model call, which names it).
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Tool from "../tool/Tool.js"
import * as ToolRegistry from "../tool/ToolRegistry.js"
import type * as JournalEntry from "./JournalEntry.js"

/** A recorded tool call: its start and, unless a crash cut it short, its end. @category Models */
export interface RecordedTool {
  readonly start: typeof JournalEntry.ToolStart.Type
  readonly end?: typeof JournalEntry.ToolEnd.Type | undefined
}

/** The tool calls of a journal, by the id of the `tool_use` block each answers. @category Conversions */
export const toolCalls = (entries: ReadonlyArray<JournalEntry.Entry>): ReadonlyMap<string, RecordedTool> => {
  const calls = new Map<string, { start: typeof JournalEntry.ToolStart.Type; end?: typeof JournalEntry.ToolEnd.Type }>()
  for (const entry of entries) {
    if (entry.type === "tool_start") calls.set(entry.id, { start: entry })
    else if (entry.type === "tool_end") {
      const call = calls.get(entry.id)
      if (call !== undefined) call.end = entry
    }
  }
  return calls
}

/** The recorded outcome of a call, after its recorded duration. */
const served = (recorded: RecordedTool | undefined, name: string, id: string): Effect.Effect<Tool.CallResult, Tool.ToolError> => {
  if (recorded === undefined || recorded.start.name !== name) {
    return Effect.fail(new Tool.ToolError({ message: `The recording has no ${name} call ${id}` }))
  }
  const end = recorded.end
  if (end === undefined || end.outcome === "interrupted") return Effect.never
  const after = Effect.sleep(Duration.millis(end.at))
  if (end.outcome === "error") return Effect.zipRight(after, Effect.fail(new Tool.ToolError({ message: end.error ?? "" })))
  const output = end.output ?? ""
  return Effect.as(after, end.result === undefined ? output : Tool.structured(output, end.result))
}

/** The registry below with every tool's calls served from `entries`. @category Layers */
export const layer = (entries: ReadonlyArray<JournalEntry.Entry>): Layer.Layer<ToolRegistry.ToolRegistry, never, ToolRegistry.ToolRegistry> =>
  Layer.suspend(() => {
    const recorded = toolCalls(entries)
    return ToolRegistry.layerMap((tool): Tool.Any => ({
      ...tool,
      call: (_input, context) => served(recorded.get(context.toolUseId), tool.name, context.toolUseId)
    }))
  })
