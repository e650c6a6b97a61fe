/**
 * Settings files in Claude Code's shape and places, Keel's beside them (see `settings/`): user
 * (`~/.claude/settings.json`, `$KEEL_HOME/settings.json`), project (`.claude/settings.json`,
 * `.keel/settings.json`), local (`.claude/settings.local.json`, `.keel/settings.local.json`), then
 * `--settings`, then the flags. Permission rules add up; the more local scalar wins. Keys read:
 * `permissions`, `env`, `model`, `additionalDirectories`, `apiKeyHelper`; others are kept and
 * ignored. A file that is not JSON, or holds an invalid value, is an error naming the file and the
 * key (nothing is half-applied).
 *
 * @since 0.1.0
 */
import type * as Path from "@effect/platform/Path"
import { Permissions } from "@keel/core"
import * as Effect from "effect/Effect"
import * as nodePath from "node:path"
import type { Flags } from "./Flags.js"
import type * as ApiKeyHelper from "./settings/ApiKeyHelper.js"
import { InvalidSettings } from "./settings/InvalidSettings.js"
import * as SettingsLoader from "./settings/SettingsLoader.js"
import * as SettingsSources from "./settings/SettingsSources.js"

/** A settings file's schema and content (the keys Keel reads; others kept). @category Schemas */
export { SettingsFile } from "./settings/SettingsFile.js"

/** Settings that cannot be used. @category Errors */
export { InvalidSettings } from "./settings/InvalidSettings.js"

/** A run's settings: every layer read, and the merge. @category Models */
export type { Loaded } from "./settings/SettingsLoader.js"

/** The settings files of `sources` (all by default), least local first. @category Files */
export const files = (
  homes: SettingsSources.Homes,
  cwd: string,
  path: Path.Path,
  sources?: ReadonlyArray<SettingsSources.Source>
): ReadonlyArray<string> => SettingsSources.locations(homes, cwd, path, sources).map((location) => location.file)

const RULE_HINT = "(write Tool or Tool(content), e.g. Bash(npm test:*) or Read(./src/**))"

/**
 * The permissions config from the settings and the flags: the rules of every layer, then
 * `--allowedTools` / `--disallowedTools`; `--permission-mode` over the most local `defaultMode`;
 * the folders of `additionalDirectories` (top-level and under `permissions`) and `--add-dir`;
 * with `--allow-dangerously-skip-permissions`, bypassPermissions available to switch into later.
 * A rule that does not parse is an error naming where it is.
 *
 * @category Loading
 */
export const permissions = (
  flags: Pick<Flags, "allowedTools" | "disallowedTools" | "permissionMode" | "addDirs"> & {
    readonly allowDangerouslySkipPermissions?: boolean | undefined
  },
  loaded: SettingsLoader.Loaded,
  cwd: string
): Effect.Effect<Permissions.Config, InvalidSettings> =>
  Effect.gen(function*() {
    for (const layer of loaded.layers) {
      const p = layer.settings.permissions
      const bad = Permissions.config({ allow: p?.allow, deny: p?.deny, ask: p?.ask }).invalid
      if (bad.length > 0) {
        return yield* new InvalidSettings({
          message: `${layer.name}: not a permission rule: ${bad.map((r) => JSON.stringify(r)).join(", ")} ${RULE_HINT}`
        })
      }
    }
    const p = loaded.merged.permissions
    const built = Permissions.config({
      mode: flags.permissionMode ?? p?.defaultMode,
      allow: [...(p?.allow ?? []), ...flags.allowedTools],
      deny: [...(p?.deny ?? []), ...flags.disallowedTools],
      ask: p?.ask ?? [],
      additionalDirectories: [
        ...(p?.additionalDirectories ?? []),
        ...(loaded.merged.additionalDirectories ?? []),
        ...flags.addDirs.map((d) => nodePath.resolve(cwd, d))
      ],
      bypassAvailable: flags.allowDangerouslySkipPermissions === true
    })
    if (built.invalid.length > 0) {
      return yield* new InvalidSettings({
        message: `not a permission rule: ${built.invalid.map((r) => JSON.stringify(r)).join(", ")} ${RULE_HINT}`
      })
    }
    return built.config
  })

/**
 * The `apiKeyHelper` of the settings (the most local one), to run in `cwd` with `env`, if any.
 *
 * @category Loading
 */
export const apiKeyHelper = (
  loaded: SettingsLoader.Loaded,
  cwd: string,
  env: Readonly<Record<string, string | undefined>> | undefined
): ApiKeyHelper.Helper | undefined => {
  const command = loaded.merged.apiKeyHelper
  if (command === undefined) return undefined
  const defined = env === undefined
    ? undefined
    : Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined))
  return {
    command,
    cwd,
    source: SettingsLoader.sourceOf(loaded, "apiKeyHelper")?.name ?? "settings",
    ...(defined !== undefined ? { env: defined } : {})
  }
}
