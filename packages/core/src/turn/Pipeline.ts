/**
 * The preprocessing pipeline: an ordered list of `Stage`s run before every model call, provided as
 * a Layer so an embedder can add, drop or reorder stages. After each stage the conversation is
 * checked against the `Invariants`; a stage whose output breaks them is discarded (its input is kept)
 * and the discard is reported, so no stage can make the conversation unsendable. Each stage's run is
 * a `keel.stage` span.
 *
 * Stages are addressed by their ids: `without(Snip.id)`, `insertBefore(Autocompact.id, stage)`,
 * `insertAfter`, `replace`, `append`, applied to a pipeline below with {@link layerEdit}:
 *
 * ```ts
 * const Context = Pipeline.layerEdit(Pipeline.without(Snip.id), Pipeline.insertBefore(Autocompact.id, myStage)).pipe(
 *   Layer.provideMerge(ContextManagement.layer({ directory }))
 * )
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Message } from "../message/Message.js"
import { requestViolations } from "./Invariants.js"
import type { Id, Stage, StageContext, StageReport } from "./Stage.js"

/** A violation without its message index (stages move messages). */
const withoutPosition = (violation: string) => violation.replace(/^message \d+: /, "")

/** What the pipeline produced. @category Models */
export interface Prepared {
  readonly messages: ReadonlyArray<Message>
  readonly reports: ReadonlyArray<StageReport>
  /** Set when a stage ended the turn (see `StageResult.halt`). */
  readonly halt?: string | undefined
}

/** @category Models */
export interface Service {
  readonly stages: ReadonlyArray<Stage>
  readonly run: (messages: ReadonlyArray<Message>, context: StageContext) => Effect.Effect<Prepared>
  /** The statuses of the stages about to do slow work on these messages (see `Stage.announce`). */
  readonly announce: (messages: ReadonlyArray<Message>, context: StageContext) => ReadonlyArray<string>
}

/** @category Context */
export class Pipeline extends Context.Tag("@keel/core/Pipeline")<Pipeline, Service>() {}

/** One stage's run, checked: its result, or a report of why it was discarded. */
const runStage = (
  stage: Stage,
  current: ReadonlyArray<Message>,
  context: StageContext,
  inherited: () => ReadonlySet<string>
) =>
  Effect.map(stage.run(current, context), (result) => {
    if (result.halt !== undefined || result.messages === current) return { result, broken: [] as Array<string> }
    const known = inherited()
    return { result, broken: requestViolations(result.messages).filter((v) => !known.has(withoutPosition(v))) }
  }).pipe(Effect.withSpan("keel.stage", {
    captureStackTrace: false,
    attributes: { "keel.stage.id": stage.id.name, "keel.iteration": context.iteration }
  }))

/** A pipeline of these stages, in order. @category Constructors */
export const make = (stages: ReadonlyArray<Stage>): Service =>
  Pipeline.of({
    stages,
    run: (messages, context) =>
      Effect.gen(function*() {
        let current = messages
        const reports: Array<StageReport> = []
        // What the input already breaks (an imported history, an answer cut inside its thinking) is
        // not held against a stage: only what a stage newly breaks discards its output.
        let inherited: ReadonlySet<string> | undefined
        const known = () => (inherited ??= new Set(requestViolations(messages).map(withoutPosition)))
        for (const stage of stages) {
          const { broken, result } = yield* runStage(stage, current, context, known)
          const name = stage.id.name
          const failed = result.compactionError !== undefined ? { compactionError: result.compactionError } : {}
          if (result.halt !== undefined) {
            if (result.report !== undefined) reports.push({ stage: name, report: result.report, ...failed })
            return { messages: current, reports, halt: result.halt }
          }
          if (result.messages === current) {
            // A compaction that was due and did not happen is reported (its status closes with it).
            if (result.compactionError !== undefined) reports.push({ stage: name, report: result.report ?? "", ...failed })
            continue
          }
          if (broken.length > 0) {
            const report = `discarded: its output broke ${broken.join("; ")}`
            reports.push(result.compaction === undefined ? { stage: name, report } : { stage: name, report, compactionError: report })
            continue
          }
          current = result.messages
          if (result.report !== undefined) {
            reports.push(
              result.compaction === undefined
                ? { stage: name, report: result.report }
                : { stage: name, report: result.report, compaction: result.compaction }
            )
          }
        }
        return { messages: current, reports }
      }),
    announce: (messages, context) => {
      const out: Array<string> = []
      for (const stage of stages) {
        const status = stage.announce?.(messages, context)
        if (status !== undefined) out.push(status)
      }
      return out
    }
  })

