import Anthropic from "@anthropic-ai/sdk"
import { AnthropicModel, Message, Pipeline, SessionState, ToolRegistry, ToolRuntime, TurnLoop, ModelClient } from "@keel/core"
import { Effect, Layer, ManagedRuntime, Redacted, Stream } from "effect"
import { spawn } from "node:child_process"
import { once } from "node:events"
import * as readline from "node:readline"
const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const main = async () => {
  const server = spawn("taskset", ["-c", "1", process.execPath, "--import", "tsx", "bench/serve.ts"], { stdio: ["ignore", "pipe", "inherit"] })
  const [first] = (await once(readline.createInterface({ input: server.stdout! }), "line")) as [string]
  const url = first.split("=")[1]!
  const client = new Anthropic({ apiKey: "bench", baseURL: url, maxRetries: 0 })
  const n = Number(process.env.N ?? 20000)
  const model = `bench-text-${n}`
  const req = { model, max_tokens: 1024, messages: [{ role: "user" as const, content: "go" }], stream: true as const }
  const raw = async () => { let c = 0; for await (const _ of await client.messages.create(req)) c++ }
  const rt = ManagedRuntime.make(Layer.mergeAll(AnthropicModel.layer({ apiKey: Redacted.make("bench"), baseURL: url }), Pipeline.layerEmpty, ToolRuntime.layer().pipe(Layer.provideMerge(ToolRegistry.layer([])))))
  const modelOnly = () => rt.runPromise(Effect.flatMap(ModelClient.ModelClient, (m) => m.stream({ model, max_tokens: 1024, messages: [Message.user("go")], source: "foreground" } as any).pipe(Stream.runDrain)))
  const turn = () => rt.runPromise(Effect.gen(function*() {
    const state = yield* SessionState.make("bench", [Message.user("go")])
    yield* TurnLoop.run({ model, maxTokens: 1024, maxTurns: 1, cwd: process.cwd() }).pipe(Stream.runDrain, Effect.provideService(SessionState.SessionState, state))
  }))
  const fns: Record<string, () => Promise<unknown>> = { raw, modelOnly, turn }
  const times: Record<string, Array<number>> = { raw: [], modelOnly: [], turn: [] }
  for (let i = 0; i < 5; i++) for (const f of Object.values(fns)) await f()
  for (let i = 0; i < Number(process.env.RUNS ?? 21); i++) for (const [k, f] of Object.entries(fns)) { const t = performance.now(); await f(); times[k]!.push(performance.now() - t) }
  for (const [k, v] of Object.entries(times)) console.log(k, median(v).toFixed(1), Math.min(...v).toFixed(1))
  await rt.dispose(); server.kill()
}
main()
