/**
 * What the resilience layers tell the consumer while a model call is under way, in the same stream
 * as the model's events: a retry is coming, a long wait is still waiting, the partial answer so far
 * is void, the model was switched, the stream has gone quiet. Each is a plain value tagged
 * `type: "notice"`, so one check tells a notice from a raw event.
 *
 * @since 0.1.0
 */
import type { ModelError } from "./ModelError.js"

interface NoticeBase<Tag extends string> {
  readonly type: "notice"
  readonly _tag: Tag
}

/** The call failed and will be retried after `delayMs`. @category Models */
export interface Retrying extends NoticeBase<"Retrying"> {
  /** Which retry this is (1 for the first). */
  readonly attempt: number
  /** The retry budget; `null` when unbounded (persistent mode for 429/529). */
  readonly maxRetries: number | null
  readonly delayMs: number
  readonly error: ModelError
}

/** Still waiting to retry: a heartbeat every interval of a long wait. @category Models */
export interface Waiting extends NoticeBase<"Waiting"> {
  readonly attempt: number
  readonly waitedMs: number
  readonly remainingMs: number
  readonly error: ModelError
}

/** Everything the stream emitted since its attempt began is void: a new attempt follows. @category Models */
export interface Retracted extends NoticeBase<"Retracted"> {
  readonly reason: "retry" | "fallback"
  /** The id from the retracted attempt's `message_start`, if it got that far. */
  readonly messageId: string | undefined
}

/** Later requests go to `to` instead of `from`. @category Models */
export interface ModelSwitched extends NoticeBase<"ModelSwitched"> {
  readonly from: string
  readonly to: string
  readonly error: ModelError
}

/** No event for `idleMs`; the call fails with `StreamIdle` at `timeoutMs`. @category Models */
export interface StreamStalled extends NoticeBase<"StreamStalled"> {
  readonly idleMs: number
  readonly timeoutMs: number
}

/** Every notice. @category Models */
export type ModelNotice = Retrying | Waiting | Retracted | ModelSwitched | StreamStalled

/** @category Constructors */
export const retrying = (fields: Omit<Retrying, "type" | "_tag">): Retrying => ({ type: "notice", _tag: "Retrying", ...fields })
/** @category Constructors */
export const waiting = (fields: Omit<Waiting, "type" | "_tag">): Waiting => ({ type: "notice", _tag: "Waiting", ...fields })
/** @category Constructors */
export const retracted = (fields: Omit<Retracted, "type" | "_tag">): Retracted => ({
  type: "notice",
  _tag: "Retracted",
  ...fields
})
/** @category Constructors */
export const modelSwitched = (fields: Omit<ModelSwitched, "type" | "_tag">): ModelSwitched => ({
  type: "notice",
  _tag: "ModelSwitched",
  ...fields
})
/** @category Constructors */
export const streamStalled = (fields: Omit<StreamStalled, "type" | "_tag">): StreamStalled => ({
  type: "notice",
  _tag: "StreamStalled",
  ...fields
})
