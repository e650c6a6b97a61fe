/**
 * Compaction on demand: the turn loop's answer when the API itself says the prompt is too long (an
 * aggressive compaction, after which the request is made once more), and the session's `/compact`.
 * Provided by `Autocompact.layer` and `ContextManagement.layer` (with their pipeline), or
 * `Compactor.layerNone` for a session that never compacts: then `PromptTooLong` ends the turn and
 * `/compact` says it is not available.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Message } from "../message/Message.js"
import type { StageContext, StageResult } from "../turn/Stage.js"

/** @category Models */
export interface Service {
  /** Whether this compactor compacts at all (`false` for {@link none}: a prompt too long ends the turn at once). */
  readonly available: boolean
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

/** Why a session without compaction cannot compact. @category Constants */
export const UNAVAILABLE = "Compaction is not available in this session"

/** No compaction: every request to compact halts with {@link UNAVAILABLE}. @category Constructors */
export const none: Service = Compactor.of({
  available: false,
  reactive: (messages) => Effect.succeed({ messages, halt: UNAVAILABLE }),
  manual: (messages) => Effect.succeed({ messages, halt: UNAVAILABLE })
})

/** {@link none} as a layer: the session never compacts. @category Layers */
export const layerNone: Layer.Layer<Compactor> = Layer.succeed(Compactor, none)
