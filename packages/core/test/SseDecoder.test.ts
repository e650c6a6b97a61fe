/**
 * `SseDecoder` frames events exactly as the SDK's own SSE reader does, whatever the line endings
 * and wherever the network splits the bytes: checked against `Stream.rawEvents` of
 * `@anthropic-ai/sdk` on generated bodies.
 */
import { Stream as SdkStream } from "@anthropic-ai/sdk/core/streaming"
import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { SseDecoder } from "../src/model/SseDecoder.js"

type Framed = { readonly event: string | null; readonly data: string }

/** What the SDK's reader makes of `reads`. */
const bySdk = async (reads: ReadonlyArray<Uint8Array>): Promise<Array<Framed>> => {
  const body = new ReadableStream<Uint8Array>({
    start: (controller) => {
      for (const read of reads) controller.enqueue(read)
      controller.close()
    }
  })
  const out: Array<Framed> = []
  for await (const sse of SdkStream.rawEvents(new Response(body))) out.push({ event: sse.event, data: sse.data })
  return out
}

/** What the decoder makes of `reads`. */
const byDecoder = (reads: ReadonlyArray<Uint8Array>): Array<Framed> => {
  const out: Array<Framed> = []
  const decoder = new SseDecoder()
  const onEvent = (event: string | null, data: string) => void out.push({ event, data })
  for (const read of reads) decoder.decode(read, onEvent)
  decoder.end(onEvent)
  return out
}

/** `bytes` cut at the given offsets. */
const split = (bytes: Uint8Array, cuts: ReadonlyArray<number>): Array<Uint8Array> => {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)
  const reads: Array<Uint8Array> = []
  let from = 0
  for (const to of at) {
    reads.push(bytes.subarray(from, to))
    from = to
  }
  reads.push(bytes.subarray(from))
  return reads
}

const line = fc.oneof(
  fc.constantFrom("", "event: content_block_delta", "event: ping", "event:", "event", "data", "data:", ": comment", "id: 7"),
  fc.string({ unit: "grapheme", maxLength: 12 }).map((s) => `data: ${s.replace(/[\r\n]/g, "")}`),
  fc.string({ unit: "grapheme", maxLength: 12 }).map((s) => `data:${s.replace(/[\r\n]/g, "")}`),
  fc.string({ unit: "grapheme", maxLength: 12 }).map((s) => `event: ${s.replace(/[\r\n]/g, "")}`),
  fc.constant("\uFEFFdata: bom")
)
const ending = fc.constantFrom("\n", "\r\n", "\r")

describe("SseDecoder", () => {
  it("reads the Messages API's framing: one event per blank-line-terminated group", () => {
    const text = "event: message_start\ndata: {\"a\":1}\n\n: keep-alive\nevent: ping\ndata: {}\n\ndata: x\ndata: y\n\n"
    assert.deepStrictEqual(byDecoder([new TextEncoder().encode(text)]), [
      { event: "message_start", data: "{\"a\":1}" },
      { event: "ping", data: "{}" },
      { event: null, data: "x\ny" }
    ])
  })

  it("frames like the SDK's reader, for any line endings and any split of the bytes", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(line, ending), { maxLength: 30 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 12 }),
        async (lines, closed, cuts) => {
          const text = lines.map(([l, e]) => l + e).join("") + (closed ? "\n\n" : "")
          const reads = split(new TextEncoder().encode(text), cuts)
          assert.deepStrictEqual(byDecoder(reads), await bySdk(reads))
        }
      ),
      { numRuns: 500 }
    )
  })

  it("frames like the SDK's reader with `\\n` endings only (the API's), split anywhere: the in-place path", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { maxLength: 40 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 16 }),
        async (lines, closed, cuts) => {
          const text = lines.map((l) => `${l}\n`).join("") + (closed ? "\n\n" : "")
          const reads = split(new TextEncoder().encode(text), cuts)
          assert.deepStrictEqual(byDecoder(reads), await bySdk(reads))
        }
      ),
      { numRuns: 500 }
    )
  })
})
