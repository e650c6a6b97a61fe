/**
 * `/permissions`: the permission rules in force, by behaviour (allow, ask, deny), each with the
 * settings file it came from, and the mode; `/permissions allow|ask|deny <rule>` adds a rule,
 * saved to the project's local settings (`.keel/settings.local.json`; `--project` for
 * `.keel/settings.json`, `--user` for `$KEEL_HOME/settings.json`) and in force from the session's
 * next tool call; `/permissions remove <rule>` takes one out of the session and of Keel's settings
 * files that hold it. A rule that does not parse is an error and nothing is saved; a rule that
 * cannot be saved is not put in force either. The REPL answers it: the settings files are the
 * command line's.
 *
 * @since 0.1.0
 */
import { ContextManagement, PermissionRule, Permissions, type PermissionUpdate } from "@keel/core"
import * as Effect from "effect/Effect"
import * as nodePath from "node:path"
import * as fs from "node:fs"
import type * as Runtime from "../Runtime.js"
import * as SavedPermissions from "../settings/SavedPermissions.js"
import type * as SettingsLoader from "../settings/SettingsLoader.js"
import type { Answer, Context } from "./LocalCommands.js"
import * as SettingsNow from "./SettingsNow.js"
import { shown } from "./ShownPath.js"

/** A rule's behaviour. @category Models */
export type Behavior = "allow" | "ask" | "deny"

const BEHAVIORS: ReadonlyArray<Behavior> = ["allow", "ask", "deny"]

type Destination = "localSettings" | "projectSettings" | "userSettings"

const DESTINATIONS: Readonly<Record<string, Destination>> = {
  "--local": "localSettings",
  "--project": "projectSettings",
  "--user": "userSettings"
}

const USAGE = "/permissions [allow|ask|deny [--local|--project|--user] <rule> | remove <rule>]"

const RULE_SYNTAX = "A rule reads Tool or Tool(content): Bash(npm test:*), Read(./.env), Edit(src/**), WebFetch, mcp__server."

/** A rule's text as the checks format it (`Bash( ls:* )` is `Bash(ls:*)`), or `undefined` when it is not a rule. @category Parsing */
export const normalize = (text: string): string | undefined => {
  const rule = PermissionRule.parse(text)
  return rule === undefined ? undefined : PermissionRule.format(rule)
}

/** Where a rule in force comes from: the most local settings layer listing it, a flag, or the session. @category Origins */
export const originOf = (
  rule: string,
  behavior: Behavior,
  loaded: SettingsLoader.Loaded,
  flags: Pick<Runtime.Options, "allowedTools" | "disallowedTools">
): string => {
  const layer = [...loaded.layers].reverse().find((l) =>
    (l.settings.permissions?.[behavior] ?? []).some((r) => normalize(r) === rule)
  )
  if (layer !== undefined) return layer.name
  if (behavior === "allow" && flags.allowedTools.some((r) => normalize(r) === rule)) return "--allowedTools"
  if (behavior === "deny" && flags.disallowedTools.some((r) => normalize(r) === rule)) return "--disallowedTools"
  return "this session"
}

const list = (context: Context): Answer =>
  Effect.gen(function*() {
    const { style } = context
    const config = (yield* Permissions.Permissions).config
    const loaded = yield* SettingsNow.load(context.options, context.cwd)
    const rows = BEHAVIORS.map((behavior) => ({
      behavior,
      rules: config[behavior].map((r) => {
        const rule = PermissionRule.format(r)
        return { rule, origin: originOf(rule, behavior, loaded, context.options) }
      })
    }))
    const width = Math.max(0, ...rows.flatMap((r) => r.rules.map((x) => x.rule.length)))
    const lines = [
      `${style.bold("Mode:")} ${config.mode}`,
      `${style.bold("Workspace:")} ${[context.cwd, ...(config.additionalDirectories ?? [])].join(", ")} ` +
        style.dim("(file tools use these without asking)")
    ]
    for (const { behavior, rules } of rows) {
      lines.push("", style.bold(behavior[0]!.toUpperCase() + behavior.slice(1)))
      if (rules.length === 0) lines.push(style.dim("  (none)"))
      for (const { origin, rule } of rules) lines.push(`  ${rule.padEnd(width)}  ${style.dim(origin)}`)
    }
    lines.push("", style.dim(`${USAGE}: rules are saved to .keel/settings.local.json unless --project or --user says otherwise.`))
    return lines.join("\n")
  })

const home = Effect.orElseSucceed(ContextManagement.homeConfig, () => nodePath.join(process.env.HOME ?? "", ".keel"))

