/**
 * The kernel's fixed cost per turn: what `TurnLoop.run` costs around the model's answer, on a model
 * that replays a short, already-parsed answer from memory (no SDK, no socket, no server), so that
 * nearly all of the figure is the loop's own work: reading its services, its spans, the iteration,
 * the fold, the decision, the tool round.
 *
 * Two shapes: `text`, an answer of 10 text deltas (one model call); `tool`, an answer with one
 * tool_use of 10 input chunks, the `Sink` tool run under the allow-all policy, then a text answer
 * (two model calls, one tool round). For each: µs per turn (median and min over KEEL_BENCH_RUNS
 * samples of 300 turns, after 300 warm-ups), and the bytes allocated per turn, from V8's sampling
 * heap profiler over 1,000 turns with the objects the collector has already freed counted too.
 *
 * Run: npm run bench:turn   (KEEL_BENCH_RUNS=9 to change)
 */
import { Message, ModelClient, SessionState, TurnLoop } from "@keel/core"
import { Chunk, Effect, Layer, ManagedRuntime, Stream } from "effect"
import * as inspector from "node:inspector"
import { performance } from "node:perf_hooks"
import * as Kernel from "./kernel.js"
import { sink } from "./kernel.js"
import { eventsFor } from "./scenario.js"

const runs = Number(process.env.KEEL_BENCH_RUNS ?? 9)


/** The answer for a request: a call of `Sink` first (shape `tool`), then text. */
const answerFor = (request: { readonly model: string; readonly messages: ReadonlyArray<Message.Message> }) => {
  const answered = request.messages.some((m) =>
    m.role === "user" && typeof m.content !== "string" && m.content.some((b) => b.type === "tool_result")
  )
  return eventsFor(request.model === "tool" && !answered ? "bench-tool-10" : "bench-text-10")
}

const runtime = ManagedRuntime.make(Layer.mergeAll(
  Layer.succeed(ModelClient.ModelClient, {
    stream: (request) => Stream.fromChunks(Chunk.unsafeFromArray(answerFor(request)))
  }),
  Kernel.turnServices([sink])
))

const turn = (model: string) =>
  runtime.runPromise(Effect.gen(function*() {
    const state = yield* SessionState.make("bench", [Message.user("go")])
    yield* TurnLoop.run({ model, maxTokens: 1024, cwd: process.cwd() }).pipe(
      Stream.runDrain,
      Effect.provideService(SessionState.SessionState, state)
    )
    const messages = yield* state.messages
    if (messages.length !== (model === "tool" ? 4 : 2)) throw new Error(`${model}: ${messages.length} messages`)
  }))

/** Bytes allocated by `f`, freed or not, as V8's sampling heap profiler estimates them. */
const allocated = async (f: () => Promise<void>): Promise<number> => {
  const session = new inspector.Session()
  session.connect()
  const post = (method: string, params?: object) =>
    new Promise<any>((resolve, reject) => session.post(method, params, (error, result) => error ? reject(error) : resolve(result)))
  await post("HeapProfiler.enable")
  await post("HeapProfiler.startSampling", {
    samplingInterval: 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true
  })
  await f()
  const { profile } = await post("HeapProfiler.stopSampling")
  session.disconnect()
  let total = 0
  const walk = (node: { selfSize: number; children: ReadonlyArray<any> }) => {
    total += node.selfSize
    node.children.forEach(walk)
  }
  walk(profile.head)
  return total
}

const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const rows: Array<Array<string>> = []
for (const model of ["text", "tool"]) {
  for (let i = 0; i < 300; i++) await turn(model)
  const samples: Array<number> = []
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now()
    for (let i = 0; i < 300; i++) await turn(model)
    samples.push(((performance.now() - t0) * 1000) / 300)
  }
  const bytes = await allocated(async () => {
    for (let i = 0; i < 1000; i++) await turn(model)
  })
  rows.push([model, median(samples).toFixed(0), Math.min(...samples).toFixed(0), (bytes / 1000 / 1024).toFixed(0)])
}
await runtime.dispose()

const header = ["shape", "µs per turn", "min", "KB allocated per turn"]
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
console.log(`node ${process.version}, median of ${runs} samples of 300 turns after 300 warm-ups; allocation over 1,000 turns`)
for (const row of [header, ...rows]) console.log(row.map((c, i) => c.padStart(widths[i]!)).join("  "))
