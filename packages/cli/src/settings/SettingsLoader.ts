/**
 * Reads the settings of a run: the files of the chosen sources (see `SettingsSources`), then
 * `--settings` (a file's path, or JSON text as the Agent SDK passes it), each validated on its own
 * (`SettingsFile`) and then merged, least local first (`SettingsMerge`). Relative folders
 * (`additionalDirectories`) are resolved against the file's project before merging. A file that
 * does not exist is skipped; one that cannot be read, is not JSON or holds an invalid value stops the
 * run with an `InvalidSettings` naming it and the key.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as os from "node:os"
import { InvalidSettings } from "./InvalidSettings.js"
import * as SettingsFile from "./SettingsFile.js"
import { mergeAll } from "./SettingsMerge.js"
import * as SettingsSources from "./SettingsSources.js"

/** Where one layer of settings came from: a file source, or `--settings` (`flag`). @category Models */
export type Origin = SettingsSources.Source | "flag"

/** One layer of settings, as read. @category Models */
export interface Layer {
  readonly origin: Origin
  /** The file as messages name it (`.claude/settings.json`, an absolute path, or `--settings`). */
  readonly name: string
  /** Its absolute path (`undefined` for `--settings` JSON text). */
  readonly file: string | undefined
  /** Its content, relative folders resolved. */
  readonly settings: SettingsFile.SettingsFile
}

/** A run's settings. @category Models */
export interface Loaded {
  /** Every layer read, least local first. */
  readonly layers: ReadonlyArray<Layer>
  /** All of them merged (the more local value wins; arrays add up). */
  readonly merged: SettingsFile.SettingsFile
}

/** What to read. @category Models */
export interface Options {
  readonly cwd: string
  readonly homes: SettingsSources.Homes
  /** The file sources to read (`--setting-sources`); all when undefined. */
  readonly sources?: ReadonlyArray<SettingsSources.Source> | undefined
  /** `--settings`: a settings file's path, or its JSON text. */
  readonly flag?: string | undefined
}

/** No settings at all. @category Constants */
export const empty: Loaded = { layers: [], merged: {} }

/** `text` parsed and validated as the settings file `name`. */
const parse = (text: string, name: string): Either.Either<SettingsFile.SettingsFile, InvalidSettings> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    return Either.left(
      new InvalidSettings({ message: `${name} is not valid JSON (${(e as Error).message}); fix it or remove it.` })
    )
  }
  return Either.mapLeft(SettingsFile.validate(json), (problems) =>
    new InvalidSettings({
      message: `${name}: ` +
        problems.map((p) => p.path === "" ? `the settings ${p.message}` : `${p.path} ${p.message}`).join("; ")
    }))
}

/** `~/...` and relative folders made absolute (relative ones against `root`). */
const resolveDirectories = (
  settings: SettingsFile.SettingsFile,
  root: string,
  path: Path.Path
): SettingsFile.SettingsFile => {
  const resolve = (dirs: ReadonlyArray<string>) =>
    dirs.map((d) => d === "~" || d.startsWith("~/") ? path.join(os.homedir(), d.slice(1)) : path.resolve(root, d))
  let out = settings
  if (settings.additionalDirectories !== undefined) {
    out = { ...out, additionalDirectories: resolve(settings.additionalDirectories) }
  }
  if (settings.permissions?.additionalDirectories !== undefined) {
    out = { ...out, permissions: { ...settings.permissions, additionalDirectories: resolve(settings.permissions.additionalDirectories) } }
  }
  return out
}

/** Reads `file`: its text, `undefined` when it does not exist, or why it cannot be read. */
const read = (fs: FileSystem.FileSystem, file: string, name: string) =>
  fs.readFileString(file).pipe(
    Effect.catchAll((e) =>
      e._tag === "SystemError" && e.reason === "NotFound"
        ? Effect.succeed(undefined)
        : Effect.fail(new InvalidSettings({ message: `${name} cannot be read: ${e.message}` }))
    )
  )

/** The `--settings` layer: JSON text when it starts with `{`, else a file's path (relative to `cwd`). */
const flagLayer = (flag: string, cwd: string, fs: FileSystem.FileSystem, path: Path.Path) =>
  Effect.gen(function*() {
    if (flag.trim().startsWith("{")) {
      const settings = yield* parse(flag, "--settings")
      return { origin: "flag", name: "--settings", file: undefined, settings: resolveDirectories(settings, cwd, path) } as const
    }
    if (flag.trim() === "") {
      return yield* new InvalidSettings({ message: "--settings needs a settings file's path or its JSON text, got an empty value." })
    }
    const file = path.resolve(cwd, flag)
    const name = `--settings ${flag}`
    const text = yield* read(fs, file, name)
    if (text === undefined) {
      return yield* new InvalidSettings({ message: `${name}: no such file (${file}); give a settings file's path or its JSON text.` })
    }
    const settings = yield* parse(text, name)
    return { origin: "flag", name, file, settings: resolveDirectories(settings, cwd, path) } as const
  })

/**
 * The settings of a run: the chosen sources' files that exist, then `--settings`, merged.
 *
 * @category Loading
 */
export const load = (options: Options): Effect.Effect<Loaded, InvalidSettings, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const layers: Array<Layer> = []
    for (const location of SettingsSources.locations(options.homes, options.cwd, path, options.sources)) {
      const name = SettingsSources.displayName(location.file, options.cwd, path)
      const text = yield* read(fs, location.file, name)
      if (text === undefined) continue
      const settings = yield* parse(text, name)
      layers.push({ origin: location.source, name, file: location.file, settings: resolveDirectories(settings, location.root, path) })
    }
    if (options.flag !== undefined) layers.push(yield* flagLayer(options.flag, options.cwd, fs, path))
    return { layers, merged: mergeAll(layers.map((layer) => layer.settings)) }
  })

/**
 * The layer that set `key` last (the one whose value the merged settings hold), if any.
 *
 * @category Loading
 */
export const sourceOf = (loaded: Loaded, key: string): Layer | undefined =>
  [...loaded.layers].reverse().find((layer) => layer.settings[key] !== undefined)
