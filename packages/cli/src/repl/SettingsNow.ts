/**
 * The run's settings files as they are now, for the REPL's commands that show where a value comes
 * from (`/permissions`, `/status`): read again, so a rule `/permissions` saved during the session
 * is named with its file. When they cannot be read now (a file was broken since), the settings the
 * run started with.
 *
 * @since 0.1.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import type * as Runtime from "../Runtime.js"
import * as RunSettings from "../settings/RunSettings.js"
import * as SettingsLoader from "../settings/SettingsLoader.js"
import * as SettingsSources from "../settings/SettingsSources.js"

/** The settings of the run in `cwd`, read now. @category Loading */
export const load = (
  options: Pick<Runtime.Options, "settings" | "settingSources">,
  cwd: string
): Effect.Effect<SettingsLoader.Loaded, never, RunSettings.RunSettings> =>
  Effect.gen(function*() {
    const homes = yield* SettingsSources.homesConfig
    return yield* SettingsLoader.load({ cwd, homes, sources: options.settingSources, flag: options.settings })
  }).pipe(
    Effect.provide(NodeContext.layer),
    Effect.catchAll(() => Effect.map(RunSettings.RunSettings, (settings) => settings.loaded))
  )
