/**
 * Row `resume`: `keel -p --resume <id> hi` of a saved 10,000-message session vs a 10-message one
 * (bench/harness/sessions.ts writes both in keel's transcript format), spawn → first request at the
 * server. Goal: the long one within 1.5× of the short one. Each run resumes a fresh copy, so that no
 * run resumes what an earlier one appended. (KEEL_BENCH_RESUME=N: messages of the long session.)
 *
 * The long session's rounds read 1,000 files in turn (KEEL_BENCH_RESUME_FILES=N: N files), so each
 * file is read about 5 times, and the saved transcript holds none of the snips a session of keel's
 * would have written as it went: the resumed turn's snip stage replaces ~4,000 stale reads and
 * writes them as one rewrite before the first request. KEEL_BENCH_RESUME_FILES=5000 (a file per
 * round) measures a resume with nothing to snip.
 */
import { alternate } from "../harness/alternate.js"
import { keelBin, run } from "../harness/clients.js"
import * as Control from "../harness/control.js"
import type { Context, Line } from "../harness/line.js"
import * as Sessions from "../harness/sessions.js"
import { cell } from "../harness/stats.js"

const long = Number(process.env.KEEL_BENCH_RESUME ?? 10_000)
const files = Number(process.env.KEEL_BENCH_RESUME_FILES ?? 1000)

/** Spawn → first request of resuming `saved`, ms (and how many messages that request carried). */
const once = (ctx: Context, saved: Sessions.Saved, messages: number) => async (): Promise<number> => {
  await Control.reset(ctx.url)
  const exit = await run([keelBin, "-p", "hi", "--resume", saved.sessionId, "--model", "bench-text-10"], {
    url: ctx.url,
    cwd: ctx.workspace,
    env: { KEEL_HOME: Sessions.homeWith(saved) }
  })
  const log = await Control.read(ctx.url)
  if (log.exchanges.length !== 1) throw new Error(`resume: ${log.exchanges.length} requests`)
  const sent = JSON.parse(log.firstBody!).messages.length
  // The saved messages and the new prompt, and no complaint about the transcript.
  if (sent !== messages + 1) throw new Error(`resume of ${messages} messages sent ${sent}`)
  if (exit.stderr.trim() !== "") throw new Error(`resume of ${messages} messages: ${exit.stderr.slice(0, 500)}`)
  return log.exchanges[0]!.at - exit.spawnedAt
}

/** The row's line. */
export const measure = async (ctx: Context): Promise<Array<Line>> => {
  const rounds = (messages: number) => (messages - 2) / 2
  const [short, big] = await Sessions.make(ctx.url, ctx.workspace, [rounds(10), rounds(long)], files)
  const r = await alternate(
    [["short", once(ctx, short!, 10)], ["long", once(ctx, big!, long)]] as const,
    ctx.runs,
    ctx.warmups,
    (c, i) => ctx.log(`resume ${c} ${i < 0 ? "warm-up" : i + 1}`)
  )
  const longCell = cell(r.long)
  const shortCell = cell(r.short)
  const ratio = longCell.median / shortCell.median
  return [
    {
      row: "resume",
      label: `resume of ${long} vs 10 messages: spawn → first request`,
      unit: "ms",
      cells: { keel: longCell, floor: shortCell },
      ratio,
      ratioTo: "10 messages",
      goal: "≤ 1.5×",
      met: ratio <= 1.5,
      note: `resume: both columns are keel -p --resume; keel: the ${long}-message session, floor: the 10-message one`
    }
  ]
}
