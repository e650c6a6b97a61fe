/**
 * The loop the retry and fallback layers share: run an attempt's model stream; if it fails, ask
 * `onFailure` what to do; either it gives up (the loop fails) or it returns what to emit before the
 * next attempt (notices, a wait). An attempt that had already emitted part of an answer is retracted
 * first, so the consumer can drop that partial output and no text appears twice.
 *
 * Attempts are produced one after the other (`CheapStream.repeat`): the pipeline does not deepen
 * with the number of attempts, however many an unattended run makes.
 *
 * @internal
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { type Item, isEvent } from "../model/ModelClient.js"
import type { ModelError } from "../model/ModelError.js"
import * as ModelNotice from "../model/ModelNotice.js"
import * as CheapStream from "./cheapStream.js"

const isRetraction = (item: Item): boolean => item.type === "notice" && item._tag === "Retracted"

/** What to do after a failed attempt. @internal */
export type Next =
  | { readonly _tag: "GiveUp"; readonly error: ModelError }
  | { readonly _tag: "Again"; readonly before: Stream.Stream<Item> }

/** @internal */
export const giveUp = (error: ModelError): Next => ({ _tag: "GiveUp", error })
/** @internal */
export const again = (before: Stream.Stream<Item>): Next => ({ _tag: "Again", before })

/**
 * Runs `attempt(1)`, `attempt(2)`, ... until one completes or `onFailure` gives up.
 *
 * @internal
 */
export const run = (
  attempt: (n: number) => Stream.Stream<Item, ModelError>,
  onFailure: (error: ModelError, n: number) => Effect.Effect<Next>,
  reason: ModelNotice.Retracted["reason"]
): Stream.Stream<Item, ModelError> =>
  Stream.suspend(() => {
    let n = 0
    let done = false
    const one = Stream.suspend(() => {
      n++
      const current = n
      let partial = false
      let messageId: string | undefined
      // Partial output: events emitted since the attempt began or since the last retraction from below.
      // The scan reads each chunk from its end, so a chunk costs a few checks, not one per event.
      const watched = Stream.mapChunks(attempt(current), (chunk) => {
        const items = Chunk.toReadonlyArray(chunk)
        let i = items.length - 1
        while (i >= 0 && !isEvent(items[i]!) && !isRetraction(items[i]!)) i--
        if (i < 0) return chunk
        if (isRetraction(items[i]!)) {
          partial = false
          messageId = undefined
          return chunk
        }
        if (!partial) {
          // The first event after the last retraction (or the chunk's start) may name the message.
          let j = i
          while (j > 0 && !isRetraction(items[j - 1]!)) j--
          while (!isEvent(items[j]!)) j++
          const first = items[j]!
          messageId = first.type === "message_start" ? first.message.id : messageId
          partial = true
        }
        return chunk
      })
      // Done unless it fails and `onFailure` asks for another attempt: nothing to run when it succeeds.
      done = true
      return watched.pipe(
        Stream.catchAll((error) =>
          CheapStream.unwrap(Effect.map(onFailure(error, current), (next): Stream.Stream<Item, ModelError> => {
            if (next._tag === "GiveUp") return Stream.fail(next.error)
            done = false
            return partial ? Stream.concat(CheapStream.of(ModelNotice.retracted({ reason, messageId })), next.before) : next.before
          }))
        )
      )
    })
    return CheapStream.repeat(Effect.sync(() => (done ? undefined : one)))
  })
