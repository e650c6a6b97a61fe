/**
 * The review bundle: every tool call of a session, for a person checking what an agent did,
 * projected from its read model (so only from recorded facts): each call's name, input, output,
 * error flag, the time until its result was recorded, its permission decision (allowed by a rule
 * or the mode, asked and answered how, denied with what message; see `PermissionDecision`), and, for the
 * calls that write files, the diff they made or asked to make (see `FileEdits`); then each file
 * the session changed, with its net diff where every step is recorded.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as PermissionDecision from "./PermissionDecision.js"
import * as FileEdits from "./FileEdits.js"
import * as ReadModel from "./ReadModel.js"

/** The bundle's kind and format. @category Constants */
export const KIND = "keel/review"
/** @category Constants */
export const FORMAT = 1

/** One tool call, reviewed. @category Schemas */
export const Call = Schema.Struct({
  turnId: Schema.String,
  turnIndex: Schema.Int,
  id: Schema.String,
  name: Schema.String,
  input: Schema.Unknown,
  output: Schema.NullOr(Schema.String),
  isError: Schema.Boolean,
  /** See `ReadModel.ToolCallItem.elapsedMs`: not the call's own duration, which is not recorded. */
  elapsedMs: Schema.NullOr(Schema.Number),
  decision: PermissionDecision.Decision,
  /** The file change a `Write`, `Edit` or `MultiEdit` made or asked for. */
  edit: Schema.NullOr(FileEdits.FileEdit)
})

/** The review bundle. @category Schemas */
export const Review = Schema.Struct({
  kind: Schema.Literal(KIND),
  format: Schema.Literal(FORMAT),
  session: ReadModel.Header,
  calls: Schema.Array(Call),
  files: Schema.Array(FileEdits.FileChange),
  totals: Schema.Struct({
    calls: Schema.Int,
    errors: Schema.Int,
    allowed: Schema.Int,
    denied: Schema.Int,
    /** Calls a question was asked about (answered or not). */
    asked: Schema.Int,
    edits: Schema.Int
  })
})

/** @category Models */
export type Review = typeof Review.Type

/** The review bundle of a read model. @category Constructors */
export const make = (model: ReadModel.ReadModel): Review => {
  const calls = ReadModel.toolCalls(model)
  const { edits, files } = FileEdits.track(calls.map((c) => ({ ...c, cwd: model.cwd })))
  const reviewed = calls.map((c): typeof Call.Type => ({
    turnId: c.turn.turnId,
    turnIndex: c.turn.index,
    id: c.id,
    name: c.name,
    input: c.input,
    output: c.output,
    isError: c.isError,
    elapsedMs: c.elapsedMs,
    decision: c.decision,
    edit: edits.get(c.id) ?? null
  }))
  const count = (p: (c: typeof Call.Type) => boolean) => reviewed.filter(p).length
  return {
    kind: KIND,
    format: FORMAT,
    session: ReadModel.headerOf(model),
    calls: reviewed,
    files,
    totals: {
      calls: reviewed.length,
      errors: count((c) => c.isError),
      allowed: count((c) => c.decision.outcome === "allowed"),
      denied: count((c) => c.decision.outcome === "denied"),
      asked: count((c) => c.decision.actionId !== undefined),
      edits: count((c) => c.edit !== null && c.edit.applied)
    }
  }
}
