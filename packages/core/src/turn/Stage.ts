/**
 * A preprocessing stage: takes the conversation about to be sent and returns a (possibly) smaller
 * one plus a report of what it changed. Stages run in order in the `Pipeline` before every model call.
 *
 * @since 0.1.0
 */
import type * as Effect from "effect/Effect"
import type { Message } from "../message/Message.js"

/** What a stage knows about the request it prepares. @category Models */
export interface StageContext {
  readonly model: string
  /** The iteration of the turn loop, from 1. */
  readonly iteration: number
}

/** What a stage did. `report` is absent when the stage changed nothing. @category Models */
export interface StageResult {
  readonly messages: ReadonlyArray<Message>
  readonly report?: string | undefined
}

/** A preprocessing stage. @category Models */
export interface Stage {
  readonly name: string
  readonly run: (messages: ReadonlyArray<Message>, context: StageContext) => Effect.Effect<StageResult>
}

/** A stage report, as the turn loop emits it. @category Models */
export interface StageReport {
  readonly stage: string
  readonly report: string
}
