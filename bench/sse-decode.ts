/**
 * The SSE decoder alone (model/SseDecoder.ts), in process: the text:N body as bench/serve.ts frames
 * it, cut into 64 KB reads, decoded 15 times; prints the median CPU time of decoding only, of
 * decoding with each event's `JSON.parse`, and of decoding with `EventJson.parse` (what
 * AnthropicModel does per event: the same result, the common deltas read without `JSON.parse`).
 *
 * Run: npx tsx bench/sse-decode.ts   (KEEL_BENCH_N=200000 to change)
 */
import * as EventJson from "../packages/core/src/model/EventJson.js"
import { SseDecoder } from "../packages/core/src/model/SseDecoder.js"
import { textEvents } from "./scenario.js"

const n = Number(process.env.KEEL_BENCH_N ?? 200000)
const body = Buffer.from(textEvents(n).map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(""))
const reads: Array<Uint8Array> = []
for (let i = 0; i < body.length; i += 65536) reads.push(body.subarray(i, i + 65536))

type Parse = "none" | "JSON.parse" | "EventJson.parse"

const run = (parse: Parse): number => {
  const decoder = new SseDecoder()
  let events = 0
  const onEvent = parse === "JSON.parse"
    ? (_type: string | null, data: string) => {
      JSON.parse(data)
      events++
    }
    : parse === "EventJson.parse"
    ? (_type: string | null, data: string) => {
      EventJson.parse(data)
      events++
    }
    : () => void events++
  const start = process.cpuUsage()
  for (const read of reads) decoder.decode(read, onEvent)
  decoder.end(onEvent)
  const used = process.cpuUsage(start)
  if (events !== n + 5) throw new Error(`decoded ${events} events, expected ${n + 5}`)
  return (used.user + used.system) / 1000
}

for (const parse of ["none", "JSON.parse", "EventJson.parse"] as const) {
  const times = Array.from({ length: 15 }, () => run(parse)).sort((a, b) => a - b)
  console.log(`text:${n} ${parse === "none" ? "decode only" : `decode + ${parse}`}: median ${times[7]!.toFixed(1)} ms CPU`)
}
