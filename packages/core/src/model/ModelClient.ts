/**
 * The model port: one request in, a stream of raw Messages API events out, failures typed as
 * `ModelError`. The base layer is `AnthropicModel`; resilience (idle watchdog, retry, fallback) are
 * layers that decorate this service and add their `ModelNotice`s to the stream; `TestModel` scripts
 * it for tests.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Stream from "effect/Stream"
import type { ModelError } from "./ModelError.js"
import type { ModelNotice } from "./ModelNotice.js"
import type { ModelRequest } from "./ModelRequest.js"
import type { Ping, StreamEvent } from "./StreamEvent.js"

/**
 * One element of a model stream: a raw event, a sign of life on the wire, or a notice from a
 * resilience layer. Tell them apart by `type` (`"ping"`, `"notice"`, or an event type).
 *
 * @category Models
 */
export type Item = StreamEvent | Ping | ModelNotice

/** @category Models */
export interface Service {
  /**
   * Streams the model's answer to `request`. Interrupting the consumer aborts the underlying
   * request. The stream fails with `StreamTruncated` if it ends before `message_stop`.
   */
  readonly stream: (request: ModelRequest) => Stream.Stream<Item, ModelError>
}

/** @category Context */
export class ModelClient extends Context.Tag("@keel/core/ModelClient")<ModelClient, Service>() {}

/** Builds the service from its `stream` function. @category Constructors */
export const make = (service: Service): Service => ModelClient.of(service)

/** Whether an item is a raw event of the answer (not a ping, not a notice). @category Guards */
export const isEvent = (item: Item): item is StreamEvent => item.type !== "ping" && item.type !== "notice"
