/**
 * Issue 18's table in one command: every row measured for keel (the built `keel -p`, spawned as a
 * user runs it), the raw SDK (a hand-written loop over `@anthropic-ai/sdk`, bench/scripts/raw-sdk.mjs)
 * and the floor (the same loop over bare `node:http`, bench/scripts/floor.mjs), in the same run,
 * against the same server (bench/serve.ts, its own process, pinned to the other core when it can
 * be). Runs alternate between the clients after warm-ups; each cell is the median (min–max) of the
 * runs; the ratio is keel's median over the raw SDK's unless the line says otherwise.
 *
 * The raw and floor scripts send what keel sends: before the rows, one `keel -p hi` run is captured
 * by the server and its request (system prompt, tool definitions, first message) is what they send;
 * then each client runs a 3-round loop and their last requests must match (bench/harness/equivalence.ts;
 * KEEL_BENCH_CHECK=0 skips it).
 *
 * Rows (KEEL_BENCH_ROWS=text,loop50,... picks some; default all), with their knobs:
 *   text      text:200000 whole process (KEEL_BENCH_TEXT=N, KEEL_BENCH_TEXT_RUNS)            ≤ 1.1×
 *   loop50    loop:50 whole process; one tool round's turnaround; CPU per round
 *             (KEEL_BENCH_LOOP=N)                                               ≤ 1.5×, ≤ 2.5 ms
 *   first     spawn → first request, keel -p hi                                          ≤ 1.1×
 *   version   keel --version vs node -e 0                                                ≤ 1.5×
 *   loop1000  loop:1000 whole and per-round linearity (KEEL_BENCH_LOOP_LONG=N,
 *             KEEL_BENCH_LOOP_LONG_RUNS, default 3)                                      ≤ 1.3×
 *   query     query() embedding: import + set-up → first request                         ≤ 250 ms
 *   rss       peak RSS of text:2000000, and per streamed event (KEEL_BENCH_RSS_N,
 *             KEEL_BENCH_RSS_RUNS, default 3)                                            ≤ 1.3×
 *   resume    keel -p --resume of a 10,000-message session vs a 10-message one
 *             (KEEL_BENCH_RESUME=N messages)                                             ≤ 1.5×
 * Other knobs: KEEL_BENCH_RUNS (timed runs per client, default 11; the text row uses 4 fewer),
 * KEEL_BENCH_WARMUPS (default 1), KEEL_BENCH_PIN=0 (no CPU pinning), KEEL_BENCH_CHECK=0 (no
 * equivalence check). `--json FILE` also writes the lines as JSON. Wall times on a machine others
 * use are inflated and spread wide: the CPU-time lines are the steadier before/after figures.
 *
 * Run: npm run bench   (after a build: npx tsx bench/table.ts)
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { argsFor, cleanup, run, tmp } from "./harness/clients.js"
import * as Control from "./harness/control.js"
import * as Equivalence from "./harness/equivalence.js"
import type { Context, Line } from "./harness/line.js"
import { table } from "./harness/print.js"
import * as Loop from "./rows/loop.js"
import * as Query from "./rows/query.js"
import * as Resume from "./rows/resume.js"
import * as Rss from "./rows/rss.js"
import * as Startup from "./rows/startup.js"
import * as Text from "./rows/text.js"
import { loopFile, loopFileText } from "./scenario.js"
import * as BenchServer from "./server.js"

/** The rows, in the table's order, by name. */
const rows: ReadonlyArray<readonly [string, (ctx: Context) => Promise<Array<Line>>]> = [
  ["text", Text.measure],
  ["loop50", Loop.measure50],
  ["first", Startup.measureFirst],
  ["version", Startup.measureVersion],
  ["loop1000", Loop.measure1000],
  ["query", Query.measure],
  ["rss", Rss.measure],
  ["resume", Resume.measure]
]

const picked = (process.env.KEEL_BENCH_ROWS ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "")
  .map((s) => (s === "round" ? "loop50" : s))
for (const name of picked) if (!rows.some(([r]) => r === name)) throw new Error(`KEEL_BENCH_ROWS: no row ${name} (rows: ${rows.map(([r]) => r).join(", ")})`)
const jsonAt = process.argv.indexOf("--json")
const jsonFile = jsonAt === -1 ? undefined : process.argv[jsonAt + 1]

/** A working directory for the measured processes, with the files the loop rows read. */
const workspace = (rounds: number): string => {
  const dir = fs.realpathSync(tmp("work-"))
  fs.mkdirSync(path.join(dir, "files"))
  for (let k = 1; k <= rounds; k++) fs.writeFileSync(path.join(dir, loopFile(k)), loopFileText(k))
  return dir
}

/** Runs `keel -p hi` once and keeps the request it sent, for the raw and floor scripts to send. */
const capture = async (url: string, cwd: string): Promise<string> => {
  await Control.reset(url)
  await run(argsFor("keel", "bench-text-10"), { url, cwd })
  const { firstBody } = await Control.read(url)
  if (firstBody === undefined) throw new Error("keel -p hi sent no request")
  const file = path.join(tmp("request-"), "request.json")
  fs.writeFileSync(file, firstBody)
  return file
}

const main = async () => {
  const server = await BenchServer.start({ pin: process.env.KEEL_BENCH_PIN !== "0" })
  try {
    const cwd = workspace(Math.max(1000, Number(process.env.KEEL_BENCH_LOOP ?? 50), Number(process.env.KEEL_BENCH_LOOP_LONG ?? 1000)))
    const ctx: Context = {
      url: server.url,
      workspace: cwd,
      request: await capture(server.url, cwd),
      runs: Number(process.env.KEEL_BENCH_RUNS ?? 11),
      warmups: Number(process.env.KEEL_BENCH_WARMUPS ?? 1),
      log: process.stderr.isTTY ? (line) => process.stderr.write(`\r\x1b[K${line}`) : () => {}
    }
    // The raw and floor figures count only if those scripts send what keel sends.
    if (process.env.KEEL_BENCH_CHECK !== "0") await Equivalence.check(ctx)
    const lines: Array<Line> = []
    const started = Date.now()
    for (const [name, measure] of rows) {
      if (picked.length > 0 && !picked.includes(name)) continue
      try {
        lines.push(...(await measure(ctx)))
      } catch (e) {
        // One row failing (a client crashed, a check failed) still leaves the others' figures.
        lines.push({ row: name, label: `${name}: FAILED`, unit: "", cells: {}, goal: "", note: `${name}: ${String(e).slice(0, 500)}` })
      }
    }
    if (process.stderr.isTTY) process.stderr.write("\r\x1b[K")
    const load = os.loadavg().map((x) => x.toFixed(2)).join(" ")
    console.log(
      `keel vs raw SDK vs floor, node ${process.version}, ${os.cpus().length} cores${server.pinned ? " (clients on core 0, server on core 1)" : ""}, ` +
        `load average ${load}; ${ctx.runs} runs per client unless the row says less, after ${ctx.warmups} warm-up; ` +
        `cells: median (min–max); ${((Date.now() - started) / 1000).toFixed(0)} s\n`
    )
    console.log(table(lines))
    if (jsonFile !== undefined) {
      fs.writeFileSync(jsonFile, JSON.stringify({ node: process.version, load: os.loadavg(), pinned: server.pinned, lines }, null, 2))
    }
  } finally {
    server.stop()
    cleanup()
  }
}

await main()
