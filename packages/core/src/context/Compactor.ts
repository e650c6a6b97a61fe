/**
 * Compaction on demand: the turn loop's answer when the API itself says the prompt is too long (an
 * aggressive compaction, after which the request is made once more), and the session's `/compact`.
 * Provided by `Autocompact.layer` and `ContextManagement.layer` (with their pipeline); without it,
 * `PromptTooLong` ends the turn and `/compact` says it is not available.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Message } from "../message/Message.js"
import type { StageContext, StageResult } from "../turn/Stage.js"

/** @category Models */
export interface Service {
  /**
   * Compacts `messages` hard (summary + the last few turns). The result's `halt` is set when it
   * failed or the circuit breaker is open; the turn then ends with `prompt_too_long`.
   */
  readonly reactive: (messages: ReadonlyArray<Message>, context: StageContext) => Effect.Effect<StageResult>
  /**
   * `/compact [instructions]`: summarises the whole conversation now, with the user's extra
   * instructions. `halt` is set when it failed.
   */
  readonly manual: (
    messages: ReadonlyArray<Message>,
    context: StageContext,
    instructions: string | undefined
  ) => Effect.Effect<StageResult>
}

/** @category Context */
export class Compactor extends Context.Tag("@keel/core/Compactor")<Compactor, Service>() {}
