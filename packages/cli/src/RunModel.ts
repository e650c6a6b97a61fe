/**
 * The model a `keel` run talks to: the Anthropic API with its resilience layers and prompt caching,
 * credentials from the environment or the settings' `apiKeyHelper`, and `KEEL_MODELS_FILE`'s rows.
 *
 * @since 0.1.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import {
  AnthropicModel,
  Credentials,
  type Journal,
  type JournalEntry,
  ModelCapabilities,
  type ModelClient,
  PromptCaching,
  RecordingModel,
  ReplayModel,
  Resilience
} from "@keel/core"
import type { ConfigError } from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ApiKeyHelper from "./settings/ApiKeyHelper.js"

/** Why the run's model cannot be built. @category Errors */
export type ModelLayerError =
  | AnthropicModel.MissingCredentials
  | ApiKeyHelper.ApiKeyHelperFailed
  | ConfigError
  | ModelCapabilities.InvalidModels

/**
 * The model for a run: the Anthropic API from the environment, under the idle watchdog
 * (`KEEL_STREAM_IDLE_TIMEOUT_MS`), retries (`KEEL_MAX_RETRIES`, `KEEL_UNATTENDED_RETRY`) and, with
 * fallback models (`--fallback-model`, else `KEEL_FALLBACK_MODEL`), model fallback; its requests
 * carry prompt-cache breakpoints unless `DISABLE_PROMPT_CACHING` is set. With the settings'
 * `apiKeyHelper` (and no key in the environment), the key is the helper's, re-run after a 401.
 * With `record`, each call is journaled (`RecordingModel`) as it went over the wire.
 *
 * @category Layers
 */
export const modelLayer = (
  fallbackModels: ReadonlyArray<string> | undefined,
  apiKeyHelper?: ApiKeyHelper.Helper | undefined,
  options: { readonly record?: boolean | undefined } = {}
): Layer.Layer<ModelClient.ModelClient, ModelLayerError, Journal.Journal> =>
  PromptCaching.layerConfig.pipe(
    Layer.provide(Resilience.layerConfig({ fallbackModels })),
    // Recording: each call as it went over the wire, below the watchdog, retries and fallback.
    Layer.provide(options.record === true ? RecordingModel.layer().pipe(Layer.provideMerge(base(apiKeyHelper))) : base(apiKeyHelper))
  )

/**
 * The model of a replay (`keel replay`): the recorded calls served back (`ReplayModel`), under the
 * same watchdog, retries, fallback and prompt caching as the run they were recorded in.
 *
 * @category Layers
 */
export const replayLayer = (
  fallbackModels: ReadonlyArray<string> | undefined,
  entries: ReadonlyArray<JournalEntry.Entry>
): Layer.Layer<ModelClient.ModelClient | ReplayModel.Replay, ConfigError> =>
  PromptCaching.layerConfig.pipe(
    Layer.provide(Resilience.layerConfig({ fallbackModels })),
    Layer.provideMerge(ReplayModel.layer(entries))
  )

/** The Anthropic API client, its credentials from the environment or the settings' `apiKeyHelper`. */
const base = (apiKeyHelper: ApiKeyHelper.Helper | undefined) =>
  (apiKeyHelper === undefined
    // The capability table of KEEL_MODELS_FILE gives each model its betas and thinking overrides.
    ? Layer.unwrapEffect(Effect.map(AnthropicModel.optionsWithModels, AnthropicModel.layerWithCredentials)).pipe(
      Layer.provideMerge(Credentials.layerConfig)
    )
    : ApiKeyHelper.modelLayer(apiKeyHelper)).pipe(Layer.provide(NodeContext.layer))
