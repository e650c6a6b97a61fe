/**
 * What the transcript costs a `keel -p` process, whole: the real binary (its bundle) against the
 * loopback fake API (test/support/FakeAnthropic.ts), runs interleaved so that a shared machine's
 * load falls on every variant alike. Figures are medians over KEEL_BENCH_RUNS runs (default 7).
 *
 * - `loop`: one turn of N tool rounds (KEEL_BENCH_ROUNDS, default 50; each a `Read` of a small file,
 *   then a text answer), with and without `--no-session-persistence`: the process's wall time, its
 *   CPU time (user + system, from `process.cpuUsage()` at exit, which the machine's load does not
 *   move much) and the median round turnaround (request k+1's arrival minus request k's).
 * - `resume`: `keel -p --resume <id> hi` on a transcript of 10 messages and one of 10,000 (written
 *   in the real format: a real first turn, then tool rounds appended as the recorder writes them):
 *   spawn → the first request's headers at the server, and the process's CPU time until then.
 *
 * - `append`: in this process, one append of a transcript line as the store made it before
 *   (`@effect/platform`'s `writeFile` with flag "a": open, write, close through the thread pool) and
 *   as it makes it now (`TranscriptAppender`: `writeSync` on a held file, one fsync + close per 200
 *   appends included), wall and CPU time per append.
 *
 * Variants: KEEL_BENCH_BUNDLES="name=path/to/bundle/main.cjs,..." (default: this checkout's bundle),
 * to compare builds in one run; KEEL_BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/p" adds flags to
 * the measured processes' `node`.
 *
 * Run: npx tsx bench/transcript-writes.ts [loop|resume|append]   (all by default)
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { NodeContext } from "@effect/platform-node"
import * as FileSystem from "@effect/platform/FileSystem"
import { TranscriptAppender } from "@keel/core"
import { Effect } from "effect"
import * as FakeAnthropic from "../test/support/FakeAnthropic.js"

const runs = Number(process.env.KEEL_BENCH_RUNS ?? 7)
const rounds = Number(process.env.KEEL_BENCH_ROUNDS ?? 50)
const here = path.dirname(new URL(import.meta.url).pathname)
const bundles = (process.env.KEEL_BENCH_BUNDLES ?? `this=${path.join(here, "..", "packages", "cli", "bundle", "main.cjs")}`)
  .split(",").map((pair) => pair.split("=") as [string, string])
/** Extra flags for the measured `node` (e.g. `--cpu-prof`). */
const nodeArgs = (process.env.KEEL_BENCH_NODE_ARGS ?? "").split(" ").filter((a) => a.length > 0)
const modes = process.argv.length > 2 ? process.argv.slice(2) : ["append", "loop", "resume"]

const tmp = (prefix: string) => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))
const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? NaN : s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const spread = (xs: ReadonlyArray<number>) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`

/** A preload that prints the process's CPU time (ms) on stderr when it exits, or when asked (SIGUSR2). */
const preload = path.join(tmp("keel-bench-"), "cpu.mjs")
fs.writeFileSync(
  preload,
  `import { writeSync } from "node:fs"
