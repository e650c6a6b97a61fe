/**
 * Row `text`: text:N (default 200,000 deltas), whole process: `keel -p` vs the raw-SDK script vs
 * the floor script, spawn → exit, each printing the answer. Goal ≤ 1.1× the raw SDK. Also each
 * process's CPU time, which the machine's other load disturbs less than wall time.
 */
import { alternate } from "../harness/alternate.js"
import { argsFor, type Client, clients, run } from "../harness/clients.js"
import * as Control from "../harness/control.js"
import { type Context, type Line, ratioLine } from "../harness/line.js"
import { cell } from "../harness/stats.js"

const n = Number(process.env.KEEL_BENCH_TEXT ?? 200_000)

/** One whole-process run of `client` on text:n: spawn → exit and CPU time, ms. */
const once = (ctx: Context, client: Client) => async (): Promise<{ readonly ms: number; readonly cpuMs: number }> => {
  await Control.reset(ctx.url)
  const exit = await run(argsFor(client, `bench-text-${n}`), { url: ctx.url, cwd: ctx.workspace, request: ctx.request })
  const log = await Control.read(ctx.url)
  if (log.exchanges.length !== 1) throw new Error(`${client}: ${log.exchanges.length} requests on text:${n}`)
  // Every delta is "token. " (7 characters): the answer printed must hold them all.
  if (exit.stdoutBytes < n * 7) throw new Error(`${client}: printed ${exit.stdoutBytes} bytes of text:${n}`)
  return { ms: exit.ms, cpuMs: exit.usage.cpuMs }
}

/** The row's line. */
export const measure = async (ctx: Context): Promise<Array<Line>> => {
  const runs = Number(process.env.KEEL_BENCH_TEXT_RUNS ?? Math.max(3, ctx.runs - 4))
  const r = await alternate(clients.map((c) => [c, once(ctx, c)] as const), runs, ctx.warmups, (c, i) => ctx.log(`text:${n} ${c} ${i < 0 ? "warm-up" : i + 1}`))
  const of = (f: (x: { readonly ms: number; readonly cpuMs: number }) => number) => ({
    keel: cell(r.keel.map(f)),
    raw: cell(r.raw.map(f)),
    floor: cell(r.floor.map(f))
  })
  return [
    ratioLine("text", `text:${n}, whole process`, "ms", of((x) => x.ms), 1.1),
    ratioLine("text", "  its CPU time (user + system)", "ms", of((x) => x.cpuMs), undefined)
  ]
}
