/**
 * The recording layer of tool calls: decorates the `ToolRegistry` below it so that every call of
 * every tool is journaled: when it began, its input, how long it ran, and its output, its error or
 * its interruption. A `tool_start` without its `tool_end` is a call a crash cut short.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Tool from "../tool/Tool.js"
import * as ToolRegistry from "../tool/ToolRegistry.js"
import { Journal } from "./Journal.js"
import type * as JournalEntry from "./JournalEntry.js"

/** The input as JSON: encoded back through the tool's schema, else as given. */
const inputJson = (tool: Tool.Any, input: unknown): unknown => {
  try {
    return Schema.encodeUnknownSync(tool.input)(input)
  } catch {
    return input
  }
}

/** How a call ended, as a `tool_end` line's fields. */
const endOf = (exit: Exit.Exit<Tool.CallResult, Tool.ToolError>): Omit<typeof JournalEntry.ToolEnd.Type, "type" | "id" | "at"> => {
  if (Exit.isSuccess(exit)) {
    const result = Tool.structuredOf(exit.value)
    return { outcome: "done", output: Tool.outputOf(exit.value), ...(result === undefined ? {} : { result }) }
  }
  const failure = Cause.failureOption(exit.cause)
  return failure._tag === "Some" ? { outcome: "error", error: failure.value.message } : { outcome: "interrupted" }
}

/** `tool` with its calls journaled in `journal`. @category Constructors */
export const wrap = (tool: Tool.Any, journal: Journal["Type"]): Tool.Any => ({
  ...tool,
  call: (input, context) =>
    !journal.active() ? tool.call(input, context) : Effect.flatMap(Clock.currentTimeMillis, (began) => {
      journal.append({ type: "tool_start", id: context.toolUseId, name: tool.name, at: began - journal.startedAt, input: inputJson(tool, input) })
      return tool.call(input, context).pipe(
        Effect.onExit((exit) =>
          Effect.map(Clock.currentTimeMillis, (now) => journal.append({ type: "tool_end", id: context.toolUseId, at: now - began, ...endOf(exit) }))
        )
      )
    })
})

/** The registry below with every tool's calls journaled in the `Journal`. @category Layers */
export const layer: Layer.Layer<ToolRegistry.ToolRegistry, never, ToolRegistry.ToolRegistry | Journal> = Layer.unwrapEffect(
  Effect.map(Journal, (journal) => ToolRegistry.layerMap((tool) => wrap(tool, journal)))
)
