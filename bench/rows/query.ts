/**
 * Row `query`: the `query()` embedding (bench/scripts/query.mjs imports `@keel/cli` and runs "hi"):
 * from before its import to the first request at the server (import + set-up), goal ≤ 250 ms; and
 * spawn → first request, beside the raw-SDK script's (the `first` row's raw client) for scale.
 */
import { alternate } from "../harness/alternate.js"
import { argsFor, run, script } from "../harness/clients.js"
import * as Control from "../harness/control.js"
import { type Context, type Line, ratioLine } from "../harness/line.js"
import { cell } from "../harness/stats.js"

/** One run: spawn → first request and (for query.mjs) its own t0 → first request, ms. */
const once = (ctx: Context, args: ReadonlyArray<string>) => async () => {
  await Control.reset(ctx.url)
  const exit = await run(args, { url: ctx.url, cwd: ctx.workspace, request: ctx.request })
  const log = await Control.read(ctx.url)
  if (log.exchanges.length !== 1) throw new Error(`${args.join(" ")}: ${log.exchanges.length} requests for "hi"`)
  const at = log.exchanges[0]!.at
  const t0 = /bench-t0=([\d.]+)/.exec(exit.stderr)?.[1]
  return { spawn: at - exit.spawnedAt, ...(t0 !== undefined ? { setup: at - Number(t0) } : {}) }
}

/** The row's lines. */
export const measure = async (ctx: Context): Promise<Array<Line>> => {
  const r = await alternate(
    [["keel", once(ctx, [script("query.mjs"), "bench-text-10"])], ["raw", once(ctx, argsFor("raw", "bench-text-10"))]] as const,
    ctx.runs,
    ctx.warmups,
    (c, i) => ctx.log(`query ${c} ${i < 0 ? "warm-up" : i + 1}`)
  )
  const setup = cell(r.keel.map((x) => x.setup!))
  return [
    {
      row: "query",
      label: "query(): import + set-up → first request",
      unit: "ms",
      cells: { keel: setup },
      goal: "≤ 250 ms",
      met: setup.median <= 250
    },
    ratioLine("query", "  query(): spawn → first request", "ms", { keel: cell(r.keel.map((x) => x.spawn)), raw: cell(r.raw.map((x) => x.spawn)) }, undefined)
  ]
}
