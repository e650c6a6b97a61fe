/**
 * Rows `first` and `version`, start-up:
 * - spawn → first request (as the server timestamps its body's arrival): `keel -p hi` vs the raw-SDK
 *   and floor scripts on a 10-delta answer. Goal ≤ 1.1× the raw SDK.
 * - `keel --version` vs `node -e 0`, spawn → exit. Goal ≤ 1.5× `node -e 0` (in the floor column).
 */
import { alternate } from "../harness/alternate.js"
import { argsFor, type Client, clients, keelBin, run } from "../harness/clients.js"
import * as Control from "../harness/control.js"
import { type Context, type Line, ratioLine } from "../harness/line.js"
import { cell } from "../harness/stats.js"

/** Spawn → the first request's arrival at the server, in ms, of `client` answering "hi". */
const firstRequest = (ctx: Context, client: Client) => async (): Promise<number> => {
  await Control.reset(ctx.url)
  const exit = await run(argsFor(client, "bench-text-10"), { url: ctx.url, cwd: ctx.workspace, request: ctx.request })
  const log = await Control.read(ctx.url)
  if (log.exchanges.length !== 1) throw new Error(`${client}: ${log.exchanges.length} requests for "hi"`)
  return log.exchanges[0]!.at - exit.spawnedAt
}

/** The `first` row's line. */
export const measureFirst = async (ctx: Context): Promise<Array<Line>> => {
  const ms = await alternate(clients.map((c) => [c, firstRequest(ctx, c)] as const), ctx.runs, ctx.warmups, (c, i) => ctx.log(`first ${c} ${i < 0 ? "warm-up" : i + 1}`))
  return [ratioLine("first", "spawn → first request (keel -p hi)", "ms", { keel: cell(ms.keel), raw: cell(ms.raw), floor: cell(ms.floor) }, 1.1)]
}

/** The `version` row's line: keel in the keel column, `node -e 0` in the floor column. */
export const measureVersion = async (ctx: Context): Promise<Array<Line>> => {
  const setting = { url: ctx.url, cwd: ctx.workspace }
  const ms = await alternate(
    [
      ["keel", async () => (await run([keelBin, "--version"], setting)).ms],
      ["floor", async () => (await run(["-e", "0"], setting)).ms]
    ] as const,
    ctx.runs * 2,
    ctx.warmups,
    (c, i) => ctx.log(`version ${c} ${i < 0 ? "warm-up" : i + 1}`)
  )
  return [{
    ...ratioLine("version", "keel --version vs node -e 0, spawn → exit", "ms", { keel: cell(ms.keel), floor: cell(ms.floor) }, 1.5, "floor"),
    note: "version: the floor column is `node -e 0`"
  }]
}
