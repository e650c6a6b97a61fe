/**
 * Changes to the permission policy that come with a permission answer (the Agent SDK's
 * `updatedPermissions`, Claude Code's "always allow" choices): add, replace or remove rules of one
 * behaviour, switch the mode, add or remove directories. Each names where it is kept
 * (`destination`): `session` and `cliArg` last as long as the session; `userSettings`,
 * `projectSettings` and `localSettings` are also written to that settings file by whoever fronts
 * the session (see the CLI). Applied to the running session either way, as Claude Code does.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as path from "node:path"
import * as PermissionRule from "./PermissionRule.js"

/** A permission mode (Claude Code's names). @category Models */
export const Mode = Schema.Literal("default", "acceptEdits", "bypassPermissions", "plan", "dontAsk")

/**
 * The part of a permission policy updates change (the shape of `Permissions.Config`, kept here so
 * the policy depends on its updates, not the other way round).
 *
 * @category Models
 */
export interface Policy {
  readonly mode: typeof Mode.Type
  readonly allow: ReadonlyArray<PermissionRule.Rule>
  readonly deny: ReadonlyArray<PermissionRule.Rule>
  readonly ask: ReadonlyArray<PermissionRule.Rule>
  readonly additionalDirectories?: ReadonlyArray<string> | undefined
}

/** Where an update is kept. @category Models */
export const Destination = Schema.Literal("userSettings", "projectSettings", "localSettings", "session", "cliArg")
/** @category Models */
export type Destination = typeof Destination.Type

/** A rule as the SDK names it: a tool, and what the rule says about its input. @category Models */
export const RuleValue = Schema.Struct({
  toolName: Schema.String,
  ruleContent: Schema.optional(Schema.String)
})

const Behavior = Schema.Literal("allow", "deny", "ask")

/** One update (the SDK's `PermissionUpdate`). @category Models */
export const PermissionUpdate = Schema.Union(
  Schema.Struct({
    type: Schema.Literal("addRules", "replaceRules", "removeRules"),
    rules: Schema.Array(RuleValue),
    behavior: Behavior,
    destination: Destination
  }),
  Schema.Struct({
    type: Schema.Literal("setMode"),
    mode: Mode,
    destination: Destination
  }),
  Schema.Struct({
    type: Schema.Literal("addDirectories", "removeDirectories"),
    directories: Schema.Array(Schema.String),
    destination: Destination
  })
)
/** @category Models */
export type PermissionUpdate = typeof PermissionUpdate.Type

/** The rule text of a rule value (`Bash(npm test:*)`, `Read`). @category Encoding */
export const ruleText = (rule: typeof RuleValue.Type): string =>
  rule.ruleContent === undefined || rule.ruleContent === "" ? rule.toolName : `${rule.toolName}(${rule.ruleContent})`

/** The destinations kept in a settings file. @category Models */
export const persisted = (destination: Destination): destination is "userSettings" | "projectSettings" | "localSettings" =>
  destination === "userSettings" || destination === "projectSettings" || destination === "localSettings"

/** What applying updates gave: the new config, and what could not be applied (and why). @category Models */
export interface Applied<C extends Policy> {
  readonly config: C
  readonly refused: ReadonlyArray<string>
}

const same = (a: PermissionRule.Rule, b: PermissionRule.Rule) => PermissionRule.format(a) === PermissionRule.format(b)

/**
 * `updates` applied to `config`, in order. A rule that does not parse, and a switch into
 * `bypassPermissions` when `bypassAllowed` is false, are refused (listed, not applied): an answer
 * cannot turn the checks off when the session could not be started or switched that way.
 * Directories are resolved against `cwd`.
 *
 * @category Applying
 */
export const apply = <C extends Policy>(
  config: C,
  updates: ReadonlyArray<PermissionUpdate>,
  options: { readonly cwd: string; readonly bypassAllowed: boolean }
): Applied<C> => {
  let current = config
  const refused: Array<string> = []
  for (const update of updates) {
    switch (update.type) {
      case "addRules":
      case "replaceRules":
      case "removeRules": {
        const rules = update.rules.flatMap((value) => {
          const rule = PermissionRule.parse(ruleText(value))
          if (rule === undefined) refused.push(`${JSON.stringify(ruleText(value))} is not a permission rule`)
          return rule === undefined ? [] : [rule]
        })
        const existing = current[update.behavior]
        const next = update.type === "addRules"
          ? [...existing, ...rules.filter((r) => !existing.some((e) => same(e, r)))]
          : update.type === "replaceRules"
          ? rules
          : existing.filter((e) => !rules.some((r) => same(e, r)))
        current = { ...current, [update.behavior]: next }
        break
      }
      case "setMode":
        if (update.mode === "bypassPermissions" && current.mode !== "bypassPermissions" && !options.bypassAllowed) {
          refused.push("switching to bypassPermissions (the session did not start in it)")
          break
        }
        current = { ...current, mode: update.mode }
        break
      case "addDirectories":
      case "removeDirectories": {
        const directories = update.directories.map((d) => path.resolve(options.cwd, d))
        const existing = current.additionalDirectories ?? []
        current = {
          ...current,
          additionalDirectories: update.type === "addDirectories"
            ? [...existing, ...directories.filter((d) => !existing.includes(d))]
            : existing.filter((d) => !directories.includes(d))
        }
        break
      }
    }
  }
  return { config: current, refused }
}

/**
 * What a host may offer to remember when it allows a call ("always allow"), as Claude Code offers
 * it: a file-editing tool suggests `acceptEdits` for the session; a Bash call suggests allowing
 * exactly that command in the project's local settings (the narrowest rule that would have
 * allowed it: never a prefix that would also allow what was not seen); any other tool suggests
 * allowing the tool in the local settings.
 *
 * @category Suggesting
 */
export const suggestionsFor = (toolName: string, input: unknown): Array<PermissionUpdate> => {
  if (toolName === "Edit" || toolName === "Write" || toolName === "MultiEdit" || toolName === "NotebookEdit") {
    return [{ type: "setMode", mode: "acceptEdits", destination: "session" }]
  }
  if (toolName === "Bash") {
    const command = typeof input === "object" && input !== null ? (input as { command?: unknown }).command : undefined
    // A command with a parenthesis cannot be written inside a rule's parentheses: nothing to suggest.
    if (typeof command !== "string" || command.trim() === "" || /[()]/.test(command)) return []
    return [{ type: "addRules", rules: [{ toolName, ruleContent: command.trim() }], behavior: "allow", destination: "localSettings" }]
  }
  if (toolName === "AskUserQuestion") return []
  return [{ type: "addRules", rules: [{ toolName }], behavior: "allow", destination: "localSettings" }]
}
