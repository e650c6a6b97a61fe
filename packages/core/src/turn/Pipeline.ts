/**
 * The preprocessing pipeline: an ordered list of `Stage`s run before every model call, provided as
 * a Layer so an embedder can add, drop or reorder stages. After each stage the conversation is
 * checked against the `Invariants`; a stage whose output breaks them is discarded (its input is kept)
 * and the discard is reported, so no stage can make the conversation unsendable.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { Message } from "../message/Message.js"
import { requestViolations } from "./Invariants.js"
import type { Stage, StageContext, StageReport } from "./Stage.js"

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
        for (const stage of stages) {
          const result = yield* stage.run(current, context)
          if (result.halt !== undefined) {
            if (result.report !== undefined) reports.push({ stage: stage.name, report: result.report })
            return { messages: current, reports, halt: result.halt }
          }
          if (result.messages === current) continue
          inherited ??= new Set(requestViolations(messages).map(withoutPosition))
          const known = inherited
          const broken = requestViolations(result.messages).filter((v) => !known.has(withoutPosition(v)))
          if (broken.length > 0) {
            reports.push({ stage: stage.name, report: `discarded: its output broke ${broken.join("; ")}` })
            continue
          }
          current = result.messages
          if (result.report !== undefined) {
            reports.push(
              result.compaction === undefined
                ? { stage: stage.name, report: result.report }
                : { stage: stage.name, report: result.report, compaction: result.compaction }
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

/** A pipeline layer of these stages. @category Layers */
export const layer = (stages: ReadonlyArray<Stage>): Layer.Layer<Pipeline> => Layer.succeed(Pipeline, make(stages))

/** A pipeline layer whose stages are built by an effect (stages that need services). @category Layers */
export const layerEffect = <E, R>(stages: Effect.Effect<ReadonlyArray<Stage>, E, R>): Layer.Layer<Pipeline, E, R> =>
  Layer.effect(Pipeline, Effect.map(stages, make))

/** The default: no stages (the extension point, shipped empty). @category Layers */
export const layerEmpty: Layer.Layer<Pipeline> = layer([])
