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

/** What the pipeline produced. @category Models */
export interface Prepared {
  readonly messages: ReadonlyArray<Message>
  readonly reports: ReadonlyArray<StageReport>
}

/** @category Models */
export interface Service {
  readonly stages: ReadonlyArray<Stage>
  readonly run: (messages: ReadonlyArray<Message>, context: StageContext) => Effect.Effect<Prepared>
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
        for (const stage of stages) {
          const result = yield* stage.run(current, context)
          if (result.messages === current) continue
          const broken = requestViolations(result.messages)
          if (broken.length > 0) {
            reports.push({ stage: stage.name, report: `discarded: its output broke ${broken.join("; ")}` })
            continue
          }
          current = result.messages
          if (result.report !== undefined) reports.push({ stage: stage.name, report: result.report })
        }
        return { messages: current, reports }
      })
  })

/** A pipeline layer of these stages. @category Layers */
export const layer = (stages: ReadonlyArray<Stage>): Layer.Layer<Pipeline> => Layer.succeed(Pipeline, make(stages))

/** The default: no stages (the extension point, shipped empty). @category Layers */
export const layerEmpty: Layer.Layer<Pipeline> = layer([])
