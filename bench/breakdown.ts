/**
 * Where the kernel's time goes, stage by stage, on the fake server (not part of `npm run bench`):
 * the raw SDK loop (events only counted); the response body through `SseDecoder` in plain JS; the
 * bare `ModelClient` stream consumed per chunk; the whole turn loop; the turn loop over the whole
 * resilience stack (watchdog, retry, fallback); the turn loop with an `interrupt` (as a session runs it). Median wall and CPU time of
 * each, and their ratio to the raw SDK's. Server in a child process, as in stream-throughput.ts.
 *
 * Run: npx tsx bench/breakdown.ts [model...]   (default bench-text-200000 bench-tool-200000;
 * KEEL_BREAKDOWN=raw,turn to run some stages only, KEEL_BENCH_RUNS=9)
 */
import Anthropic from "@anthropic-ai/sdk"
import {
  AnthropicModel,
  Fallback,
  IdleWatchdog,
  Message,
  type ModelClient,
  Resilience,
  Retry,
  SessionState,
  TurnLoop
} from "@keel/core"
import { Effect, Layer, ManagedRuntime, Redacted, Stream } from "effect"
import { SseDecoder } from "../packages/core/src/model/SseDecoder.js"
import * as Kernel from "./kernel.js"
import * as BenchServer from "./server.js"

const models = process.argv.length > 2 ? process.argv.slice(2) : ["bench-text-200000", "bench-tool-200000"]
const runs = Number(process.env.KEEL_BENCH_RUNS ?? 9)
const only = process.env.KEEL_BREAKDOWN?.split(",")

const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const main = async () => {
  const server = await BenchServer.start()
  const { url } = server
  const client = new Anthropic({ apiKey: "bench", baseURL: url, maxRetries: 0 })
  const modelClient = AnthropicModel.fromClient(client)
  // What a turn runs on besides its model (bench/kernel.ts), without tools.
  const turnServices = Kernel.turnServices()
  const runtime = ManagedRuntime.make(Layer.mergeAll(
    AnthropicModel.layer({ apiKey: Redacted.make("bench"), baseURL: url }),
    turnServices
  ))
  const resilientRuntime = ManagedRuntime.make(Layer.mergeAll(
    Resilience.layer().pipe(Layer.provideMerge(AnthropicModel.layer({ apiKey: Redacted.make("bench"), baseURL: url }))),
    turnServices
  ))
  const body = (model: string) => ({
    model,
    max_tokens: 1024,
    messages: [{ role: "user" as const, content: "go" }],
    stream: true as const
  })
  let chunks = 0
  const raw = (model: string) => async () => {
    let count = 0
    for await (const _ of await client.messages.create(body(model))) count++
    return count
  }
  const decoded = (model: string) => async () => {
    const response = await client.messages.create(body(model)).asResponse()
    const reader = response.body!.getReader()
    const decoder = new SseDecoder()
    let count = 0
    const onEvent = (event: string | null, data: string) => {
      if (event === "ping" || event === null || data === "") return
      JSON.parse(data)
      count++
    }
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      decoder.decode(value, onEvent)
    }
    decoder.end(onEvent)
    return count
  }
  const stream = (model: string, mc: ModelClient.Service = modelClient) => () =>
    Effect.runPromise(
      mc.stream({ model, max_tokens: 1024, messages: [Message.user("go")], source: "foreground" }).pipe(
        Stream.runForEachChunk(() => Effect.sync(() => void chunks++))
      )
    )
  const turn = (model: string, rt: typeof runtime = runtime, interrupt?: Effect.Effect<void>) => () =>
    rt.runPromise(Effect.gen(function*() {
      const state = yield* SessionState.make("bench", [Message.user("go")])
      yield* TurnLoop.run({ model, maxTokens: 1024, maxTurns: 1, cwd: process.cwd(), interrupt }).pipe(
        Stream.runForEachChunk(() => Effect.void),
        Effect.provideService(SessionState.SessionState, state)
      )
    }))
  for (const model of models) {
    const variants = ([
      ["raw", raw(model)],
      ["decoded", decoded(model)],
      ["stream", stream(model)],
      ["watchdog", stream(model, IdleWatchdog.make(modelClient))],
      ["retry", stream(model, Retry.make(modelClient))],
      ["fallback", stream(model, Fallback.make(modelClient, { models: ["other"] }))],
      ["turn", turn(model)],
      ["resilient", turn(model, resilientRuntime)],
      ["interruptible", turn(model, runtime, Effect.never)]
    ] as Array<[string, () => Promise<unknown>]>).filter(([name]) => only === undefined || only.includes(name))
    const wall = new Map<string, Array<number>>(variants.map(([name]) => [name, []]))
    const cpu = new Map<string, Array<number>>(variants.map(([name]) => [name, []]))
    for (let i = 0; i < 3; i++) for (const [, f] of variants) await f()
    chunks = 0
    for (let i = 0; i < runs; i++) {
      for (const [name, f] of variants) {
        const c0 = process.cpuUsage()
        const t0 = performance.now()
        await f()
        wall.get(name)!.push(performance.now() - t0)
        const c = process.cpuUsage(c0)
        cpu.get(name)!.push((c.user + c.system) / 1000)
      }
    }
    const rawWall = median(wall.get("raw") ?? [Number.NaN])
    const rawCpu = median(cpu.get("raw") ?? [Number.NaN])
    console.log(`${model}${chunks > 0 ? ` (${(chunks / runs).toFixed(0)} chunks per stream)` : ""}`)
    for (const [name] of variants) {
      const w = median(wall.get(name)!)
      const c = median(cpu.get(name)!)
      console.log(
        `  ${name.padEnd(13)} wall ${w.toFixed(0).padStart(5)} ms (${(w / rawWall).toFixed(2)})  ` +
          `CPU ${c.toFixed(0).padStart(5)} ms (${(c / rawCpu).toFixed(2)})`
      )
    }
  }
  await runtime.dispose()
  await resilientRuntime.dispose()
  server.stop()
}

void main()
