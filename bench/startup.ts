/**
 * Start-up: how long the built `keel` binary (node_modules/.bin/keel, which loads the esbuild bundle)
 * takes to get going, spawned as a user would run it.
 *
 * - `keel --version`: spawn → exit (the flag parser alone; the kernel is not loaded).
 * - `keel -p hi`, against the loopback fake of the Messages API (test/support/FakeAnthropic.ts, in
 *   this process): spawn → the first request's body received by the server (the time to the first
 *   request: loading the kernel, building the layers, the system prompt with its git facts), and
 *   spawn → exit (the answer streamed, printed, the transcript written, the process gone).
 * - `query()` embedded: plain node running test/support/query-once.mjs (`import { query } from
 *   "@keel/cli"`, one prompt): spawn → the first request (the import and the set-up before it).
 * - The floor: a hand-written script over the raw `@anthropic-ai/sdk` stream (raw-sdk-once.mjs),
 *   spawn → its first request, and `node -e 0`, spawn → exit.
 *
 * Each is run KEEL_BENCH_RUNS times (default 10, after one untimed warm-up of each) in a fresh
 * project directory; the table gives the median, min and max in ms.
 *
 * Run: npm run bench:startup   (KEEL_BENCH_RUNS=20 to change)
 */
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import * as FakeAnthropic from "../test/support/FakeAnthropic.js"
import { envFor, keel, start, workdir } from "../test/support/KeelProcess.js"

const runs = Number(process.env.KEEL_BENCH_RUNS ?? 10)

interface Sample {
  readonly firstRequest?: number
  readonly exit: number
}

/** `node script`, spawned as `keel` would be (see {@link start}'s environment). */
const node = (script: string) => ["--node", script]

/**
 * Spawns `keel args` (or `node <script>` for {@link node}'s args); the times (ms since the spawn) of
 * the first request `server` saw and of the exit.
 */
const time = async (args: ReadonlyArray<string>, server?: { firstRequestAt: number | undefined; fake: FakeAnthropic.FakeAnthropic }) => {
  if (server !== undefined) server.firstRequestAt = undefined
  const startedAt = performance.now()
  const { done } = start(args[0] === "--node" ? args.slice(1) : args, {
    env: server !== undefined ? envFor(server.fake) : {},
    cwd: workdir(),
    command: args[0] === "--node" ? process.execPath : keel
  })
  const r = await done
  const exit = performance.now() - startedAt
  if (r.code !== 0) throw new Error(`keel ${args.join(" ")} exited with ${r.code}: ${r.stderr}`)
  const sample: Sample = server?.firstRequestAt !== undefined
    ? { firstRequest: server.firstRequestAt - startedAt, exit }
    : { exit }
  return sample
}

const stats = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return { median: sorted[Math.floor(sorted.length / 2)]!, min: sorted[0]!, max: sorted.at(-1)! }
}

const main = async () => {
  const server: { firstRequestAt: number | undefined; fake: FakeAnthropic.FakeAnthropic } = {
    firstRequestAt: undefined,
    fake: undefined as unknown as FakeAnthropic.FakeAnthropic
  }
  server.fake = await FakeAnthropic.start([], {
    // Called once the request's body has arrived and parsed.
    fallback: () => {
      server.firstRequestAt ??= performance.now()
      return FakeAnthropic.textReply("hello", { model: "claude-sonnet-4-6" })
    }
  })
  try {
    const embedded = node(path.join(import.meta.dirname, "..", "test", "support", "query-once.mjs"))
    const raw = node(path.join(import.meta.dirname, "raw-sdk-once.mjs"))
    const bare = ["--node", "-e", "0"]
    await time(["--version"])
    await time(["-p", "hi"], server)
    await time(embedded, server)
    await time(raw, server)
    const version: Array<number> = []
    const firstRequest: Array<number> = []
    const exit: Array<number> = []
    const query: Array<number> = []
    const rawRequest: Array<number> = []
    const nodeExit: Array<number> = []
    // Interleaved, so that a change in the machine's load falls on every row alike.
    for (let i = 0; i < runs; i++) {
      version.push((await time(["--version"])).exit)
      const p = await time(["-p", "hi"], server)
      firstRequest.push(p.firstRequest!)
      exit.push(p.exit)
      query.push((await time(embedded, server)).firstRequest!)
      rawRequest.push((await time(raw, server)).firstRequest!)
      nodeExit.push((await time(bare)).exit)
    }
    const rows: Array<[string, ReadonlyArray<number>]> = [
      ["keel --version: spawn → exit", version],
      ["node -e 0: spawn → exit", nodeExit],
      ["keel -p: spawn → first request at the server", firstRequest],
      ["raw SDK script: spawn → first request", rawRequest],
      ["keel -p: spawn → exit", exit],
      ["query(): spawn → first request (import + set-up)", query]
    ]
    const width = Math.max(...rows.map(([name]) => name.length))
    const ms = (n: number) => n.toFixed(0).padStart(7)
    console.log(`start-up of the built keel (${runs} runs each; ms)\n`)
    console.log(`${"".padEnd(width)}  ${"median".padStart(7)}  ${"min".padStart(7)}  ${"max".padStart(7)}`)
    for (const [name, xs] of rows) {
      const s = stats(xs)
      console.log(`${name.padEnd(width)}  ${ms(s.median)}  ${ms(s.min)}  ${ms(s.max)}`)
    }
    const ratio = (a: ReadonlyArray<number>, b: ReadonlyArray<number>) => (stats(a).median / stats(b).median).toFixed(2)
    console.log(`\nratios of medians: keel --version / node -e 0 = ${ratio(version, nodeExit)} (goal ≤ 1.5); ` +
      `keel -p / raw SDK, to the first request = ${ratio(firstRequest, rawRequest)} (goal ≤ 1.1); ` +
      `query() to the first request = ${stats(query).median.toFixed(0)} ms (goal ≤ 250)`)
  } finally {
    await server.fake.close()
  }
}

void main()
