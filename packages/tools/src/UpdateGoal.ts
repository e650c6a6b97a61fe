/**
 * `update_goal`: the model ends the session's persistent goal (`/goal`, `Goal`): `done` when it
 * is achieved, `blocked` (with the reason) when it cannot go on without the user. The runtime then
 * admits no more continuation turns for it. It changes only the session's state, so it runs
 * without a permission ask (as `TodoWrite` does).
 *
 * @since 0.1.0
 */
import { SessionState, Tool } from "@keel/core"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Texts from "./text/Texts.generated.js"

/** The input. @category Schemas */
export const Input = Schema.Struct({
  status: Schema.Literal("done", "blocked").annotations({
    description: "done: the goal is achieved; blocked: you cannot make progress without the user"
  }),
  reason: Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "For done, a one-line summary of what was achieved; for blocked, what you need from the user"
  })
})

const description = Texts.UpdateGoal

/** The update_goal tool. @category Constructors */
export const tool: Tool.Tool<typeof Input.Type, SessionState.SessionState> = Tool.make({
  name: "update_goal",
  description,
  input: Input,
  isReadOnly: false,
  isConcurrencySafe: false,
  call: (input) =>
    Effect.gen(function*() {
      const state = yield* SessionState.SessionState
      const goal = yield* Ref.get(state.goal)
      if (goal === undefined || goal.status !== "active") {
        return yield* Tool.fail("There is no active goal to update (the user sets one with /goal).")
      }
      yield* Ref.set(state.goal, { ...goal, status: input.status, reason: input.reason })
      return input.status === "done"
        ? `The goal is marked done: ${input.reason}`
        : `The goal is marked blocked: ${input.reason}. The user will be told.`
    })
})
