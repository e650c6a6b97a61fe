/**
 * Stream throughput: the kernel's turn loop vs the raw SDK stream, on the loopback fake API.
 *
 * Two shapes, each at N = 20,000 and 200,000: a text block streamed as N `text_delta`s, and one
 * tool_use whose input arrives as N `input_json_delta` chunks. "raw SDK" iterates
 * `client.messages.create({ stream: true })` and builds the final message from the events, as a
 * user of the SDK would (text appended, tool input parsed at its block's end); "kernel" runs `TurnLoop.run`
 * over `AnthropicModel` (raw events emitted, accumulated into the final message, the tool called,
 * the turn closed with maxTurns 1 so no second request). Raw and kernel runs alternate; after 3
 * warm-ups each, 11 timed runs of each. The table gives the median wall time of each, the ratio of
 * medians, the ratio of the fastest runs (the steadiest figure on a noisy machine), and the ratio of
 * this process's median CPU time. The server runs in a child process (bench/serve.ts) so its work
 * is not measured. "kernel alone" runs the same turn loop on a model that replays already-parsed
 * events in chunks of one 64 KB read's worth: the kernel's own cost per event, without SDK or socket.
 *
 * Run: npm run bench   (KEEL_BENCH_N=20000,200000 KEEL_BENCH_RUNS=11 to change)
 */
import Anthropic from "@anthropic-ai/sdk"
import {
  AnthropicModel,
  Compactor,
  Hooks,
  Ids,
  Message,
  ModelClient,
  Permissions,
  Pipeline,
  SessionState,
  ToolRegistry,
  ToolRuntime,
  TurnLoop
} from "@keel/core"
import { Chunk, Effect, Layer, ManagedRuntime, Redacted, Stream } from "effect"
import * as Kernel from "./kernel.js"
import { sink } from "./kernel.js"
import { bodyBytes, eventsFor } from "./scenario.js"
import * as BenchServer from "./server.js"


const sizes = (process.env.KEEL_BENCH_N ?? "20000,200000").split(",").map(Number)
const runs = Number(process.env.KEEL_BENCH_RUNS ?? 11)


