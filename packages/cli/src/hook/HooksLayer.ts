/**
 * The hooks of a run: the settings files' command hooks (least local first), then the embedder's
 * callbacks (`query()`'s `hooks`), then those a stream-json host registers in `initialize`. A
 * settings file whose hooks Keel cannot honour stops the run (exit 2), naming the file and each
 * key. Inputs carry the session's transcript path; every run can be observed
 * (`--include-hook-events`).
 *
 * @since 0.1.0
 */
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import { Hooks, Ids, SessionStore } from "@keel/core"
import type { ConfigError } from "effect/ConfigError"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Settings from "../Settings.js"
import type * as HostHooks from "./HostHooks.js"
import * as HooksSetting from "./HooksSetting.js"

/** Options of {@link layer}. @category Models */
export interface Options {
  readonly cwd: string
  /** The run's settings (their files' `hooks`). */
  readonly loaded: Settings.Loaded
  /** The environment of command hooks (default the process's). */
  readonly env?: Readonly<Record<string, string>> | undefined
  /** The embedder's callback hooks (`query()`'s `hooks`). */
  readonly callbacks?: Hooks.Config | undefined
  /** The stream-json host's callback hooks, registered by its `initialize`. */
  readonly host?: HostHooks.Bridge | undefined
  /** Told of every hook run, as it starts and ends. */
  readonly observe?: ((event: Hooks.Lifecycle) => void) | undefined
}

/**
 * The settings files' hooks as a config; a file with hooks Keel cannot honour fails with
 * `InvalidSettings` naming it and each key.
 *
 * @category Loading
 */
export const fromSettings = (
  loaded: Settings.Loaded,
  env?: Readonly<Record<string, string>> | undefined
): Effect.Effect<Hooks.Config, Settings.InvalidSettings, CommandExecutor.CommandExecutor> =>
  Effect.gen(function*() {
    // Each file's hooks run (they are not merged): least local first.
    const found = loaded.layers.flatMap((layer) =>
      layer.settings.hooks === undefined ? [] : [{ file: layer.name, hooks: layer.settings.hooks }]
    )
    for (const { file, hooks } of found) {
      const problems = HooksSetting.problems(hooks)
      if (problems.length > 0) {
        return yield* new Settings.InvalidSettings({
          message: `${file} has hooks Keel cannot run: ${problems.join("; ")}`
        })
      }
    }
    return yield* HooksSetting.toConfig(found.map((f) => f.hooks), env)
  })

/** The hooks service of a run. @category Layers */
export const layer = (
  options: Options
): Layer.Layer<
  Hooks.Hooks,
  Settings.InvalidSettings | ConfigError,
  FileSystem.FileSystem | Path.Path | CommandExecutor.CommandExecutor | SessionStore.SessionStore | Ids.Ids
> =>
  Layer.effect(
    Hooks.Hooks,
    Effect.gen(function*() {
      const settings = yield* fromSettings(options.loaded, options.env)
      const store = yield* SessionStore.SessionStore
      const ids = yield* Ids.Ids
      const observe = options.observe
      const make = (config: Hooks.Config) =>
        Hooks.make(config, {
          transcriptPath: store.fileOf,
          uuid: ids.uuid,
          ...(observe === undefined ? {} : { observe: (event: Hooks.Lifecycle) => Effect.sync(() => observe(event)) })
        })
      const fixed = Hooks.concat(settings, options.callbacks ?? {})
      const host = options.host
      if (host === undefined) return make(fixed)
      // The host registers its hooks after the run starts: the service follows its registration.
      let seen: Hooks.Config | undefined
      let current = make(fixed)
      return Hooks.delegating(() => {
        const registered = host.config()
        if (registered !== seen) {
          seen = registered
          current = make(Hooks.concat(fixed, registered))
        }
        return current
      })
    })
  )
