/**
 * The tool calls of a turn as the REPL shows them, between their `●` line and their `⎿` outcome:
 * whether the line is shown yet, when the call started running (not when it was asked: a call
 * waiting for a permission answer has no time and shows no progress), and how a denial ended it
 * (the user's, with their reason, or the policy's message), so that the outcome line says it once.
 *
 * @since 0.1.0
 */

/** How a call was denied. @category Models */
export type Denial =
  | { readonly _tag: "ByUser"; readonly reason: string | undefined }
  | { readonly _tag: "ByPolicy"; readonly message: string }

/** One call. @category Models */
export interface Call {
  readonly label: string
  /** When it started running; `undefined` while a permission question about it waits. */
  startedAt: number | undefined
  /** A permission question was asked about it: its time counts from the answer, not from the call. */
  asked: boolean
  denial: Denial | undefined
}

/** The calls of the turn, by tool use id. @category Models */
export class ToolCalls {
  private readonly calls = new Map<string, Call>()

  /** The call, if it is shown and not finished. */
  get(id: string): Call | undefined {
    return this.calls.get(id)
  }

  /** How many calls are shown and not finished. */
  get size(): number {
    return this.calls.size
  }

  /** A call whose line is being shown, running from `startedAt` (`undefined`: it waits for an answer). */
  add(id: string, label: string, startedAt: number | undefined): void {
    this.calls.set(id, { label, startedAt, asked: startedAt === undefined, denial: undefined })
  }

  /** The call's permission question is shown: its time does not run. */
  waiting(id: string): void {
    const call = this.calls.get(id)
    if (call === undefined) return
    call.startedAt = undefined
    call.asked = true
  }

  /** The call starts running now (its question was answered yes). */
  started(id: string, now: number): void {
    const call = this.calls.get(id)
    if (call !== undefined) call.startedAt = now
  }

  /** The call was denied; the user's denial is kept over the policy's message about it. */
  denied(id: string, denial: Denial): void {
    const call = this.calls.get(id)
    if (call !== undefined && call.denial?._tag !== "ByUser") call.denial = denial
  }

  /** The call ended: it is taken out, and returned. */
  finish(id: string): Call | undefined {
    const call = this.calls.get(id)
    this.calls.delete(id)
    return call
  }

  /** Forgets every call. */
  clear(): void {
    this.calls.clear()
  }
}

/**
 * The text of a denied call's outcome line: `Denied by you: <reason>` (or `Denied by you`), or the
 * policy's message (which says why).
 *
 * @category Rendering
 */
export const describeDenial = (denial: Denial): string =>
  denial._tag === "ByUser"
    ? denial.reason === undefined ? "Denied by you" : `Denied by you: ${denial.reason}`
    : denial.message