const say = () => { const u = process.cpuUsage(); writeSync(2, "\\nKEEL_BENCH_CPU " + (u.user + u.system) / 1000 + "\\n") }
process.on("exit", say)
`
)
const cpuOf = (stderr: string) => Number(/KEEL_BENCH_CPU ([\d.]+)/.exec(stderr)?.[1] ?? NaN)

const baseEnv = (): Record<string, string | undefined> => {
  const env: Record<string, string | undefined> = { ...process.env }
  for (const k of Object.keys(env)) {
    if (k.startsWith("ANTHROPIC_") || k.startsWith("KEEL_") || k === "API_TIMEOUT_MS") delete env[k]
  }
  return env
}

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  readonly wallMs: number
  readonly cpuMs: number
}

/** Runs `node main args` in `cwd` with `KEEL_HOME` `home` against `server`. */
const keel = (main: string, args: ReadonlyArray<string>, cwd: string, home: string, server: FakeAnthropic.FakeAnthropic) =>
  new Promise<Ran>((resolve) => {
    const started = performance.now()
    const child = spawn(process.execPath, [...nodeArgs, "--import", preload, main, ...args], {
      cwd,
      env: { ...baseEnv(), ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test-key", KEEL_HOME: home, CLAUDE_CONFIG_DIR: home },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("close", (code) => resolve({ code, stdout, stderr, wallMs: performance.now() - started, cpuMs: cpuOf(stderr) }))
  })

/** A fake whose first `n` answers call `Read`, each on a file of its own (`small-<k>.txt`), then answers in text. */
const loopServer = (n: number) =>
  FakeAnthropic.start([], {
    fallback: (_body, index) =>
      index < n
        ? FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: `small-${index}.txt` }, id: `toolu_${index}` }])
        : FakeAnthropic.textReply("Done.")
  })

const project = () => {
  const dir = tmp("keel-bench-project-")
  for (let k = 0; k < rounds; k++) fs.writeFileSync(path.join(dir, `small-${k}.txt`), `small file ${k}\n`)
  return dir
}

const loop = async () => {
  const variants = bundles.flatMap(([name, main]) =>
    [["", []], [" --no-session-persistence", ["--no-session-persistence"]]].map(([label, extra]) => ({
      name: `${name}${label as string}`,
      main,
      extra: extra as Array<string>
    }))
  )
  const figures = new Map(variants.map((v) => [v.name, { wall: [] as Array<number>, cpu: [] as Array<number>, round: [] as Array<number> }]))
  for (let r = 0; r < runs; r++) {
    for (const v of variants) {
      const server = await loopServer(rounds)
      const dir = project()
      const ran = await keel(v.main, ["-p", "go", "--output-format", "stream-json", "--max-turns", String(rounds + 5), ...v.extra], dir, tmp("keel-bench-home-"), server)
      await server.close()
      if (ran.code !== 0 || server.requests.length !== rounds + 1) {
        throw new Error(`${v.name}: exit ${ran.code}, ${server.requests.length} requests\n${ran.stderr}`)
      }
      const at = server.requests.map((q) => q.receivedAt)
      const turnaround = at.slice(2).map((t, i) => t - at[i + 1]!)
      const f = figures.get(v.name)!
      f.wall.push(ran.wallMs)
      f.cpu.push(ran.cpuMs)
      f.round.push(median(turnaround))
    }
  }
  console.log(`loop:${rounds}, ${runs} runs each, interleaved (median, min–max)`)
  console.log(`${"variant".padEnd(40)} ${"wall ms".padStart(16)} ${"cpu ms".padStart(16)} ${"round ms".padStart(10)}`)
  for (const [name, f] of figures) {
    console.log(
      `${name.padEnd(40)} ${`${median(f.wall).toFixed(0)} (${spread(f.wall)})`.padStart(16)} ${
        `${median(f.cpu).toFixed(0)} (${spread(f.cpu)})`.padStart(16)
      } ${median(f.round).toFixed(2).padStart(10)}`
    )
  }
}

/**
 * A transcript of `messages` messages in `home` for `cwd`: a real first turn of `keel` (one tool
 * round), then tool rounds appended in the format the recorder writes (each a chained `assistant`
 * entry calling `Read` and a `user` entry answering it, copied from the real turn's).
 */
const transcriptOf = async (main: string, messages: number, cwd: string, home: string): Promise<string> => {
  const server = await loopServer(1)
  const ran = await keel(main, ["-p", "go", "--output-format", "stream-json"], cwd, home, server)
  await server.close()
  if (ran.code !== 0) throw new Error(`first turn: exit ${ran.code}\n${ran.stderr}`)
  const id = JSON.parse(ran.stdout.split("\n")[0]!).session_id as string
  const folder = path.join(home, "projects")
  const [slugDir] = fs.readdirSync(folder)
  const file = path.join(folder, slugDir!, `${id}.jsonl`)
  const entries = fs.readFileSync(file, "utf8").split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l))
  // The real turn wrote user, assistant(tool_use), user(tool_result), assistant(text): 4 messages.
  // Then: a prompt, (messages - 6) / 2 tool rounds, and a text answer, each chained to the one before.
  const prompt = entries.find((e) => e.type === "user")
  const assistant = entries.find((e) => e.type === "assistant" && JSON.stringify(e).includes("tool_use"))
  const result = entries.find((e) => e.type === "user" && JSON.stringify(e).includes("tool_result"))
  const answer = [...entries].reverse().find((e: any) => e.type === "assistant")
  let parent = entries.at(-1).uuid as string
  const lines: Array<string> = []
  const push = (entry: any, uuid: string) => {
    entry.uuid = uuid
    entry.parentUuid = parent
    parent = uuid
    lines.push(JSON.stringify(entry))
  }
  if (messages > 4) {
    push({ ...structuredClone(prompt), message: { role: "user", content: "go on" } }, `p-${id}`)
    for (let i = 0; i < (messages - 6) / 2; i++) {
      const callId = `toolu_bench_${i}`
      const a = structuredClone(assistant)
      a.message.content[0].id = callId
      // Each call reads a file of its own (the same read repeated would be snipped: another cost).
      a.message.content[0].input = { file_path: `old-${i}.txt` }
      push(a, `a-${i}-${id}`)
      const u = structuredClone(result)
      u.message.content[0].tool_use_id = callId
      push(u, `u-${i}-${id}`)
    }
    push(structuredClone(answer), `end-${id}`)
  }
  fs.appendFileSync(file, lines.map((l) => l + "\n").join(""))
  return id
}

/** Spawn → the first request's headers at a server that answers "ok", and the CPU time of the whole run. */
const resumeOnce = async (main: string, id: string, cwd: string, home: string) => {
  const server = await FakeAnthropic.start([], { fallback: () => FakeAnthropic.textReply("ok") })
  const started = performance.now()
  const ran = await keel(main, ["-p", "hi", "--resume", id, "--output-format", "stream-json"], cwd, home, server)
  await server.close()
  if (ran.code !== 0 || server.requests.length !== 1) throw new Error(`resume: exit ${ran.code}\n${ran.stderr}`)
  return { firstMs: server.requests[0]!.receivedAt - started, cpuMs: ran.cpuMs, messages: server.requests[0]!.body.messages.length }
}

const resume = async () => {
  const sizes = [10, 10_000]
  const rows: Array<{ name: string; first: Array<number>; cpu: Array<number>; messages: number }> = []
  const setups = await Promise.all(
    bundles.flatMap(([name, main]) =>
      sizes.map(async (size) => {
        const cwd = project()
        const home = tmp("keel-bench-home-")
        const id = await transcriptOf(main, size, cwd, home)
        const file = fs.readdirSync(path.join(home, "projects")).map((d) => path.join(home, "projects", d, `${id}.jsonl`))[0]!
        // Each run resumes a copy, so every run starts from the same file.
        const pristine = fs.readFileSync(file)
        const row = { name: `${name} resume ${size}`, first: [] as Array<number>, cpu: [] as Array<number>, messages: 0 }
        rows.push(row)
        return { main, id, cwd, home, file, pristine, row }
      })
    )
  )
  for (let r = 0; r < runs; r++) {
    for (const s of setups) {
      fs.writeFileSync(s.file, s.pristine)
      const once = await resumeOnce(s.main, s.id, s.cwd, s.home)
      s.row.first.push(once.firstMs)
      s.row.cpu.push(once.cpuMs)
      s.row.messages = once.messages
    }
  }
  console.log(`resume, ${runs} runs each, interleaved (median, min–max)`)
  console.log(`${"variant".padEnd(40)} ${"→ 1st request ms".padStart(18)} ${"cpu ms (whole)".padStart(16)} ${"sent".padStart(6)}`)
  for (const row of rows) {
    console.log(
      `${row.name.padEnd(40)} ${`${median(row.first).toFixed(0)} (${spread(row.first)})`.padStart(18)} ${
        `${median(row.cpu).toFixed(0)} (${spread(row.cpu)})`.padStart(16)
      } ${String(row.messages).padStart(6)}`
    )
  }
}

const append = async () => {
  const line = new TextEncoder().encode(
    JSON.stringify({ type: "user", uuid: "u".repeat(36), parentUuid: "p".repeat(36), pad: "x".repeat(400) }) + "\n"
  )
  const n = 200
  const dir = tmp("keel-bench-append-")
  const platform = (file: string) =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      for (let i = 0; i < n; i++) yield* fs.writeFile(file, line, { flag: "a" })
    })
  const appender = TranscriptAppender.make()
  const held = (file: string) =>
    Effect.gen(function*() {
      for (let i = 0; i < n; i++) yield* appender.append(file, line, false)
      yield* appender.sync(file)
    })
  const measure = async (effect: Effect.Effect<void, unknown, FileSystem.FileSystem>) => {
    const cpu = process.cpuUsage()
    const started = performance.now()
    await Effect.runPromise(Effect.provide(effect, NodeContext.layer))
    const used = process.cpuUsage(cpu)
    return { wall: (performance.now() - started) * 1000 / n, cpu: (used.user + used.system) / n }
  }
  const a: Array<{ wall: number; cpu: number }> = []
  const b: Array<{ wall: number; cpu: number }> = []
  for (let r = 0; r < runs; r++) {
    a.push(await measure(platform(path.join(dir, `platform-${r}.jsonl`))))
    b.push(await measure(held(path.join(dir, `held-${r}.jsonl`))))
  }
  console.log(`append of a ${line.length}-byte line, ${runs} interleaved runs of ${n} (median µs per append)`)
  console.log(`  platform writeFile "a"   wall ${median(a.map((x) => x.wall)).toFixed(1)}   cpu ${median(a.map((x) => x.cpu)).toFixed(1)}`)
  console.log(`  TranscriptAppender       wall ${median(b.map((x) => x.wall)).toFixed(1)}   cpu ${median(b.map((x) => x.cpu)).toFixed(1)}`)
}

for (const mode of modes) {
  if (mode === "append") await append()
  else if (mode === "loop") await loop()
  else if (mode === "resume") await resume()
  else throw new Error(`unknown mode ${mode}`)
}
