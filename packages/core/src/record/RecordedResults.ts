/**
 * The results of tool calls a crash cut off from the transcript, from the session's journal: a
 * call whose `tool_end` the journal holds finished before the process died, and keeps its result
 * when the session is resumed (it is not run again, and not answered "interrupted"). A call the
 * journal saw start but not end was running when the process died: it is answered with an error
 * that tells the model so ({@link CUT_SHORT}), never run a second time. A call the journal never
 * saw start gets nothing here (the resume answers it as interrupted).
 *
 * @since 0.1.0
 */
import type { ToolResultBlock } from "../message/Message.js"
import * as Tool from "../tool/Tool.js"
import { errorResult, successResult } from "../tool/ToolRuntime.js"
import type * as JournalEntry from "./JournalEntry.js"
import { toolCalls } from "./ReplayTools.js"

/** What the model reads for a call that was running when the process died. @category Constants */
export const CUT_SHORT =
  "Interrupted: the process stopped while this call was running, and it was not run again. It may have done part of its work: check before you repeat it."

/** The recorded result of the call answering `tool_use` `id`, if the journal saw it start. @category Models */
export type Lookup = (id: string) => ToolResultBlock | undefined

/** The finished calls' results of a journal, by `tool_use` id. @category Constructors */
export const of = (entries: ReadonlyArray<JournalEntry.Entry>): Lookup => {
  const calls = toolCalls(entries)
  return (id) => {
    const call = calls.get(id)
    const end = call?.end
    if (call === undefined) return undefined
    if (end === undefined || end.outcome === "interrupted") return errorResult(id, CUT_SHORT)
    if (end.outcome === "error") return errorResult(id, end.error ?? "")
    const output = end.output ?? ""
    return successResult(call.start, id, end.result === undefined ? output : Tool.structured(output, end.result))
  }
}
