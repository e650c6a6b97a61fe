/**
 * Profiles one shape of the throughput bench: runs the kernel turn (or the raw SDK loop, with
 * KEEL_PROFILE=raw) against bench/serve.ts in a child process, so `node --cpu-prof` sees only the
 * client. Run: node --cpu-prof --import tsx bench/profile-turn.ts [model] (default bench-text-200000).
 */
import Anthropic from "@anthropic-ai/sdk"
import { AnthropicModel, Message, SessionState, TurnLoop } from "@keel/core"
import { Effect, Layer, ManagedRuntime, Redacted, Stream } from "effect"
import { spawn } from "node:child_process"
import { once } from "node:events"
import * as readline from "node:readline"
import * as Kernel from "./kernel.js"

const model = process.argv[2] ?? "bench-text-200000"
const runs = Number(process.env.KEEL_PROFILE_RUNS ?? 8)

const main = async () => {
  const server = spawn(process.execPath, ["--import", "tsx", new URL("./serve.ts", import.meta.url).pathname], {
    stdio: ["ignore", "pipe", "inherit"]
  })
  const [first] = (await once(readline.createInterface({ input: server.stdout! }), "line")) as [string]
  const url = first.split("=")[1]!
  // What a turn runs on besides its model (bench/kernel.ts), without tools.
  const runtime = ManagedRuntime.make(Layer.mergeAll(
    AnthropicModel.layer({ apiKey: Redacted.make("bench"), baseURL: url }),
    Kernel.turnServices()
  ))
  const client = new Anthropic({ apiKey: "bench", baseURL: url, maxRetries: 0 })
  const kernel = () =>
    runtime.runPromise(Effect.gen(function*() {
      const state = yield* SessionState.make("bench", [Message.user("go")])
      let count = 0
      yield* TurnLoop.run({ model, maxTokens: 1024, maxTurns: 1, cwd: process.cwd() }).pipe(
        Stream.runForEachChunk((chunk) => Effect.sync(() => (count += chunk.length))),
        Effect.provideService(SessionState.SessionState, state)
      )
      return count
    }))
  const raw = async () => {
    let count = 0
    const request = { model, max_tokens: 1024, messages: [{ role: "user" as const, content: "go" }], stream: true as const }
    for await (const _ of await client.messages.create(request)) count++
    return count
  }
  const f = process.env.KEEL_PROFILE === "raw" ? raw : kernel
  const times: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now()
    await f()
    times.push(performance.now() - t0)
  }
  console.log(`${process.env.KEEL_PROFILE === "raw" ? "raw" : "kernel"} ${model}: ${times.map((t) => t.toFixed(0)).join(" ")} ms`)
  await runtime.dispose()
  server.kill("SIGTERM")
}

void main()