const add = (behavior: Behavior, words: string, context: Context): Answer =>
  Effect.gen(function*() {
    const { style } = context
    const flag = /^(--\S+)\s+/.exec(words)
    const destination = flag === null ? "localSettings" : DESTINATIONS[flag[1]!]
    if (destination === undefined) {
      return style.red(`Unknown option ${flag![1]}: use --local (the default), --project or --user.`)
    }
    const text = (flag === null ? words : words.slice(flag[0].length)).trim()
    const rule = PermissionRule.parse(text)
    if (text === "" || rule === undefined) {
      return style.red(`Not a permission rule: ${JSON.stringify(text)}. ${RULE_SYNTAX} Nothing was saved.`)
    }
    const permissions = yield* Permissions.Permissions
    const formatted = PermissionRule.format(rule)
    const file = SavedPermissions.fileOf(destination, yield* home, context.cwd)
    const where = shown(file, context.cwd)
    const update: PermissionUpdate.PermissionUpdate = {
      type: "addRules",
      rules: [{ toolName: rule.toolName, ...(rule.content !== undefined ? { ruleContent: rule.content } : {}) }],
      behavior,
      destination
    }
    const saved = yield* Effect.either(SavedPermissions.save(yield* home)([update], context.cwd))
    if (saved._tag === "Left") return style.red(`Could not save the rule: ${saved.left.message}. Nothing was changed.`)
    const already = permissions.config[behavior].some((r) => PermissionRule.format(r) === formatted)
    yield* permissions.update([{ ...update, destination: "session" }], context.cwd)
    return `${already ? "Kept" : "Added"} ${behavior} rule ${style.bold(formatted)} in ${where}` +
      style.dim(already ? " (it was in force already)." : "; it applies from the next tool call.")
  })

/** The behaviours under which `settings.permissions` lists `rule`. */
const listedIn = (settings: unknown, rule: string): ReadonlyArray<Behavior> => {
  const permissions = (settings as { permissions?: Record<string, unknown> } | undefined)?.permissions
  return BEHAVIORS.filter((b) => {
    const rules = permissions?.[b]
    return Array.isArray(rules) && rules.some((r) => typeof r === "string" && normalize(r) === rule)
  })
}

const readJson = (file: string): unknown => {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8"))
  } catch {
    return undefined
  }
}

const remove = (text: string, context: Context): Answer =>
  Effect.gen(function*() {
    const { style } = context
    const rule = normalize(text)
    if (text === "" || rule === undefined) {
      return style.red(`Not a permission rule: ${JSON.stringify(text)}. ${RULE_SYNTAX} Nothing was changed.`)
    }
    const permissions = yield* Permissions.Permissions
    const inForce = BEHAVIORS.filter((b) => permissions.config[b].some((r) => PermissionRule.format(r) === rule))
    const keelHome = yield* home
    const files = (["localSettings", "projectSettings", "userSettings"] as const).map((destination) => {
      const file = SavedPermissions.fileOf(destination, keelHome, context.cwd)
      return { destination, file, behaviors: listedIn(readJson(file), rule) }
    }).filter((f) => f.behaviors.length > 0)
    if (inForce.length === 0 && files.length === 0) {
      return style.red(`No rule ${rule} is in force or in Keel's settings files (see /permissions).`)
    }
    const parsed = PermissionRule.parse(rule)!
    const value = { toolName: parsed.toolName, ...(parsed.content !== undefined ? { ruleContent: parsed.content } : {}) }
    const updates = files.flatMap((f) =>
      f.behaviors.map((behavior): PermissionUpdate.PermissionUpdate => ({
        type: "removeRules",
        rules: [value],
        behavior,
        destination: f.destination
      }))
    )
    const saved = yield* Effect.either(SavedPermissions.save(keelHome)(updates, context.cwd))
    if (saved._tag === "Left") return style.red(`Could not remove the rule: ${saved.left.message}. Nothing was changed.`)
    yield* permissions.update(
      inForce.map((behavior) => ({ type: "removeRules", rules: [value], behavior, destination: "session" })),
      context.cwd
    )
    // Files Keel does not write (`.claude/`, `--settings`) may list it too: then it comes back next session.
    const loaded = yield* SettingsNow.load(context.options, context.cwd)
    const elsewhere = loaded.layers.filter((l) => BEHAVIORS.some((b) => (l.settings.permissions?.[b] ?? []).some((r) => normalize(r) === rule)))
    const from = files.length > 0 ? ` from ${files.map((f) => shown(f.file, context.cwd)).join(", ")}` : " for this session"
    return `Removed ${style.bold(rule)}${from}.` +
      (elsewhere.length > 0
        ? style.yellow(` It is also in ${elsewhere.map((l) => l.name).join(", ")}, which Keel does not edit: remove it there too, or it applies again next session.`)
        : "")
  })

/** Answers `/permissions args`. @category Running */
export const run = (args: string, context: Context): Answer => {
  if (args === "") return list(context)
  const match = /^(\S+)\s*([\s\S]*)$/.exec(args)!
  const verb = match[1]!.toLowerCase()
  const rest = match[2]!.trim()
  if (verb === "allow" || verb === "ask" || verb === "deny") return add(verb, rest, context)
  if (verb === "remove" || verb === "rm") return remove(rest, context)
  return Effect.succeed(context.style.red(`Usage: ${USAGE}`))
}
