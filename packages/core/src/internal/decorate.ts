/**
 * The shape every model decorator layer shares: a `ModelClient` built from the one below it and
 * that layer's `Credentials` (the base layers provide them; `Credentials.layerNone` for a client
 * that has none to refresh).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Credentials } from "../model/Credentials.js"
import { ModelClient } from "../model/ModelClient.js"

/** A layer that decorates the `ModelClient` below it. @internal */
export const decorate = (
  f: (client: ModelClient["Type"], credentials: Credentials["Type"]) => ModelClient["Type"]
): Layer.Layer<ModelClient, never, ModelClient | Credentials> =>
  Layer.effect(
    ModelClient,
    Effect.gen(function*() {
      return f(yield* ModelClient, yield* Credentials)
    })
  )

/** A layer that decorates the `ModelClient` below it without using its credentials. @internal */
export const decorateClient = (
  f: (client: ModelClient["Type"]) => ModelClient["Type"]
): Layer.Layer<ModelClient, never, ModelClient> => Layer.effect(ModelClient, Effect.map(ModelClient, f))
