/**
 * The whole resilience stack in one layer: the model below it, under the idle watchdog, then
 * retries, then model fallback (`ModelClient = base ∘ watchdog ∘ retry ∘ fallback`). The retry
 * layer refreshes the base layer's `Credentials` after a 401 (`AnthropicModel`'s layers provide
 * them, `TestModel`'s provide `Credentials.none`). Each piece is also a layer of its own
 * (`IdleWatchdog`, `Retry`, `Fallback`) for embedders who want a different stack.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { decorate } from "../internal/decorate.js"
import type { Credentials } from "../model/Credentials.js"
import { ModelClient } from "../model/ModelClient.js"
import * as Fallback from "./Fallback.js"
import * as IdleWatchdog from "./IdleWatchdog.js"
import * as Retry from "./Retry.js"
import * as RetryPolicy from "./RetryPolicy.js"

/** Options of the stack. @category Models */
export interface Options {
  /** Idle timeout of the model stream (90 s). */
  readonly idleTimeout?: Duration.DurationInput | undefined
  readonly retry?: Retry.Options | undefined
  /** Models to fall back to, in order, after repeated overloads (none). */
  readonly fallbackModels?: ReadonlyArray<string> | undefined
}

/** Decorates `client`. @category Constructors */
export const make = (client: ModelClient["Type"], options: Options = {}, credentials?: Credentials["Type"]) =>
  Fallback.make(
    Retry.make(IdleWatchdog.make(client, options.idleTimeout ?? IdleWatchdog.DEFAULT_TIMEOUT), options.retry, credentials),
    { models: options.fallbackModels ?? [] }
  )

/** The stack over the `ModelClient` and `Credentials` below it. @category Layers */
export const layer = (options: Options = {}): Layer.Layer<ModelClient, never, ModelClient | Credentials> =>
  decorate((client, credentials) => make(client, options, credentials))

/**
 * The stack configured from the environment: `KEEL_STREAM_IDLE_TIMEOUT_MS`, `KEEL_MAX_RETRIES`,
 * `KEEL_UNATTENDED_RETRY`, `KEEL_UNATTENDED_BUDGET_MS`, `KEEL_FALLBACK_MODEL`; `fallbackModels`,
 * when given (a command-line flag), replaces the last.
 *
 * @category Layers
 */
export const layerConfig = (
  overrides: { readonly fallbackModels?: ReadonlyArray<string> | undefined } = {}
): Layer.Layer<ModelClient, ConfigError.ConfigError, ModelClient | Credentials> =>
  Layer.unwrapEffect(
    Effect.map(
      Config.all({
        idleTimeout: IdleWatchdog.timeoutConfig,
        policy: RetryPolicy.config,
        fallbackModels: Fallback.modelsConfig
      }),
      (c) =>
        layer({
          idleTimeout: c.idleTimeout,
          retry: { policy: c.policy },
          fallbackModels: overrides.fallbackModels ?? c.fallbackModels
        })
    )
  )
