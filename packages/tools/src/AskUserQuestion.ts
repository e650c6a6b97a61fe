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
import * as Texts from "./text/Texts.generated.js"

/** Most questions in one call. @category Constants */
export const MAX_QUESTIONS = 4
/** Longest header of a question, in characters. @category Constants */
export const MAX_HEADER_CHARS = 12
/** Fewest options of a question. @category Constants */
export const MIN_OPTIONS = 2
/** Most options of a question. @category Constants */
export const MAX_OPTIONS = 4

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
  header: Schema.String.pipe(Schema.maxLength(MAX_HEADER_CHARS)).annotations({
    description: `A very short label for it (at most ${MAX_HEADER_CHARS} characters): "Auth method", "Library"`
  }),
  options: Schema.Array(Choice).pipe(Schema.minItems(MIN_OPTIONS), Schema.maxItems(MAX_OPTIONS)).annotations({
    description: `${MIN_OPTIONS}-${MAX_OPTIONS} distinct choices (no "Other": the user can always answer in their own words)`
  }),
  multiSelect: Schema.Boolean.annotations({ description: "Whether the user may pick several options" })
})

/** The input: the questions, and (filled in by the user's answer) the answers. @category Schemas */
export const Input = Schema.Struct({
  questions: Schema.Array(Question).pipe(Schema.minItems(1), Schema.maxItems(MAX_QUESTIONS)).annotations({
    description: `1-${MAX_QUESTIONS} questions to ask the user`
  }),
  answers: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })).annotations({
    description: "Leave this out: the user's answers are filled in when they reply"
  })
})

const description = Texts.AskUserQuestion({ MAX_QUESTIONS, MAX_HEADER_CHARS, MIN_OPTIONS, MAX_OPTIONS })

/** What the model reads back: each question with its answer. @category Formatting */
export const format = (answers: Readonly<Record<string, string>>): string =>
  `The user answered your questions: ${
    Object.entries(answers).map(([q, a]) => `"${q}"="${a}"`).join(", ")
  }. Go on with these answers in mind.`

/** The AskUserQuestion tool. @category Constructors */
export const tool: Tool.Tool<typeof Input.Type> = Tool.make({
  name: "AskUserQuestion",
  // It waits for the user, who takes the time they take.
  timeoutMs: Infinity,
  description,
  input: Input,
  isReadOnly: true,
  isConcurrencySafe: false,
  call: (input) =>
    input.answers === undefined || Object.keys(input.answers).length === 0
      ? Tool.fail("The user did not answer (nobody could be asked in this session); go on without their answers.")
      : Effect.succeed(format(input.answers))
})
