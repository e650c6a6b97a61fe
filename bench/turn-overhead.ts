/**
 * The kernel's fixed cost per turn: what `TurnLoop.run` costs around the model's answer, on a model
 * that replays a short, already-parsed answer from memory (no SDK, no socket, no server), so that
 * nearly all of the figure is the loop's own work: reading its services, its spans, the iteration,
 * the fold, the decision, the tool round.
 *
 * Two shapes: `text`, an answer of 10 text deltas (one model call); `tool`, an answer with one
 * tool_use of 10 input chunks, the `Sink` tool run under the allow-all policy, then a text answer
 * (two model calls, one tool round). Each also `+stack`: as a session runs it, the model under the
 * whole resilience stack (idle watchdog, retry, fallback) and the turn with an `interrupt`. For
 * each: µs per turn (median and min over KEEL_BENCH_RUNS samples of 300 turns, after 300
 * warm-ups), the CPU time of the process per turn over the same samples (steadier than wall time
 * on a shared machine), the bytes allocated per turn, from V8's sampling heap profiler over 1,000
 * turns with the objects the collector has already freed counted too, and the fibers started,
 * Effect operations run and fiber suspensions per turn (a `Supervisor` with op supervision on).
 *
 * Run: npm run bench:turn   (KEEL_BENCH_RUNS=9 to change; KEEL_HEAP_PROFILE=/tmp/p writes each shape's
 * heap profile to /tmp/p-SHAPE.heapprofile, summarised by function with bench/scripts/heap-top.mjs)
 */
import { Credentials, IdleWatchdog, Message, ModelClient, Resilience, Retry, SessionState, TurnLoop } from "@keel/core"
import {
  Chunk,
  Deferred,
  Effect,
  Layer,
  ManagedRuntime,
  RuntimeFlags,
  RuntimeFlagsPatch,
  Stream,
  Supervisor
} from "effect"
import * as fs from "node:fs"
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

// One chunk, emitted as it is: `Stream.fromChunks` would pull an iterator over the chunks through
// effects (~280 operations per call), the fake model's cost, not the loop's.
const model = Layer.succeed(ModelClient.ModelClient, {
  stream: (request) => Stream.fromChunk(Chunk.unsafeFromArray(answerFor(request)))
})
/**
 * The runtime of a shape's suffix: `stack` is the whole resilience stack; `w`, `r`, `i` (combined,
 * e.g. `text+wi`) the watchdog, retries and the interrupt alone, to see what each costs.
 */
const runtimes = new Map<string, ManagedRuntime.ManagedRuntime<any, never>>()
const runtimeOf = (suffix: string | undefined) => {
  const key = suffix ?? ""
  const existing = runtimes.get(key)
  if (existing !== undefined) return existing
  const base = Layer.merge(model, Credentials.layerNone)
  const client = key === "" || key === "i"
    ? model
    : key === "stack"
    ? Resilience.layer().pipe(Layer.provide(base))
    : Layer.effect(
      ModelClient.ModelClient,
      Effect.map(ModelClient.ModelClient, (c) => {
        const watched = key.includes("w") ? IdleWatchdog.make(c) : c
        return key.includes("r") ? Retry.make(watched) : watched
      })
    ).pipe(Layer.provide(base))
  const runtime = ManagedRuntime.make(Layer.mergeAll(client, Kernel.turnServices([sink])))
  runtimes.set(key, runtime)
  return runtime
}

/** Counts fibers started, operations run and suspensions, while op supervision is on. */
class Counter extends Supervisor.AbstractSupervisor<void> {
  fibers = 0
  ops = 0
  suspends = 0
  value = Effect.void
  override onStart() {
    this.fibers++
  }
  override onEffect() {
    this.ops++
  }
  override onSuspend() {
    this.suspends++
  }
}

const turnEffect = (shape: string) => {
  const [model, stack] = shape.split("+") as [string, string | undefined]
  return Effect.gen(function*() {
    const state = yield* SessionState.make("bench", [Message.user("go")])
    const interrupt = stack === "stack" || stack?.includes("i") ? yield* Deferred.make<void>() : undefined
    yield* TurnLoop.run({ model, maxTokens: 1024, cwd: process.cwd(), interrupt }).pipe(
      Stream.runDrain,
      Effect.provideService(SessionState.SessionState, state)
    )
    const messages = yield* state.messages
    if (messages.length !== (model === "tool" ? 4 : 2)) throw new Error(`${model}: ${messages.length} messages`)
  })
}
const turn = (shape: string) => runtimeOf(shape.split("+")[1]).runPromise(turnEffect(shape))

/** Fibers, operations and suspensions of one turn (the median of 21). */
const counted = async (shape: string) => {
  const samples: Array<Counter> = []
  for (let i = 0; i < 21; i++) {
    const counter = new Counter()
    await runtimeOf(shape.split("+")[1]).runPromise(
      turnEffect(shape).pipe(
        Effect.supervised(counter),
        Effect.withRuntimeFlagsPatch(RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision))
      )
    )
    samples.push(counter)
  }
  return [median(samples.map((c) => c.fibers)), median(samples.map((c) => c.ops)), median(samples.map((c) => c.suspends))]
}

/** Bytes allocated by `f`, freed or not, as V8's sampling heap profiler estimates them. */
const allocated = async (label: string, f: () => Promise<void>): Promise<number> => {
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
  if (process.env.KEEL_HEAP_PROFILE !== undefined) {
    fs.writeFileSync(`${process.env.KEEL_HEAP_PROFILE}-${label}.heapprofile`, JSON.stringify(profile))
  }
  let total = 0
  const walk = (node: { selfSize: number; children: ReadonlyArray<any> }) => {
    total += node.selfSize
    node.children.forEach(walk)
  }
  walk(profile.head)
  return total
}

function median(xs: Array<number>) {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
}

const shapes = process.argv.length > 2 ? process.argv.slice(2) : ["text", "tool", "text+stack", "tool+stack"]
const rows: Array<Array<string>> = []
for (const shape of shapes) {
  for (let i = 0; i < 300; i++) await turn(shape)
  const samples: Array<number> = []
  const cpu: Array<number> = []
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now()
    const c0 = process.cpuUsage()
    for (let i = 0; i < 300; i++) await turn(shape)
    const c = process.cpuUsage(c0)
    samples.push(((performance.now() - t0) * 1000) / 300)
    cpu.push((c.user + c.system) / 300)
  }
  const bytes = await allocated(shape, async () => {
    for (let i = 0; i < 1000; i++) await turn(shape)
  })
  const [fibers, ops, suspends] = await counted(shape)
  rows.push([
    shape,
    median(samples).toFixed(0),
    Math.min(...samples).toFixed(0),
    median(cpu).toFixed(0),
    (bytes / 1000 / 1024).toFixed(0),
    String(fibers),
    String(ops),
    String(suspends)
  ])
}
for (const runtime of runtimes.values()) await runtime.dispose()

const header = ["shape", "µs per turn", "min", "CPU µs", "KB allocated per turn", "fibers", "ops", "suspends"]
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
console.log(`node ${process.version}, median of ${runs} samples of 300 turns after 300 warm-ups; allocation over 1,000 turns`)
for (const row of [header, ...rows]) console.log(row.map((c, i) => c.padStart(widths[i]!)).join("  "))
