/**
 * The model port: one request in, a stream of raw Messages API events out, failures typed as
 * `ModelError`. The base layer is `AnthropicModel`; resilience (watchdog, retry, fallback) are layers
 * that decorate this service; `TestModel` scripts it for tests.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Stream from "effect/Stream"
import type { ModelError } from "./ModelError.js"
import type { ModelRequest } from "./ModelRequest.js"
import type { StreamEvent } from "./StreamEvent.js"

/** @category Models */
export interface Service {
  /**
   * Streams the model's answer to `request` as raw events. Interrupting the consumer aborts the
   * underlying request. The stream fails with `StreamTruncated` if it ends before `message_stop`.
   */
  readonly stream: (request: ModelRequest) => Stream.Stream<StreamEvent, ModelError>
}

/** @category Context */
export class ModelClient extends Context.Tag("@keel/core/ModelClient")<ModelClient, Service>() {}

/** Builds the service from its `stream` function. @category Constructors */
export const make = (service: Service): Service => ModelClient.of(service)
