/**
 * The `hooks` key of a settings file, in Claude Code's shape:
 * `{"hooks": {"PreToolUse": [{"matcher": "Bash|Edit", "hooks": [{"type": "command", "command": "...", "timeout": 60}]}]}}`,
 * and what it means: command hooks (`CommandHook`) under their matchers, per event. What Keel
 * cannot honour is refused by its key (an event Keel does not fire, a hook type other than
 * `command`, an invalid matcher, a timeout that is not a positive number of seconds), never
 * skipped.
 *
 * @since 0.1.0
 */
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import { CommandHook, HookEvent, HookMatcher, type Hooks } from "@keel/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** One hook of a settings file (its `type` checked when read, so another type is refused by name). @category Schemas */
export const HookSetting = Schema.Struct({
  type: Schema.String,
  command: Schema.optional(Schema.String),
  timeout: Schema.optional(Schema.Number)
})

/** A matcher and its hooks. @category Schemas */
export const MatcherSetting = Schema.Struct({
  matcher: Schema.optional(Schema.String),
  hooks: Schema.Array(HookSetting)
})

/** The `hooks` key: matchers by event name. @category Schemas */
export const HooksSetting = Schema.Record({ key: Schema.String, value: Schema.Array(MatcherSetting) })

/** @category Models */
export type HooksSetting = typeof HooksSetting.Type

/**
 * What is wrong with `setting`, one line per problem, each naming its key (`hooks.PreToolUse[0].matcher`);
 * empty when Keel can honour all of it.
 *
 * @category Checking
 */
export const problems = (setting: HooksSetting): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (const [event, matchers] of Object.entries(setting)) {
    if (!HookEvent.isEvent(event)) {
      out.push(
        HookEvent.CLAUDE_CODE_EVENTS.includes(event)
          ? `hooks.${event}: Keel does not fire ${event} hooks yet (it fires ${HookEvent.EVENTS.join(", ")})`
          : `hooks.${event}: not a hook event (Keel fires ${HookEvent.EVENTS.join(", ")})`
      )
      continue
    }
    matchers.forEach((m, i) => {
      const at = `hooks.${event}[${i}]`
      const bad = HookMatcher.problem(m.matcher)
      if (bad !== undefined) out.push(`${at}.matcher ${JSON.stringify(m.matcher)}: ${bad}`)
      m.hooks.forEach((h, j) => {
        const where = `${at}.hooks[${j}]`
        if (h.type !== "command") out.push(`${where}.type ${JSON.stringify(h.type)}: Keel runs only "command" hooks`)
        else if (h.command === undefined || h.command.trim() === "") out.push(`${where}.command: a command hook needs a command`)
        if (h.timeout !== undefined && !(Number.isFinite(h.timeout) && h.timeout > 0)) {
          out.push(`${where}.timeout ${h.timeout}: not a positive number of seconds`)
        }
      })
    })
  }
  return out
}

/**
 * The hooks config of checked settings (see {@link problems}), their command hooks running with
 * `env` (default the process's).
 *
 * @category Constructors
 */
export const toConfig = (
  settings: ReadonlyArray<HooksSetting>,
  env?: Readonly<Record<string, string>> | undefined
): Effect.Effect<Hooks.Config, never, CommandExecutor.CommandExecutor> =>
  Effect.gen(function*() {
    const config: { [E in HookEvent.HookEvent]?: Array<Hooks.Matcher> } = {}
    for (const setting of settings) {
      for (const [event, matchers] of Object.entries(setting)) {
        if (!HookEvent.isEvent(event)) continue
        for (const m of matchers) {
          const hooks: Array<Hooks.Hook> = []
          for (const h of m.hooks) {
            if (h.command === undefined) continue
            hooks.push({
              name: h.command,
              timeout: h.timeout === undefined ? undefined : Duration.seconds(h.timeout),
              run: yield* CommandHook.make({ command: h.command, env })
            })
          }
          ;(config[event] ??= []).push({ matcher: m.matcher, hooks })
        }
      }
    }
    return config
  })
