/**
 * Settings files in Claude Code's shape, under `.keel/` instead of `.claude/`: the user's
 * `$KEEL_HOME/settings.json` (default `~/.keel`), the project's `.keel/settings.json` and the
 * uncommitted `.keel/settings.local.json`. Permission rules from all of them add up; the most local
 * `defaultMode` wins; flags come last. A file that is not valid JSON, or not shaped like settings,
 * is an error that names the file and the problem (nothing is half-applied).
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { Permissions } from "@keel/core"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type { Flags } from "./Flags.js"
import { HooksSetting } from "./hook/HooksSetting.js"

/** The part of a settings file Keel reads. @category Schemas */
export const SettingsFile = Schema.Struct({
  permissions: Schema.optional(Schema.Struct({
    allow: Schema.optional(Schema.Array(Schema.String)),
    deny: Schema.optional(Schema.Array(Schema.String)),
    ask: Schema.optional(Schema.Array(Schema.String)),
    defaultMode: Schema.optional(Schema.Literal(...Permissions.MODES)),
    additionalDirectories: Schema.optional(Schema.Array(Schema.String))
  })),
  hooks: Schema.optional(HooksSetting)
})

/** A settings file that cannot be used. @category Errors */
export class InvalidSettings extends Schema.TaggedError<InvalidSettings>("@keel/cli/InvalidSettings")("InvalidSettings", {
  message: Schema.String
}) {}

const decode = Schema.decodeUnknownEither(Schema.parseJson(SettingsFile))

/** The settings files, least local first. @category Files */
export const files = (home: string, cwd: string, path: Path.Path): ReadonlyArray<string> => [
  path.join(home, "settings.json"),
  path.join(cwd, ".keel", "settings.json"),
  path.join(cwd, ".keel", "settings.local.json")
]

/**
 * The permissions config from the settings files and the flags.
 *
 * @category Loading
 */
export const permissions = (
  flags: Pick<Flags, "allowedTools" | "disallowedTools" | "permissionMode" | "addDirs">,
  home: string,
  cwd: string
): Effect.Effect<Permissions.Config, InvalidSettings, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const allow: Array<string> = []
    const deny: Array<string> = []
    const ask: Array<string> = []
    const directories: Array<string> = []
    let mode: Permissions.Mode | undefined
    for (const file of files(home, cwd, path)) {
      const text = yield* Effect.option(fs.readFileString(file))
      if (text._tag === "None") continue
      const parsed = decode(text.value)
      if (parsed._tag === "Left") {
        return yield* new InvalidSettings({
          message: `${file} is not valid settings: ${ParseResult.TreeFormatter.formatErrorSync(parsed.left)}`
        })
      }
      const p = parsed.right.permissions
      allow.push(...(p?.allow ?? []))
      deny.push(...(p?.deny ?? []))
      ask.push(...(p?.ask ?? []))
      directories.push(...(p?.additionalDirectories ?? []).map((d) => path.resolve(path.dirname(path.dirname(file)), d)))
      mode = p?.defaultMode ?? mode
    }
    const built = Permissions.config({
      mode: flags.permissionMode ?? mode,
      allow: [...allow, ...flags.allowedTools],
      deny: [...deny, ...flags.disallowedTools],
      ask,
      additionalDirectories: [...directories, ...flags.addDirs.map((d) => path.resolve(cwd, d))]
    })
    if (built.invalid.length > 0) {
      return yield* new InvalidSettings({
        message: `not a permission rule: ${built.invalid.map((r) => JSON.stringify(r)).join(", ")} ` +
          `(write Tool or Tool(content), e.g. Bash(npm test:*) or Read(./src/**))`
      })
    }
    return built.config
  })

/**
 * The `hooks` of each settings file that has some, least local first (the files of {@link files}).
 * A file that is not valid settings is an error naming it.
 *
 * @category Loading
 */
export const hooks = (
  home: string,
  cwd: string
): Effect.Effect<ReadonlyArray<{ readonly file: string; readonly hooks: HooksSetting }>, InvalidSettings, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const found: Array<{ readonly file: string; readonly hooks: HooksSetting }> = []
    for (const file of files(home, cwd, path)) {
      const text = yield* Effect.option(fs.readFileString(file))
      if (text._tag === "None") continue
      const parsed = decode(text.value)
      if (parsed._tag === "Left") {
        return yield* new InvalidSettings({
          message: `${file} is not valid settings: ${ParseResult.TreeFormatter.formatErrorSync(parsed.left)}`
        })
      }
      if (parsed.right.hooks !== undefined) found.push({ file, hooks: parsed.right.hooks })
    }
    return found
  })
