/**
 * Rows `loop50` / `round` and `loop1000`: an agent loop of N tool rounds (each a `Read` of a
 * different small file, bench/scenario.ts) then a text answer, whole process: `keel -p` vs the
 * raw-SDK script vs the floor script, spawn → exit. The server times each round's turnaround (its
 * response flushed → the next request's body arrived).
 *
 * - loop:50 whole, goal ≤ 1.5× the raw SDK; one round's turnaround (median of rounds 2–50 in a run;
 *   median and spread over runs), goal ≤ 2.5 ms; and the CPU time per round (see `measure50`).
 * - loop:1000 whole (no goal of its own) and its linearity: in each run, the median turnaround of
 *   rounds 980–1000 over that of rounds 90–110; goal ≤ 1.3× for keel. (KEEL_BENCH_LOOP_LONG=N: the
 *   last 21 rounds over the 21 around N/10.)
 */
import { alternate } from "../harness/alternate.js"
import { argsFor, type Client, clients, run } from "../harness/clients.js"
import * as Control from "../harness/control.js"
import { type Context, type Line, ratioLine } from "../harness/line.js"
import { cell, median } from "../harness/stats.js"

/** One loop run: spawn → exit in ms, and each round's turnaround (index k-1 for round k). */
interface LoopRun {
  readonly ms: number
  readonly cpuMs: number
  readonly turnarounds: ReadonlyArray<number>
}

const once = (ctx: Context, client: Client, n: number) => async (): Promise<LoopRun> => {
  await Control.reset(ctx.url)
  // keel stops a turn at 500 model calls by default; the loop needs n + 1.
  const exit = await run(argsFor(client, `bench-loop-${n}`, "hi", ["--max-turns", String(n + 10)]), { url: ctx.url, cwd: ctx.workspace, request: ctx.request })
  const log = await Control.read(ctx.url)
  if (log.exchanges.length !== n + 1) throw new Error(`${client}: ${log.exchanges.length} requests on loop:${n}, not ${n + 1}`)
  return { ms: exit.ms, cpuMs: exit.usage.cpuMs, turnarounds: Control.turnarounds(log) }
}

const loops = (ctx: Context, n: number, runs: number, warmups: number) =>
  alternate(clients.map((c) => [c, once(ctx, c, n)] as const), runs, warmups, (c, i) => ctx.log(`loop:${n} ${c} ${i < 0 ? "warm-up" : i + 1}`))

const perClient = <T>(results: Record<Client, Array<T>>, f: (t: T) => number) => ({
  keel: cell(results.keel.map(f)),
  raw: cell(results.raw.map(f)),
  floor: cell(results.floor.map(f))
})

/** The median turnaround of rounds `from`..`to` (1-based, inclusive) of a run. */
const around = (r: LoopRun, from: number, to: number) => median(r.turnarounds.slice(from - 1, to))

/**
 * loop:50 whole and one round's turnaround; and, since wall times on a shared machine include
 * others' work, each client's CPU time per round: (its run's CPU on loop:50 − its median CPU on
 * loop:0, the same process answering at once) / 50.
 */
export const measure50 = async (ctx: Context): Promise<Array<Line>> => {
  const n = Number(process.env.KEEL_BENCH_LOOP ?? 50)
  const results = await loops(ctx, n, ctx.runs, ctx.warmups)
  const zero = await loops(ctx, 0, ctx.runs, 0)
  const round = perClient(results, (r) => around(r, 2, n))
  const cpuPerRound = {
    keel: cell(results.keel.map((r) => (r.cpuMs - median(zero.keel.map((z) => z.cpuMs))) / n)),
    raw: cell(results.raw.map((r) => (r.cpuMs - median(zero.raw.map((z) => z.cpuMs))) / n)),
    floor: cell(results.floor.map((r) => (r.cpuMs - median(zero.floor.map((z) => z.cpuMs))) / n))
  }
  return [
    ratioLine("loop50", `loop:${n} (${n} tool rounds), whole process`, "ms", perClient(results, (r) => r.ms), 1.5),
    ratioLine("loop50", "  its CPU time (user + system)", "ms", perClient(results, (r) => r.cpuMs), undefined),
    {
      ...ratioLine("round", `one tool round, median turnaround (rounds 2–${n})`, "ms", round, undefined),
      goal: "≤ 2.5 ms",
      met: round.keel.median <= 2.5
    },
    ratioLine("round", `  CPU per round ((loop:${n} − loop:0) / ${n})`, "ms", cpuPerRound, undefined)
  ]
}

/** loop:1000 whole and its linearity. */
export const measure1000 = async (ctx: Context): Promise<Array<Line>> => {
  const n = Number(process.env.KEEL_BENCH_LOOP_LONG ?? 1000)
  const runs = Number(process.env.KEEL_BENCH_LOOP_LONG_RUNS ?? 3)
  // No warm-up: a run takes seconds, and its early rounds are not what is measured.
  const results = await loops(ctx, n, runs, 0)
  const early = Math.max(12, Math.round(n / 10))
  const late = perClient(results, (r) => around(r, n - 20, n))
  const growth = perClient(results, (r) => around(r, n - 20, n) / around(r, early - 10, early + 10))
  return [
    ratioLine("loop1000", `loop:${n}, whole process`, "ms", perClient(results, (r) => r.ms), undefined),
    ratioLine("loop1000", "  its CPU time (user + system)", "ms", perClient(results, (r) => r.cpuMs), undefined),
    ratioLine("loop1000", `  turnaround, rounds ${n - 20}–${n}`, "ms", late, undefined),
    {
      row: "loop1000",
      label: `  linearity: turnaround ${n - 20}–${n} / ${early - 10}–${early + 10}`,
      unit: "×",
      cells: growth,
      ratio: growth.keel.median,
      ratioTo: "keel itself",
      goal: "≤ 1.3×",
      met: growth.keel.median <= 1.3,
      note: "linearity: every round's request carries the whole history (a 5-line file read per round), so the raw and floor columns show the growth the request's size alone causes"
    }
  ]
}
