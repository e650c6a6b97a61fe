/**
 * Row `text`: text:N (default 200,000 deltas), whole process: `keel -p` vs the raw-SDK script vs
 * the floor script, spawn → exit, each printing the answer. Goal ≤ 1.1× the raw SDK.
 */
import { alternate } from "../harness/alternate.js"
import { argsFor, type Client, clients, run } from "../harness/clients.js"
import * as Control from "../harness/control.js"
import { type Context, type Line, ratioLine } from "../harness/line.js"
import { cell } from "../harness/stats.js"

const n = Number(process.env.KEEL_BENCH_TEXT ?? 200_000)

/** One whole-process run of `client` on text:n; its spawn → exit in ms. */
const once = (ctx: Context, client: Client) => async (): Promise<number> => {
  await Control.reset(ctx.url)
  const exit = await run(argsFor(client, `bench-text-${n}`), { url: ctx.url, cwd: ctx.workspace, request: ctx.request })
  const log = await Control.read(ctx.url)
  if (log.exchanges.length !== 1) throw new Error(`${client}: ${log.exchanges.length} requests on text:${n}`)
  // Every delta is "token. " (7 characters): the answer printed must hold them all.
  if (exit.stdoutBytes < n * 7) throw new Error(`${client}: printed ${exit.stdoutBytes} bytes of text:${n}`)
  return exit.ms
}

/** The row's line. */
export const measure = async (ctx: Context): Promise<Array<Line>> => {
  const runs = Number(process.env.KEEL_BENCH_TEXT_RUNS ?? Math.max(3, ctx.runs - 4))
  const ms = await alternate(clients.map((c) => [c, once(ctx, c)] as const), runs, ctx.warmups, (c, i) => ctx.log(`text:${n} ${c} ${i < 0 ? "warm-up" : i + 1}`))
  return [ratioLine("text", `text:${n}, whole process`, "ms", { keel: cell(ms.keel), raw: cell(ms.raw), floor: cell(ms.floor) }, 1.1)]
}
