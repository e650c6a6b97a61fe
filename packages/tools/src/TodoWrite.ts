/**
 * `TodoWrite` (`todos`): the session's task list, with Claude Code's name and input. Each call
 * replaces the whole list (kept in `SessionState.todos`, so a subagent's list is its own). A list
 * with more than one task `in_progress` is refused with a message the model can act on, and the
 * list stays as it was. It changes nothing outside the session, so it needs no permission (see
 * `Permissions.SESSION_STATE_TOOLS`).
 *
 * @since 0.1.0
 */
import { SessionState, Tool } from "@keel/core"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Texts from "./text/Texts.generated.js"

/** One task, as the model sends it. @category Schemas */
export const Todo = Schema.Struct({
  content: Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "What to do, in the imperative: \"Run the tests\""
  }),
  status: Schema.Literal("pending", "in_progress", "completed"),
  activeForm: Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "The task in the present continuous, shown while it is under way: \"Running the tests\""
  })
})

/** The input, as the model sends it. @category Schemas */
export const Input = Schema.Struct({
  todos: Schema.Array(Todo).annotations({ description: "The updated todo list" })
})

/** What a successful call answers (Claude Code's wording). @category Constants */
export const SUCCESS = "Todos have been modified successfully. Ensure that you continue to use the todo list to track " +
  "your progress. Please proceed with the current tasks if applicable"

const description = Texts.TodoWrite

/** Why `todos` is not an acceptable list, if it is not. @category Validation */
export const problem = (todos: ReadonlyArray<SessionState.Todo>): string | undefined => {
  const inProgress = todos.filter((t) => t.status === "in_progress")
  if (inProgress.length > 1) {
    return `${inProgress.length} tasks are in_progress (${inProgress.map((t) => `"${t.content}"`).join(", ")}); ` +
      "work on one task at a time: keep exactly one in_progress and the others pending or completed."
  }
  return undefined
}

/** The TodoWrite tool. @category Constructors */
export const tool: Tool.Tool<typeof Input.Type, SessionState.SessionState> = Tool.make({
  name: "TodoWrite",
  description,
  input: Input,
  // It writes the session's task list, so it is not read-only; two calls in one message run in order.
  isReadOnly: false,
  isConcurrencySafe: false,
  call: (input) =>
    Effect.gen(function*() {
      const state = yield* SessionState.SessionState
      const wrong = problem(input.todos)
      if (wrong !== undefined) return yield* Tool.fail(wrong)
      const oldTodos = yield* Ref.getAndSet(state.todos, input.todos)
      // Claude Code's structured result (`TodoWriteOutput`): the list before and after.
      return Tool.structured(SUCCESS, { oldTodos, newTodos: input.todos })
    })
})