const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const main = async () => {
  const server = await BenchServer.start()
  const { pinned: pin, url } = server
  const client = new Anthropic({ apiKey: "bench", baseURL: url, maxRetries: 0 })

  // What a raw SDK user does with the stream: consume every event and build the final message (text
  // appended, tool input appended and parsed once at its block's end), as cheaply as the SDK allows.
  const raw = (model: string) => async (): Promise<number> => {
    const request = { model, max_tokens: 1024, messages: [{ role: "user" as const, content: "go" }], stream: true as const }
    type Block = { type: string; text: string; json: string; input: unknown }
    const content: Array<Block> = []
    let stopReason: string | null = null
    let count = 0
    for await (const event of await client.messages.create(request)) {
      count++
      switch (event.type) {
        case "content_block_start":
          content[event.index] = { type: event.content_block.type, text: "", json: "", input: undefined }
          break
        case "content_block_delta":
          if (event.delta.type === "text_delta") content[event.index]!.text += event.delta.text
          else if (event.delta.type === "input_json_delta") content[event.index]!.json += event.delta.partial_json
          break
        case "content_block_stop": {
          const block = content[event.index]!
          if (block.type === "tool_use") block.input = JSON.parse(block.json || "{}")
          break
        }
        case "message_delta":
          stopReason = event.delta.stop_reason
          break
      }
    }
    if (stopReason === null || content.length !== 1) throw new Error("raw SDK: incomplete message")
    return count
  }

  // What a turn runs on besides its model (bench/kernel.ts), with the Sink tool.
  const turnServices = Kernel.turnServices([sink])
  const kernelLayer = Layer.mergeAll(
    AnthropicModel.layer({ apiKey: Redacted.make("bench"), baseURL: url }),
    turnServices
  )
  // Built once, as an embedder would: the SDK client and tool definitions are made here, not per turn.
  const runtime = ManagedRuntime.make(kernelLayer)
  // The same loop on a model that replays already-parsed events in chunks of one 64 KB read's worth:
  // what the kernel itself costs per event, without the SDK, the socket or the server.
  const memoryLayer = Layer.mergeAll(
    Layer.succeed(ModelClient.ModelClient, {
      stream: (request) => {
        const events = eventsFor(request.model)
        const perRead = Math.max(1, Math.floor((64 * 1024 * events.length) / bodyBytes(request.model)))
        return Stream.fromChunks(...Chunk.toReadonlyArray(Chunk.chunksOf(Chunk.unsafeFromArray(events), perRead)))
      }
    }),
    turnServices
  )
  const memoryRuntime = ManagedRuntime.make(memoryLayer)
  const turn = (
    rt: ManagedRuntime.ManagedRuntime<
      | ModelClient.ModelClient
      | Pipeline.Pipeline
      | Compactor.Compactor
      | ToolRuntime.ToolRuntime
      | ToolRegistry.ToolRegistry
      | Permissions.Permissions
      | Ids.Ids
      | Hooks.Hooks,
      unknown
    >,
    model: string,
    expected: number
  ) =>
  (): Promise<number> =>
    rt.runPromise(Effect.gen(function*() {
      const state = yield* SessionState.make("bench", [Message.user("go")])
      let count = 0
      yield* TurnLoop.run({ model, maxTokens: 1024, maxTurns: 1, cwd: process.cwd() }).pipe(
        Stream.runForEachChunk((chunk) => Effect.sync(() => (count += chunk.length))),
        Effect.provideService(SessionState.SessionState, state)
      )
      const messages = yield* state.messages
      if (messages.length !== expected) throw new Error(`expected ${expected} messages, got ${messages.length}`)
      return count
    }))

  /** Wall-clock ms, and this process's CPU ms (user + system: the client's own work, not the server's). */
  const time = async (f: () => Promise<number>): Promise<{ wall: number; cpu: number }> => {
    const c0 = process.cpuUsage()
    const t0 = performance.now()
    await f()
    const wall = performance.now() - t0
    const c = process.cpuUsage(c0)
    return { wall, cpu: (c.user + c.system) / 1000 }
  }

  const rows: Array<Array<string>> = []
  for (const [shape, key] of [["text deltas", "text"], ["tool input chunks", "tool"]] as const) {
    for (const n of sizes) {
      const model = `bench-${key}-${n}`
      const events = eventsFor(model)
      const sdk = raw(model)
      const run = turn(runtime, model, key === "text" ? 2 : 3)
      const inMemory = turn(memoryRuntime, model, key === "text" ? 2 : 3)
      for (let i = 0; i < 3; i++) {
        await sdk()
        await run()
        await inMemory()
      }
      const rawT: Array<{ wall: number; cpu: number }> = []
      const kernelT: Array<{ wall: number; cpu: number }> = []
      const memoryT: Array<{ wall: number; cpu: number }> = []
      for (let i = 0; i < runs; i++) {
        rawT.push(await time(sdk))
        kernelT.push(await time(run))
        memoryT.push(await time(inMemory))
      }
      const m = median(memoryT.map((t) => t.wall))
      const r = median(rawT.map((t) => t.wall))
      const k = median(kernelT.map((t) => t.wall))
      const best = (ts: Array<{ wall: number }>) => Math.min(...ts.map((t) => t.wall))
      const rc = median(rawT.map((t) => t.cpu))
      const kc = median(kernelT.map((t) => t.cpu))
      rows.push([
        shape,
        n.toLocaleString("en-US"),
        r.toFixed(0),
        k.toFixed(0),
        (k / r).toFixed(2),
        (best(kernelT) / best(rawT)).toFixed(2),
        (kc / rc).toFixed(2),
        ((r * 1000) / events.length).toFixed(2),
        ((k * 1000) / events.length).toFixed(2),
        ((m * 1000) / events.length).toFixed(2)
      ])
    }
  }
  await runtime.dispose()
  await memoryRuntime.dispose()
  server.stop()

  const header = [
    "shape",
    "N",
    "raw SDK ms",
    "kernel ms",
    "kernel/raw",
    "best/best",
    "CPU kernel/raw",
    "raw µs/event",
    "kernel µs/event",
    "kernel alone µs/event"
  ]
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: Array<string>) => cells.map((c, i) => c.padStart(widths[i]!)).join("  ")
  console.log(
    `node ${process.version}, median of ${runs} interleaved runs after 3 warm-ups (best/best: fastest runs), ` +
      `loopback fake API in a child process, 64 KB writes${pin ? ", client on core 0 and server on core 1" : ""}`
  )
  console.log(line(header))
  for (const row of rows) console.log(line(row))
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