/** A change to a pipeline's stages (see {@link layerEdit}). @category Models */
export type Edit = (stages: ReadonlyArray<Stage>) => ReadonlyArray<Stage>

/** Where the stage `id` is; a defect naming the stages there are when it is not in the pipeline. */
const indexOf = (stages: ReadonlyArray<Stage>, id: Id): number => {
  const at = stages.findIndex((s) => s.id === id)
  if (at < 0) {
    throw new Error(
      `The pipeline has no stage ${id.name} (its stages: ${stages.map((s) => s.id.name).join(", ") || "none"})`
    )
  }
  return at
}

/** Without the stage `id` (none when it is not there). @category Editing */
export const without = (id: Id): Edit => (stages) => stages.filter((s) => s.id !== id)

/** With `stage` just before the stage `id` (a defect when there is none). @category Editing */
export const insertBefore = (id: Id, stage: Stage): Edit => (stages) => {
  const at = indexOf(stages, id)
  return [...stages.slice(0, at), stage, ...stages.slice(at)]
}

/** With `stage` just after the stage `id` (a defect when there is none). @category Editing */
export const insertAfter = (id: Id, stage: Stage): Edit => (stages) => {
  const at = indexOf(stages, id) + 1
  return [...stages.slice(0, at), stage, ...stages.slice(at)]
}

/** With `stage` in the place of the stage `id` (a defect when there is none). @category Editing */
export const replace = (id: Id, stage: Stage): Edit => (stages) => {
  const at = indexOf(stages, id)
  return [...stages.slice(0, at), stage, ...stages.slice(at + 1)]
}

/** With `stage` last. @category Editing */
export const append = (stage: Stage): Edit => (stages) => [...stages, stage]

/** With `stage` first. @category Editing */
export const prepend = (stage: Stage): Edit => (stages) => [stage, ...stages]

/** `pipeline` with `edits` applied in order. @category Editing */
export const edit = (pipeline: Service, ...edits: ReadonlyArray<Edit>): Service =>
  make(edits.reduce((stages, f) => f(stages), pipeline.stages))

/** A pipeline layer of these stages. @category Layers */
export const layer = (stages: ReadonlyArray<Stage>): Layer.Layer<Pipeline> => Layer.succeed(Pipeline, make(stages))

/** A pipeline layer whose stages are built by an effect (stages that need services). @category Layers */
export const layerEffect = <E, R>(stages: Effect.Effect<ReadonlyArray<Stage>, E, R>): Layer.Layer<Pipeline, E, R> =>
  Layer.effect(Pipeline, Effect.map(stages, make))

/**
 * The pipeline below with `edits` applied (provide it over the layer that makes the pipeline, with
 * `Layer.provideMerge` to keep that layer's other services, such as the `Compactor`).
 *
 * @category Layers
 */
export const layerEdit = (...edits: ReadonlyArray<Edit>): Layer.Layer<Pipeline, never, Pipeline> =>
  Layer.effect(Pipeline, Effect.map(Pipeline, (pipeline) => edit(pipeline, ...edits)))

/** No stages at all: the conversation goes to the model as it is. @category Layers */
export const layerEmpty: Layer.Layer<Pipeline> = layer([])
