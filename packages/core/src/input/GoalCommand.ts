/**
 * `/goal`: the session's persistent goal (see `Goal`). `/goal <objective>` sets it (replacing
 * any), `/goal` shows it, `/goal pause` and `/goal resume` stop and restart its continuation
 * turns, `/goal clear` ends it. The command changes the session's state only; the runtime
 * (`SessionRuntime`) admits the continuation turns while the session is idle.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Goal from "../goal/Goal.js"
import { type Command, type CommandContext, CommandResult } from "./Commands.js"

const reply = (text: string, isError = false) => CommandResult.Reply({ text, isError })

/** Answers `/goal args`. @category Commands */
export const run = (args: string, context: CommandContext): Effect.Effect<CommandResult> =>
  Effect.gen(function*() {
    const goal = context.state.goal
    const current = yield* Ref.get(goal)
    switch (args) {
      case "":
        return reply(Goal.describe(current))
      case "clear":
        yield* Ref.set(goal, undefined)
        return reply(current === undefined ? "There was no goal." : `Goal cleared: ${current.objective}`)
      case "pause":
      case "resume": {
        const from = args === "pause" ? "active" : "paused"
        if (current === undefined || current.status !== from) {
          return reply(`There is no ${from} goal to ${args}. ${Goal.describe(current)}`, true)
        }
        const status: Goal.Status = args === "pause" ? "paused" : "active"
        yield* Ref.set(goal, { ...current, status })
        return reply(args === "pause" ? "Goal paused: no continuation turns until /goal resume." : "Goal resumed.")
      }
      default: {
        const next = Goal.make(args, yield* Clock.currentTimeMillis)
        yield* Ref.set(goal, next)
        return reply(
          `Goal set: ${args}\nKeel works on it in continuation turns while the session is idle (at most ` +
            `${next.maxContinuations}); the model ends it with update_goal. /goal pause, /goal clear.`
        )
      }
    }
  })

/** The `/goal` command. @category Commands */
export const command: Command = {
  name: "goal",
  argumentHint: "[objective | pause | resume | clear]",
  description: "Set a goal the session keeps working on across turns, or show, pause, resume or clear it",
  source: "builtin",
  run
}
