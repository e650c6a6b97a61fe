/**
 * Row `rss`: memory. Peak RSS (each process's own `maxRSS` at exit, bench/scripts/usage.cjs) of
 * text:N (default 2,000,000 deltas), whole process, for keel, the raw SDK and the floor; and the
 * RSS per streamed event: (peak on text:N − peak of the same program on text:10) / N, in bytes.
 * Goal: keel's per-event figure ≤ 1.3× the raw SDK's. Fewer runs (KEEL_BENCH_RSS_RUNS, default 3):
 * peak RSS varies little between runs, and text:2000000 takes seconds.
 */
import { alternate } from "../harness/alternate.js"
import { argsFor, type Client, clients, run } from "../harness/clients.js"
import * as Control from "../harness/control.js"
import { type Context, type Line, ratioLine } from "../harness/line.js"
import { cell, median } from "../harness/stats.js"

const n = Number(process.env.KEEL_BENCH_RSS_N ?? 2_000_000)

/** Peak RSS (MB) of `client` answering with `events` text deltas. */
const peak = (ctx: Context, client: Client, events: number) => async (): Promise<number> => {
  await Control.reset(ctx.url)
  const exit = await run(argsFor(client, `bench-text-${events}`), { url: ctx.url, cwd: ctx.workspace, request: ctx.request })
  if (exit.stdoutBytes < events * 7) throw new Error(`${client}: printed ${exit.stdoutBytes} bytes of text:${events}`)
  return exit.usage.maxRssMB
}

/** The row's lines. */
export const measure = async (ctx: Context): Promise<Array<Line>> => {
  const runs = Number(process.env.KEEL_BENCH_RSS_RUNS ?? 3)
  const progress = (what: string) => (c: Client, i: number) => ctx.log(`rss ${what} ${c} ${i < 0 ? "warm-up" : i + 1}`)
  const base = await alternate(clients.map((c) => [c, peak(ctx, c, 10)] as const), runs, 0, progress("text:10"))
  const big = await alternate(clients.map((c) => [c, peak(ctx, c, n)] as const), runs, 0, progress(`text:${n}`))
  const of = (r: Record<Client, Array<number>>, f: (x: number, c: Client) => number) => ({
    keel: cell(r.keel.map((x) => f(x, "keel"))),
    raw: cell(r.raw.map((x) => f(x, "raw"))),
    floor: cell(r.floor.map((x) => f(x, "floor")))
  })
  const perEvent = of(big, (x, c) => ((x - median(base[c])) * 1024 * 1024) / n)
  return [
    ratioLine("rss", `peak RSS, text:${n}`, "MB", of(big, (x) => x), undefined),
    ratioLine("rss", "  peak RSS, text:10 (baseline)", "MB", of(base, (x) => x), undefined),
    ratioLine("rss", "  RSS per streamed event (peak − baseline) / events", "B/event", perEvent, 1.3)
  ]
}
