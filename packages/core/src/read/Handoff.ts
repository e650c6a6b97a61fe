/**
 * The handoff bundle: what another agent or a person needs to continue a session, projected from
 * its read model (so only from recorded facts):
 * - the session (id, working directory, model, turns, cost, and the command that resumes it);
 * - the goal and where it stands;
 * - a summary: the last compaction's summary of the earlier conversation, if there was one, and
 *   the last answers with the prompts they answered;
 * - what is open: pending actions (questions waiting for an answer), queued inputs, unfinished
 *   tasks of the task list;
 * - the files touched: read, written, edited.
 *
 * It is a Schema (`keel export --format handoff --json` writes it as JSON) and renders as Markdown
 * ({@link toMarkdown}, what `keel export --format handoff` writes).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as Action from "../action/Action.js"
import * as Goal from "../goal/Goal.js"
import * as ReadModel from "./ReadModel.js"

/** The bundle's kind and format. @category Constants */
export const KIND = "keel/handoff"
/** @category Constants */
export const FORMAT = 1

/** How many of the last answers the summary holds. @category Constants */
export const ANSWERS = 2

/** An answer and the prompt of its turn. @category Schemas */
export const Answer = Schema.Struct({
  turnId: Schema.String,
  index: Schema.Int,
  prompt: Schema.String,
  answer: Schema.String
})

/** A question waiting for an answer. @category Schemas */
export const OpenAction = Schema.Struct({
  id: Schema.String,
  turnId: Schema.NullOr(Schema.String),
  /** What it asks, in one line (`Action.describe`, and a tool call's input). */
  description: Schema.String,
  openedAt: Schema.Number,
  request: Action.Request
})

/** The handoff bundle. @category Schemas */
export const Handoff = Schema.Struct({
  kind: Schema.Literal(KIND),
  format: Schema.Literal(FORMAT),
  session: Schema.Struct({
    ...ReadModel.Header.fields,
    turns: Schema.Int,
    costUsd: Schema.Number,
    /** The command that continues it, run in `cwd`. */
    resume: Schema.String
  }),
  goal: Schema.NullOr(Schema.Struct({ ...Goal.Goal.fields, description: Schema.String })),
  summary: Schema.Struct({
    /** The last compaction's summary of the conversation before it. */
    compaction: Schema.NullOr(Schema.String),
    /** The last answers, oldest first. */
    answers: Schema.Array(Answer)
  }),
  open: Schema.Struct({
    pendingActions: Schema.Array(OpenAction),
    queued: Schema.Array(ReadModel.QueuedInput),
    /** Tasks not completed, from the last `TodoWrite`. */
    todos: Schema.Array(ReadModel.Todo)
  }),
  files: ReadModel.Files
})

/** @category Models */
export type Handoff = typeof Handoff.Type

/** The last compaction summary among the turns' items. */
const lastSummary = (model: ReadModel.ReadModel): string | null => {
  for (let t = model.turns.length - 1; t >= 0; t--) {
    const items = model.turns[t]!.items
    for (let i = items.length - 1; i >= 0; i--) {
      const item = items[i]!
      if (item._tag === "rewrite" && item.summary !== undefined) return item.summary
    }
  }
  return null
}

/** A question in one line: what it asks and, for a tool call, its input (cut at 200 characters). */
const describe = (request: Action.Request): string => {
  if (request.kind !== "permission") return Action.describe(request)
  const input = JSON.stringify(request.input) ?? ""
  return `${Action.describe(request)}: ${input.length > 200 ? `${input.slice(0, 199)}…` : input}`
}

/** The handoff bundle of a read model. @category Constructors */
export const make = (model: ReadModel.ReadModel): Handoff => ({
  kind: KIND,
  format: FORMAT,
  session: {
    ...ReadModel.headerOf(model),
    turns: model.totals.turns,
    costUsd: model.totals.costUsd,
    resume: `keel --resume ${model.sessionId}`
  },
  goal: model.goal === null ? null : { ...model.goal, description: Goal.describe(model.goal) },
  summary: {
    compaction: lastSummary(model),
    answers: model.turns
      .flatMap((t) => (t.answer !== null && t.answer.length > 0 ? [{ turnId: t.turnId, index: t.index, prompt: t.prompt, answer: t.answer }] : []))
      .slice(-ANSWERS)
  },
  open: {
    pendingActions: model.pendingActions.map((a) => ({
      id: a.id,
      turnId: a.turnId,
      description: describe(a.request),
      openedAt: a.openedAt,
      request: a.request
    })),
    queued: model.queue,
    todos: (model.todos ?? []).filter((t) => t.status !== "completed")
  },
  files: model.files
})

const list = (items: ReadonlyArray<string>, none: string): Array<string> => (items.length === 0 ? [none] : items.map((i) => `- ${i}`))

const firstLine = (text: string): string => {
  const line = text.split("\n")[0]!.trim()
  return line.length > 100 ? `${line.slice(0, 99)}…` : line
}

/**
 * The bundle as Markdown, for a person (or a model) to read: the session, the goal, the summary,
 * the open items and the files, each a section.
 *
 * @category Rendering
 */
export const toMarkdown = (handoff: Handoff): string => {
  const { files, goal, open, session, summary } = handoff
  const lines = [
    `# Handoff: session ${session.sessionId}`,
    "",
    `- Working directory: \`${session.cwd}\``,
    `- Model: ${session.model ?? "not recorded"}`,
    `- Turns: ${session.turns} · cost $${session.costUsd.toFixed(4)} · last activity ${session.updatedAt ?? "never"}`,
    `- Continue it with \`${session.resume}\` in that directory`,
    "",
    "## Goal",
    "",
    goal === null ? "No goal is set." : goal.description,
    "",
    "## Summary",
    ""
  ]
  if (summary.compaction !== null) lines.push("### Earlier conversation (compaction summary)", "", summary.compaction, "")
  lines.push("### Last answers", "")
  if (summary.answers.length === 0) lines.push("No answer yet.", "")
  for (const a of summary.answers) lines.push(`#### Turn ${a.index}: ${firstLine(a.prompt)}`, "", a.answer, "")
  lines.push(
    "## Open items",
    "",
    "### Pending actions",
    "",
    ...list(open.pendingActions.map((a) => `${a.id}: ${a.description}`), "None."),
    "",
    "### Queued inputs",
    "",
    ...list(open.queued.map((q) => `(${q.priority}) ${firstLine(q.text)}`), "None."),
    "",
    "### Unfinished tasks",
    "",
    ...list(open.todos.map((t) => `[${t.status === "in_progress" ? "~" : " "}] ${t.content} (${t.status})`), "None."),
    "",
    "## Files touched",
    "",
    "### Edited",
    "",
    ...list(files.edited, "None."),
    "",
    "### Written",
    "",
    ...list(files.written, "None."),
    "",
    "### Read",
    "",
    ...list(files.read, "None."),
    ""
  )
  return lines.join("\n")
}
