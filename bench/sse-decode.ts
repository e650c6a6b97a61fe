/**
 * The SSE decoder alone (model/SseDecoder.ts), in process: the text:N body as bench/serve.ts frames
 * it, cut into 64 KB reads, decoded 15 times; prints the median CPU time of decoding only, and of
 * decoding with each event's `JSON.parse` (what AnthropicModel does per event).
 *
 * Run: npx tsx bench/sse-decode.ts   (KEEL_BENCH_N=200000 to change)
 */
import { SseDecoder } from "../packages/core/src/model/SseDecoder.js"
import { textEvents } from "./scenario.js"

const n = Number(process.env.KEEL_BENCH_N ?? 200000)
const body = Buffer.from(textEvents(n).map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(""))
const reads: Array<Uint8Array> = []
for (let i = 0; i < body.length; i += 65536) reads.push(body.subarray(i, i + 65536))

const run = (parse: boolean): number => {
  const decoder = new SseDecoder()
  let events = 0
  const onEvent = parse
    ? (_type: string | null, data: string) => {
      JSON.parse(data)
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

for (const parse of [false, true]) {
  const times = Array.from({ length: 15 }, () => run(parse)).sort((a, b) => a - b)
  console.log(`text:${n} ${parse ? "decode + JSON.parse" : "decode only"}: median ${times[7]!.toFixed(1)} ms CPU`)
}
