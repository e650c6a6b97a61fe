/**
 * The recording layer: decorates the base `ModelClient` (below the idle watchdog, retries and
 * fallback, so it sees each attempt as it went over the wire) and journals every call: the body
 * sent (stored once per distinct body), when the call went out, each read of its stream with its
 * offset on `Clock`, and how it ended (done, the typed failure, or interrupted by its consumer).
 * What it records is what `ReplayModel` serves back.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { toBody } from "../model/AnthropicModel.js"
import { ModelClient } from "../model/ModelClient.js"
import { isModelError } from "../model/ModelError.js"
import type { ModelRequest } from "../model/ModelRequest.js"
import * as RequestJson from "../model/RequestJson.js"
import * as Thinking from "../model/Thinking.js"
import { sha256 } from "../internal/sha256.js"
import { Journal } from "./Journal.js"
import type * as JournalEntry from "./JournalEntry.js"

/** The request body the base client sends for `request`, as JSON text. @category Conversions */
export const bodyOf = (request: ModelRequest, thinkingModels: Thinking.Table = Thinking.defaultTable): string =>
  RequestJson.stringify(toBody(request, thinkingModels))

/** Options of {@link layer}. @category Models */
export interface Options {
  /** The thinking table the base client resolves thinking with (default `Thinking.defaultTable`). */
  readonly thinkingModels?: Thinking.Table | undefined
}

/**
 * Wraps `client` so that its calls are journaled in `journal`, their times counted from the
 * journal's start.
 *
 * @category Constructors
 */
export const make = (
  client: ModelClient["Type"],
  journal: Journal["Type"],
  options: Options = {}
): ModelClient["Type"] => {
  const startedAt = journal.startedAt
  const stored = new Set<string>()
  let calls = 0
  return ModelClient.of({
    // A journal that keeps nothing (a resumed session that was not recorded) costs nothing per call.
    stream: (request) => !journal.active() ? client.stream(request) :
      Stream.unwrap(Effect.map(Clock.currentTimeMillis, (sentAt) => {
        const body = bodyOf(request, options.thinkingModels)
        const hash = sha256(body)
        if (!stored.has(hash)) {
          stored.add(hash)
          journal.append({ type: "body", hash, body })
        }
        const call = ++calls
        journal.append({ type: "call", call, at: sentAt - startedAt, hash })
        const since = Effect.map(Clock.currentTimeMillis, (now) => now - sentAt)
        // Who ended the call: its own end or failure (seen upstream of anything above), else its consumer.
        let ended = false
        const end = (entry: Omit<typeof JournalEntry.End.Type, "type" | "call" | "at">) =>
          Effect.map(since, (at) => {
            if (ended) return
            ended = true
            journal.append({ type: "end", call, at, ...entry })
          })
        return client.stream(request).pipe(
          Stream.mapChunksEffect((items) =>
            Effect.map(since, (at) => {
              journal.append({ type: "chunk", call, at, items: Chunk.toArray(items) })
              return items
            })
          ),
          Stream.onEnd(end({ outcome: "done" })),
          Stream.tapErrorCause((cause) => {
            const failure = Cause.failureOption(cause).pipe(Option.filter(isModelError), Option.getOrUndefined)
            return end(failure !== undefined ? { outcome: "failed", error: failure } : { outcome: "interrupted" })
          }),
          Stream.ensuring(Effect.suspend(() => end({ outcome: "interrupted" })))
        )
      }))
  })
}

/** The recording layer over the `ModelClient` below it, journaling into the `Journal`. @category Layers */
export const layer = (options: Options = {}): Layer.Layer<ModelClient, never, ModelClient | Journal> =>
  Layer.effect(ModelClient, Effect.zipWith(ModelClient, Journal, (client, journal) => make(client, journal, options)))
