/**
 * The HTTP path alone: the SDK over Node's `fetch` (undici) vs the SDK over `HttpTransport` (keep-alive
 * `node:http`), on the loopback bench server. Two shapes: R small requests in a row (a tool loop's
 * rounds: request building, sending, a short answer read whole) and one text:N stream read by the
 * kernel's `AnthropicModel` stream (the SSE path). Runs alternate; the table gives the median CPU time
 * of this process per run (user + system, load-independent enough on a shared machine) and the
 * median wall time.
 *
 * Run: npx tsx bench/transport.ts   (KEEL_BENCH_RUNS=15, KEEL_BENCH_ROUNDS=100, KEEL_BENCH_N=200000)
 */
import Anthropic from "@anthropic-ai/sdk"
import { AnthropicModel, HttpTransport, Message } from "@keel/core"
import { Effect, Stream } from "effect"
import * as BenchServer from "./server.js"

const runs = Number(process.env.KEEL_BENCH_RUNS ?? 15)
const rounds = Number(process.env.KEEL_BENCH_ROUNDS ?? 100)
const n = Number(process.env.KEEL_BENCH_N ?? 200000)

const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const measure = async (f: () => Promise<void>) => {
  const cpu = process.cpuUsage()
  const t = performance.now()
  await f()
  const wall = performance.now() - t
  const used = process.cpuUsage(cpu)
  return { cpu: (used.user + used.system) / 1000, wall }
}

const main = async () => {
  const server = await BenchServer.start()
  const clients = {
    undici: new Anthropic({ apiKey: "bench", baseURL: server.url, maxRetries: 0 }),
    transport: new Anthropic({ apiKey: "bench", baseURL: server.url, maxRetries: 0, fetch: HttpTransport.make() })
  }
  const loop = (client: Anthropic) => async () => {
    const model = AnthropicModel.fromClient(client)
    for (let i = 0; i < rounds; i++) {
      await Effect.runPromise(Stream.runDrain(model.stream({ model: "bench-text-4", max_tokens: 1024, messages: [], source: "foreground" })))
    }
  }
  const text = (client: Anthropic) => async () => {
    const model = AnthropicModel.fromClient(client)
    await Effect.runPromise(Stream.runDrain(model.stream({ model: `bench-text-${n}`, max_tokens: 1024, messages: [], source: "foreground" })))
  }
  // A tool loop's growing request: round i sends 2i messages (a tool call and its result per round).
  const history = (length: number) => {
    const messages: Array<Message.Message> = [Message.user("go")]
    for (let i = 0; messages.length < length; i++) {
      const id = `toolu_${String(i).padStart(20, "0")}`
      messages.push(new Message.AssistantMessage({
        content: [
          new Message.TextBlock({ text: "Let me look at the next file in the list.", citations: null }),
          new Message.ToolUseBlock({ id, name: "Bash", input: { command: `cat /tmp/file${i}.txt` } })
        ]
      }))
      messages.push(Message.user([new Message.ToolResultBlock({ tool_use_id: id, content: `${"x".repeat(200)}\nmore output` })]))
    }
    return messages
  }
  const long = history(2000)
  const late = (client: Anthropic) => async () => {
    const model = AnthropicModel.fromClient(client)
    // Rounds 951-1000 of a loop: each request repeats the one before and adds two messages.
    for (let i = 1900; i < 2000; i += 2) {
      await Effect.runPromise(Stream.runDrain(model.stream({
        model: "bench-text-4", max_tokens: 1024, messages: long.slice(0, i + 1), source: "foreground"
      })))
    }
  }
  for (const [name, shape] of [[`${rounds} rounds`, loop], ["rounds 951-1000", late], [`text:${n}`, text]] as const) {
    const results: Record<string, Array<{ cpu: number; wall: number }>> = { undici: [], transport: [] }
    for (let i = 0; i < runs + 2; i++) {
      for (const key of i % 2 === 0 ? ["undici", "transport"] as const : ["transport", "undici"] as const) {
        const r = await measure(shape(clients[key]))
        if (i >= 2) results[key]!.push(r)
      }
    }
    for (const key of ["undici", "transport"] as const) {
      const rs = results[key]!
      console.log(
        `${name.padEnd(14)} ${key.padEnd(10)} cpu ${median(rs.map((r) => r.cpu)).toFixed(1).padStart(7)} ms  wall ${
          median(rs.map((r) => r.wall)).toFixed(1).padStart(7)
        } ms`
      )
    }
  }
  server.stop()
}

main().then(() => process.exit(0), (e) => {
  console.error(e)
  process.exit(1)
})
