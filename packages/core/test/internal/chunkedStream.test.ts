/**
 * `ChunkedStream`: what the producer pushes arrives in order, in chunks that end where it flushes;
 * a full buffer makes the producer wait (`ready`) until the consumer has taken it, also when the
 * consumer was already waiting when the buffer filled.
 */
import { assert, describe, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import * as ChunkedStream from "../../src/internal/chunkedStream.js"

describe("ChunkedStream", () => {
  it.effect("hands over each flushed batch as one chunk", () =>
    Effect.gen(function*() {
      const stream = ChunkedStream.make<number, never>((sink) => {
        void (async () => {
          for (const batch of [[1, 2, 3], [4], [5, 6]]) {
            await new Promise((resolve) => setTimeout(resolve, 1))
            for (const n of batch) sink.push(n)
            sink.flush()
          }
          sink.end()
        })()
        return () => {}
      })
      const chunks = yield* Stream.runCollect(Stream.mapChunks(stream, (c) => Chunk.of(Chunk.toReadonlyArray(c))))
      assert.deepStrictEqual(Chunk.toReadonlyArray(chunks), [[1, 2, 3], [4], [5, 6]])
    }))

  it.effect("a producer that fills the buffer without flushing waits until the waiting consumer has taken it", () =>
    Effect.gen(function*() {
      const waits: Array<boolean> = []
      const stream = ChunkedStream.make<number, never>((sink) => {
        void (async () => {
          // Let the consumer start waiting first: then `ready` itself wakes it.
          await new Promise((resolve) => setTimeout(resolve, 1))
          for (let n = 0; n < 12; n++) {
            sink.push(n)
            const full = sink.ready()
            waits.push(full !== undefined)
            if (full !== undefined) await full
          }
          sink.end()
        })()
        return () => {}
      }, 4)
      const items = yield* Stream.runCollect(stream)
      assert.deepStrictEqual(Chunk.toReadonlyArray(items), Array.from({ length: 12 }, (_, n) => n))
      assert.deepStrictEqual(waits.filter(Boolean).length, 3)
    }))
})
