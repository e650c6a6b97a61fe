/**
 * Ctrl+O: the last tool call's whole output. The REPL shows one short outcome line per call
 * (`⎿ 42 lines · 0.3 s`); this keeps the last call's label and the full text of its result, so a
 * key can print it into the scrollback. Printing it (rather than a transcript view that toggles)
 * works in any terminal: what scrolled up stays in the terminal's own scrollback, which the REPL
 * cannot redraw, and the output printed there can be scrolled, searched and copied as usual.
 *
 * @since 0.1.0
 */
import type { SdkMessage } from "@keel/core"
import * as ToolLine from "./ToolLine.js"

/** A finished call's whole output. @category Models */
export interface Output {
  /** `Name(short input)`, as its call line showed it. */
  readonly label: string
  readonly text: string
  readonly error: boolean
}

/** Watches a session's messages for the last tool output. @category Models */
export interface LastOutput {
  /** Feed it every message rendered. */
  readonly observe: (message: SdkMessage.SdkMessage) => void
  /** The last call's output, if a call ended since the start. */
  readonly last: () => Output | undefined
}

/** A watcher of the calls of the main conversation (a subagent's calls are its own) in `cwd`. @category Constructors */
export const make = (cwd: string): LastOutput => {
  const labels = new Map<string, string>()
  let last: Output | undefined
  return {
    observe: (message) => {
      if (message.type === "assistant" && message.parent_tool_use_id === null) {
        for (const block of message.message.content as ReadonlyArray<{ type: string; id?: string; name?: string; input?: unknown }>) {
          if (block.type === "tool_use" && block.id !== undefined) {
            labels.set(block.id, ToolLine.describeCall(block.name ?? "tool", block.input, cwd))
          }
        }
      }
      if (message.type === "user" && message.parent_tool_use_id === null && typeof message.message.content !== "string") {
        for (const block of message.message.content as ReadonlyArray<{ type: string; tool_use_id?: string; content?: unknown; is_error?: boolean }>) {
          if (block.type !== "tool_result" || block.tool_use_id === undefined) continue
          last = { label: labels.get(block.tool_use_id) ?? "tool", text: ToolLine.resultText(block.content), error: block.is_error === true }
          labels.delete(block.tool_use_id)
        }
      }
    },
    last: () => last
  }
}
