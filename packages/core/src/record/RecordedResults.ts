/**
 * What a session's journal recorded of its tool calls, for a resume after a crash: a call whose
 * `tool_end` the journal holds finished before the process died, and keeps its result (it is not
 * run again, and not answered "interrupted"). A call the journal saw start but not end was running
 * when the process died: it was cut short. A call the journal never saw start never ran.
 *
 * What a resume does with each (`DurableTurn.answerOf`): a finished call keeps its result; a call
 * cut short runs again if its tool declares it idempotent, else it is answered with an error that
 * tells the model so ({@link CUT_SHORT}); a call that never ran runs (its permission asked as
 * usual). A session that is not resumed as a turn keeps its transcript valid with {@link answerOf}.
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

/** What the journal recorded of one call. @category Models */
export type Recorded =
  /** It ended (done, or failed as a tool error): its result as the model would have read it. */
  | { readonly _tag: "Finished"; readonly result: ToolResultBlock }
  /** It started and never ended (or ended interrupted): it may have done part of its work. */
  | { readonly _tag: "CutShort" }

/** What the journal recorded of the call answering `tool_use` `id`, if it saw it start. @category Models */
export type Lookup = (id: string) => Recorded | undefined

/** The recorded calls of a journal, by `tool_use` id (a call run again after a resume: its last run). @category Constructors */
export const of = (entries: ReadonlyArray<JournalEntry.Entry>): Lookup => {
  const calls = toolCalls(entries)
  return (id) => {
    const call = calls.get(id)
    const end = call?.end
    if (call === undefined) return undefined
    if (end === undefined || end.outcome === "interrupted") return { _tag: "CutShort" }
    if (end.outcome === "error") return { _tag: "Finished", result: errorResult(id, end.error ?? "") }
    const output = end.output ?? ""
    return {
      _tag: "Finished",
      result: successResult(call.start, id, end.result === undefined ? output : Tool.structured(output, end.result))
    }
  }
}

/**
 * The answer that keeps a transcript valid for call `id` without running anything: its recorded
 * result, the {@link CUT_SHORT} error for a call cut short, nothing for a call that never ran (the
 * caller answers it as interrupted).
 *
 * @category Answers
 */
export const answerOf = (recorded: Recorded | undefined, id: string): ToolResultBlock | undefined =>
  recorded === undefined ? undefined : recorded._tag === "Finished" ? recorded.result : errorResult(id, CUT_SHORT)
