/**
 * Writes the permission updates a host's answer keeps in a settings file ("always allow" in a
 * project): `userSettings` to `$KEEL_HOME/settings.json`, `projectSettings` to
 * `.keel/settings.json`, `localSettings` to `.keel/settings.local.json` — Keel's own files, which
 * win over `.claude/`'s. The file's other keys are kept; a file that is not a JSON object is not
 * overwritten (the update fails, naming it). Each write goes to a temporary file renamed over the
 * old one, so a crash leaves the old or the new file, never half of one.
 *
 * @since 0.1.0
 */
import { PermissionUpdate } from "@keel/core"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as fs from "node:fs/promises"
import * as path from "node:path"

/** A settings file the updates could not be written to. @category Errors */
export class SaveFailed extends Schema.TaggedError<SaveFailed>("@keel/cli/SaveFailed")("SaveFailed", {
  file: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `${this.file}: ${this.reason}`
  }
}

/** The settings file of a destination kept in one. @category Files */
export const fileOf = (
  destination: "userSettings" | "projectSettings" | "localSettings",
  keelHome: string,
  cwd: string
): string =>
  destination === "userSettings"
    ? path.join(keelHome, "settings.json")
    : path.join(cwd, ".keel", destination === "projectSettings" ? "settings.json" : "settings.local.json")

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const strings = (u: unknown): Array<string> => (Array.isArray(u) ? u.filter((s): s is string => typeof s === "string") : [])

/** `settings` with `updates` applied to its `permissions` (other keys kept as they are). @category Applying */
export const applyTo = (
  settings: Record<string, unknown>,
  updates: ReadonlyArray<PermissionUpdate.PermissionUpdate>
): Record<string, unknown> => {
  const permissions: Record<string, unknown> = isRecord(settings.permissions) ? { ...settings.permissions } : {}
  for (const update of updates) {
    switch (update.type) {
      case "addRules":
      case "replaceRules":
      case "removeRules": {
        const rules = update.rules.map(PermissionUpdate.ruleText)
        const existing = strings(permissions[update.behavior])
        permissions[update.behavior] = update.type === "addRules"
          ? [...existing, ...rules.filter((r) => !existing.includes(r))]
          : update.type === "replaceRules"
          ? rules
          : existing.filter((r) => !rules.includes(r))
        break
      }
      case "setMode":
        permissions.defaultMode = update.mode
        break
      case "addDirectories":
      case "removeDirectories": {
        const existing = strings(permissions.additionalDirectories)
        permissions.additionalDirectories = update.type === "addDirectories"
          ? [...existing, ...update.directories.filter((d) => !existing.includes(d))]
          : existing.filter((d) => !update.directories.includes(d))
        break
      }
    }
  }
  return { ...settings, permissions }
}

/**
 * Writes `updates` to their settings files (those of other destinations are skipped).
 *
 * @category Writing
 */
export const save = (keelHome: string) =>
(
  updates: ReadonlyArray<PermissionUpdate.PermissionUpdate>,
  cwd: string
): Effect.Effect<void, SaveFailed> =>
  Effect.forEach(
    ["userSettings", "projectSettings", "localSettings"] as const,
    (destination) => {
      const mine = updates.filter((u) => u.destination === destination)
      if (mine.length === 0) return Effect.void
      const file = fileOf(destination, keelHome, cwd)
      return Effect.tryPromise({
        try: async () => {
          let settings: Record<string, unknown> = {}
          const text = await fs.readFile(file, "utf8").catch((e: NodeJS.ErrnoException) => {
            if (e.code === "ENOENT") return undefined
            throw e
          })
          if (text !== undefined && text.trim() !== "") {
            const parsed: unknown = JSON.parse(text)
            if (!isRecord(parsed)) throw new Error("is not a JSON object; not overwritten")
            settings = parsed
          }
          await fs.mkdir(path.dirname(file), { recursive: true })
          const temporary = `${file}.${process.pid}.tmp`
          await fs.writeFile(temporary, JSON.stringify(applyTo(settings, mine), null, 2) + "\n")
          await fs.rename(temporary, file)
        },
        catch: (e) => new SaveFailed({ file, reason: e instanceof Error ? e.message : String(e) })
      })
    },
    { discard: true }
  )
