/**
 * A run's settings as a service: what was read (every layer, and the merge), and the default model
 * they make: `ANTHROPIC_MODEL` (the environment, the settings' `env` applied), else the settings'
 * `model`, else Keel's default, as Claude Code orders them (`--model` and a resumed session's model
 * come before all of these). `prepare` reads the settings and applies their `env` before the rest of
 * a run's layers are built.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import { AnthropicModel } from "@keel/core"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { InvalidSettings } from "./InvalidSettings.js"
import * as SettingsEnv from "./SettingsEnv.js"
import * as SettingsLoader from "./SettingsLoader.js"
import * as SettingsSources from "./SettingsSources.js"

/** @category Models */
export interface Service {
  readonly loaded: SettingsLoader.Loaded
  /** The model when neither `--model` nor a resumed session names one. */
  readonly defaultModel: string
}

/** @category Context */
export class RunSettings extends Context.Tag("@keel/cli/RunSettings")<RunSettings, Service>() {}

/**
 * The service for `loaded`, its default model read through the current configuration.
 *
 * @category Layers
 */
export const layer = (loaded: SettingsLoader.Loaded): Layer.Layer<RunSettings> =>
  Layer.effect(
    RunSettings,
    Effect.map(
      Effect.orElseSucceed(Config.option(Config.string("ANTHROPIC_MODEL")), () => Option.none<string>()),
      (model) => ({ loaded, defaultModel: Option.getOrUndefined(model) ?? loaded.merged.model ?? AnthropicModel.DEFAULT_MODEL })
    )
  )

/** What the settings are read for. @category Models */
export interface Options {
  readonly cwd: string
  /** `--settings`. */
  readonly settings?: string | undefined
  /** `--setting-sources`; all when undefined. */
  readonly settingSources?: ReadonlyArray<SettingsSources.Source> | undefined
  /** The run's own environment (`undefined`: `process.env`). */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
}

/** A run's settings read, with the environment the run goes on with. @category Models */
export interface Prepared {
  readonly loaded: SettingsLoader.Loaded
  /** The run's environment with the settings' `env` over it (`undefined`: `process.env`, which now has it). */
  readonly env: Readonly<Record<string, string | undefined>> | undefined
}

/**
 * Reads the run's settings and applies their `env` (see `SettingsEnv.apply`).
 *
 * @category Loading
 */
export const prepare = (
  options: Options
): Effect.Effect<Prepared, InvalidSettings | ConfigError.ConfigError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const homes = yield* SettingsSources.homesConfig
    const loaded = yield* SettingsLoader.load({
      cwd: options.cwd,
      homes,
      sources: options.settingSources,
      flag: options.settings
    })
    return { loaded, env: SettingsEnv.apply(loaded.merged.env, options.env) }
  })
