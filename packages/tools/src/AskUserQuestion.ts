/**
 * `AskUserQuestion`: the model asks the user one to four multiple-choice questions and waits for
 * the answers (Claude Code's tool, same input shape). Asking is the permission ask: the call always
 * asks (`Permissions.USER_INTERACTION_TOOLS`, in every mode), the ask is a pending action like any
 * other, and whoever fronts the runtime answers it by allowing the call with the user's `answers`
 * in its `updatedInput` (question text → the chosen label; several labels comma-separated for a
 * multi-select; free text for "Other"), as Claude Code's hosts do. A call that arrives without
 * answers (nobody could ask) fails, and the model goes on without them.
 *
 * @since 0.1.0
 */
import { Tool } from "@keel/core"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** One choice of a question. @category Schemas */
export const Choice = Schema.Struct({
  label: Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "The option's text the user sees and picks: concise, 1-5 words"
  }),
  description: Schema.String.annotations({ description: "What choosing it means, its trade-offs" })
})

/** One question. @category Schemas */
export const Question = Schema.Struct({
  question: Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "The complete question, clear and specific, ending with a question mark"
  }),
  header: Schema.String.pipe(Schema.maxLength(12)).annotations({
    description: "A very short label for it (at most 12 characters): \"Auth method\", \"Library\""
  }),
  options: Schema.Array(Choice).pipe(Schema.minItems(2), Schema.maxItems(4)).annotations({
    description: "2-4 distinct choices (no \"Other\": the user can always answer in their own words)"
  }),
  multiSelect: Schema.Boolean.annotations({ description: "Whether the user may pick several options" })
})

/** The input: the questions, and (filled in by the user's answer) the answers. @category Schemas */
export const Input = Schema.Struct({
  questions: Schema.Array(Question).pipe(Schema.minItems(1), Schema.maxItems(4)).annotations({
    description: "1-4 questions to ask the user"
  }),
  answers: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })).annotations({
    description: "Leave this out: the user's answers are filled in when they reply"
  })
})

const description = [
  "Asks the user one to four multiple-choice questions and waits for the answers.",
  "",
  "Use it when you need the user's decision or missing information to go on: a choice between approaches, a",
  "preference, a detail only they know. Do not use it for things you can find out yourself (read the code, run a",
  "command), or to ask for permission to run a tool (that is asked for you).",
  "",
  "- Each question has a short header (at most 12 characters) and 2-4 options, each with a label and what it means.",
  "- The user can always answer in their own words instead of picking an option: do not add an \"Other\" option.",
  "- Set multiSelect when several options can apply together."
].join("\n")

/** What the model reads back: each question with its answer. @category Formatting */
export const format = (answers: Readonly<Record<string, string>>): string =>
  `The user answered your questions: ${
    Object.entries(answers).map(([q, a]) => `"${q}"="${a}"`).join(", ")
  }. Go on with these answers in mind.`

/** The AskUserQuestion tool. @category Constructors */
export const tool: Tool.Tool<typeof Input.Type> = Tool.make({
  name: "AskUserQuestion",
  description,
  input: Input,
  isReadOnly: true,
  isConcurrencySafe: false,
  call: (input) =>
    input.answers === undefined || Object.keys(input.answers).length === 0
      ? Tool.fail("The user did not answer (nobody could be asked in this session); go on without their answers.")
      : Effect.succeed(format(input.answers))
})
