/**
 * One model call of the turn loop: the request's stream, turned into turn events as it arrives
 * (raw events in batches, resilience notices), folded into the answer chunk by chunk, and each
 * `tool_use` block handed to the tool executor the moment it completes, so tools start while the
 * answer still streams. The call is a `keel.model.call` span (model, iteration, attempts, tokens).
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Stream from "effect/Stream"
import type * as Tracer from "effect/Tracer"
import * as Accumulator from "../model/Accumulator.js"
import type { Item, ModelClient } from "../model/ModelClient.js"
import type { ModelError } from "../model/ModelError.js"
import type { ModelRequest } from "../model/ModelRequest.js"
import type { StreamEvent } from "../model/StreamEvent.js"
import { spanned } from "../internal/spanned.js"
import type { Executor } from "../tool/ToolRuntime.js"
import type { TurnEvent } from "./TurnEvent.js"

/** A model call under way. @category Models */
export interface ModelCall {
  /** The call's events as they arrive; it fails with the call's error. */
  readonly events: Stream.Stream<TurnEvent, ModelError>
  /** Once `events` has ended: the answer it streamed, and the model that gave it (a fallback may have switched it). */
  readonly answer: () => { readonly result: Accumulator.Result; readonly model: string }
  /** The model the call is on now (for a call that failed). */
  readonly model: () => string
  /** The `tool_use` ids already handed to the executor. */
  readonly started: ReadonlySet<string>
}

/** Starts a model call: nothing is requested until `events` is pulled. @category Constructors */
export const make = (
  client: ModelClient["Type"],
  request: ModelRequest,
  executor: Executor,
  options: {
    readonly emitStreamEvents: boolean
    readonly iteration: number
    /** The span of the iteration, the model call span's parent. */
    readonly parent: Tracer.AnySpan
  }
): ModelCall => {
  // The fold's working state: one call's answer, linear in the bytes streamed. A retraction (the
  // stream broke and is retried) starts it again, and voids the calls the partial answer started.
  let acc = Accumulator.make()
  let model = request.model
  let attempts = 1
  const started = new Set<string>()
  const emit = options.emitStreamEvents
  const fold = (chunk: Chunk.Chunk<Item>): Chunk.Chunk<TurnEvent> => {
    // Indexed loops over the backing array: a chunk's iterator costs more than the work per event.
    const items = Chunk.toReadonlyArray(chunk)
    let out: Array<TurnEvent> | undefined
    let batch: Array<StreamEvent> | undefined
    let from = 0
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!
      if (item.type === "ping" || item.type === "notice") {
        // The common chunk has neither: then the chunk's array itself is the batch, uncopied.
        batch ??= items.slice(from, i) as Array<StreamEvent>
        if (item.type === "notice") {
          out ??= []
          if (emit && batch.length > 0) out.push({ _tag: "StreamEvents", events: batch })
          batch = []
          if (item._tag === "Retracted") {
            acc = Accumulator.make()
            started.clear()
            executor.discard()
          } else if (item._tag === "ModelSwitched") model = item.to
          else if (item._tag === "Retrying") attempts++
          out.push({ _tag: "Notice", notice: item })
        }
        from = i + 1
        continue
      }
      Accumulator.step(acc, item)
      if (item.type === "content_block_stop") {
        const block = Accumulator.completedToolUse(acc, item.index)
        if (block !== undefined && !started.has(block.id)) {
          started.add(block.id)
          executor.add({ block, malformedInput: acc.malformedToolInput.get(block.id) })
        }
      }
      if (batch !== undefined) batch.push(item)
    }
    const rest = batch ?? (items as ReadonlyArray<StreamEvent>)
    if (out === undefined) {
      return emit && rest.length > 0 ? Chunk.of<TurnEvent>({ _tag: "StreamEvents", events: rest }) : Chunk.empty<TurnEvent>()
    }
    if (emit && rest.length > 0) out.push({ _tag: "StreamEvents", events: rest })
    return Chunk.unsafeFromArray(out)
  }
  // The call's span is given to the layers below on the request: its attempts are its children.
  const events: Stream.Stream<TurnEvent, ModelError> = spanned("keel.model.call", {
    parent: options.parent,
    attributes: { "keel.model": request.model, "keel.iteration": options.iteration, "keel.source": request.source },
    // What the call's span records once the answer is in (or the call failed).
    onEnd: (span) => {
      const usage = acc.usage
      span.attribute("keel.model", model)
      span.attribute("keel.attempts", attempts)
      span.attribute("keel.tokens.input", usage.input_tokens)
      span.attribute("keel.tokens.output", usage.output_tokens)
      span.attribute("keel.tokens.cache_read", usage.cache_read_input_tokens ?? 0)
      span.attribute("keel.tokens.cache_write", usage.cache_creation_input_tokens ?? 0)
    }
  }, (span) => client.stream({ ...request, span }).pipe(Stream.mapChunks(fold)))
  return {
    events,
    answer: () => ({ result: Accumulator.finish(acc), model }),
    model: () => model,
    started
  }
}
