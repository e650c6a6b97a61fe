/**
 * The check that keeps the table honest: before any row, keel, the raw-SDK script and the floor
 * script each run `bench-loop-3`, and the conversations their last requests carry must be the same
 * (roles, text, tool calls, tool results, compared after dropping what only marks caching:
 * `cache_control` and a null `citations`), and so must the tool definitions and system prompt (but
 * for the model's name, which keel's system prompt states and the captured one gives as the capture
 * run's). A
 * difference fails the run: the raw and floor figures would not be for the same work.
 */
import { argsFor, type Client, clients, run } from "./clients.js"
import * as Control from "./control.js"
import type { Context } from "./line.js"

const normal = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(normal)
  if (value === null || typeof value !== "object") return value
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) {
    if (k === "cache_control" || (k === "citations" && v === null)) continue
    out[k] = normal(v)
  }
  return out
}

/** The last request `client` sends on loop:3, normalised, without model and stream. */
const lastRequest = async (ctx: Context, client: Client): Promise<string> => {
  await Control.reset(ctx.url)
  await run(argsFor(client, "bench-loop-3"), { url: ctx.url, cwd: ctx.workspace, request: ctx.request })
  const { lastBody, exchanges } = await Control.read(ctx.url)
  if (exchanges.length !== 4 || lastBody === undefined) throw new Error(`${client}: ${exchanges.length} requests on loop:3`)
  const { model: _model, stream: _stream, ...rest } = JSON.parse(lastBody)
  // keel's system prompt names its model; the captured request the scripts send names bench-text-10.
  return JSON.stringify(normal(rest)).replace(/bench-[a-z]+-\d+/g, "bench-model")
}

/** Fails unless keel, raw and floor send the same last request on loop:3 (runs one after another: one server log). */
export const check = async (ctx: Context): Promise<void> => {
  const keel = await lastRequest(ctx, "keel")
  for (const client of clients.filter((c) => c !== "keel")) {
    const other = await lastRequest(ctx, client)
    if (other === keel) continue
    let i = 0
    while (i < keel.length && keel[i] === other[i]) i++
    throw new Error(
      `${client} does not send what keel sends on loop:3; first difference at character ${i}:\n` +
        `  keel:  …${keel.slice(Math.max(0, i - 80), i + 120)}\n  ${client}: …${other.slice(Math.max(0, i - 80), i + 120)}`
    )
  }
}
