/**
 * The fallback layer: decorates a (retrying) `ModelClient` so that, after `OVERLOADS_BEFORE_SWITCH`
 * consecutive `Overloaded` failures on one model, the call goes on with the next fallback model:
 * the partial answer is retracted and a `ModelSwitched` notice names both models. It asks the retry
 * layer below to give up after that many overloads by setting `overloadBudget` on the request
 * whenever there is a model left to switch to; on the last model, overloads are retried within the
 * ordinary budget and then fail ("Repeated 529 Overloaded errors").
 *
 * A fallback model gets its own `max_tokens` (`ModelRequest.maxTokensFor`: its default unless the
 * user set one), its own thinking parameters (the request's `thinking` setting is resolved per model
 * when sent) and no thinking block another model wrote (see `Thinking.forModel`).
 *
 * The layer is stateless: the turn loop keeps the model it switched to for the rest of its turn, and
 * each new turn starts again with the primary.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as AttemptLoop from "../internal/attemptLoop.js"
import * as CheapStream from "../internal/cheapStream.js"
import { decorateClient } from "../internal/decorate.js"
import { ModelClient } from "../model/ModelClient.js"
import * as ModelNotice from "../model/ModelNotice.js"

/** Claude Code's count of consecutive 529s that triggers a fallback. @category Constants */
export const OVERLOADS_BEFORE_SWITCH = 3

/** Options of the fallback layer. @category Models */
export interface Options {
  /** The models to fall back to, in order. */
  readonly models: ReadonlyArray<string>
  /** Consecutive overloads before switching (default {@link OVERLOADS_BEFORE_SWITCH}). */
  readonly overloadsBeforeSwitch?: number | undefined
}

/**
 * The models a call on `model` may use, in order: `model`, then the fallbacks after it in the list
 * (all of them when `model` is not in the list).
 *
 * @category Combinators
 */
export const chainFor = (model: string, fallbacks: ReadonlyArray<string>): ReadonlyArray<string> => {
  const at = fallbacks.indexOf(model)
  return [model, ...fallbacks.slice(at + 1).filter((m) => m !== model)]
}

/** Decorates `client` with model fallback. @category Constructors */
export const make = (client: ModelClient["Type"], options: Options): ModelClient["Type"] => {
  const budget = options.overloadsBeforeSwitch ?? OVERLOADS_BEFORE_SWITCH
  return ModelClient.of({
    stream: (request) => {
      if (request.source === "background" || options.models.length === 0) return client.stream(request)
      const chain = chainFor(request.model, options.models)
      if (chain.length === 1) return client.stream(request)
      return AttemptLoop.run(
        (n) => {
          const model = chain[n - 1]!
          const last = n === chain.length
          const { overloadBudget: _, ...rest } = request
          const switched = n === 1 ? rest : { ...rest, model, max_tokens: request.maxTokensFor?.(model) ?? request.max_tokens }
          return client.stream(last ? switched : { ...switched, overloadBudget: budget })
        },
        (error, n) =>
          error._tag === "Overloaded" && n < chain.length
            ? Effect.as(
              Effect.logDebug("switching to the fallback model after repeated overloads").pipe(
                Effect.annotateLogs({ from: chain[n - 1]!, to: chain[n]! })
              ),
              AttemptLoop.again(CheapStream.of(ModelNotice.modelSwitched({ from: chain[n - 1]!, to: chain[n]!, error })))
            )
            : Effect.succeed(AttemptLoop.giveUp(error)),
        "fallback"
      )
    }
  })
}

/** The fallback layer over the `ModelClient` below it. @category Layers */
export const layer = (options: Options): Layer.Layer<ModelClient, never, ModelClient> =>
  decorateClient((client) => make(client, options))

/** Fallback models from a comma-separated list (`--fallback-model a,b`, `KEEL_FALLBACK_MODEL`). @category Configuration */
export const parseModels = (list: string): ReadonlyArray<string> =>
  list.split(",").map((m) => m.trim()).filter((m) => m.length > 0)

/** `KEEL_FALLBACK_MODEL`: comma-separated fallback models (none by default). @category Configuration */
export const modelsConfig: Config.Config<ReadonlyArray<string>> = Config.string("KEEL_FALLBACK_MODEL").pipe(
  Config.map(parseModels),
  Config.withDefault([] as ReadonlyArray<string>)
)
