/**
 * The shape every resilience layer shares: a `ModelClient` built from the one below it (and that
 * layer's `Credentials`, when it provides them).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Credentials } from "../model/Credentials.js"
import { ModelClient } from "../model/ModelClient.js"

/** A layer that decorates the `ModelClient` below it. @internal */
export const decorate = (
  f: (client: ModelClient["Type"], credentials: Credentials["Type"] | undefined) => ModelClient["Type"]
): Layer.Layer<ModelClient, never, ModelClient> =>
  Layer.effect(
    ModelClient,
    Effect.gen(function*() {
      const client = yield* ModelClient
      const credentials = yield* Effect.serviceOption(Credentials)
      return f(client, Option.getOrUndefined(credentials))
    })
  )
