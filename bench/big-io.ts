/**
 * Big inputs and outputs: the peak resident memory (`/usr/bin/time -v`, "Maximum resident set
 * size") of the built `keel -p` when the loopback fake of the Messages API asks for
 *
 * - `Read` of lines 1-5 (`limit: 5`) of a 600 MB text log, and
 * - `Bash` printing 250 MB (`head -c 250000000 /dev/zero | tr '\0' 'a' | fold -w 100`),
 *
 * each followed by a text answer. It prints, for each, the exit code, the peak RSS in MB, the wall
 * time, and the first characters of the tool result the model got back.
 *
 * Run: npm run bench:bigio   (KEEL_BENCH_DIR=folder to keep the 600 MB log there between runs)
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FakeAnthropic from "../test/support/FakeAnthropic.js"
import { envFor, keel } from "../test/support/KeelProcess.js"

const MB = 1_000_000

/** A text log of `bytes` bytes (numbered lines of 100 characters), written once in 8 MB chunks. */
const bigLog = (file: string, bytes: number): void => {
  if (fs.existsSync(file) && fs.statSync(file).size === bytes) return
  const fd = fs.openSync(file, "w")
  const line = (n: number) => `${String(n).padStart(10, "0")} INFO request served in 12 ms ${"x".repeat(56)}\n`
  let written = 0
  let n = 1
  while (written < bytes) {
    const parts: Array<string> = []
    let size = 0
    while (size < 8 * 1_048_576 && written + size < bytes) {
      const l = line(n++)
      parts.push(l)
      size += l.length
    }
    const chunk = Buffer.from(parts.join("")).subarray(0, bytes - written)
    fs.writeSync(fd, chunk)
    written += chunk.length
  }
  fs.closeSync(fd)
}

interface Figure {
  readonly code: number | null
  readonly rssMb: number
  readonly seconds: number
  readonly result: string
}

/** The first tool_result the fake received, as text. */
const firstResult = (server: FakeAnthropic.FakeAnthropic): string => {
  for (const r of server.requests) {
    for (const m of (r.body as any).messages ?? []) {
      if (!Array.isArray(m.content)) continue
      for (const b of m.content) {
        if (b.type === "tool_result") return typeof b.content === "string" ? b.content : JSON.stringify(b.content)
      }
    }
  }
  return "(no tool result reached the model)"
}

/** `keel -p go` under `/usr/bin/time -v` against a fake asking for `call`, then answering. */
const measure = async (call: FakeAnthropic.ToolCall, cwd: string): Promise<Figure> => {
  const server = await FakeAnthropic.start([FakeAnthropic.toolUseReply([call]), FakeAnthropic.textReply("Done.")])
  try {
    const env: Record<string, string | undefined> = { ...process.env }
    for (const k of Object.keys(env)) if (k.startsWith("ANTHROPIC_") || k.startsWith("KEEL_")) delete env[k]
    Object.assign(env, envFor(server), { KEEL_HOME: fs.mkdtempSync(path.join(os.tmpdir(), "keel-home-")) })
    const started = Date.now()
    const child = spawn("/usr/bin/time", ["-v", keel, "-p", "go", "--allowedTools", "Bash"], {
      cwd,
      env,
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    child.stderr.on("data", (d) => (stderr += d))
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
    const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr)
    return {
      code,
      rssMb: rss ? Math.round(Number(rss[1]) / 1024) : NaN,
      seconds: (Date.now() - started) / 1000,
      result: firstResult(server)
    }
  } finally {
    await server.close()
  }
}

const show = (name: string, f: Figure) =>
  console.log(
    `${name.padEnd(36)} exit ${f.code}  peak RSS ${String(f.rssMb).padStart(5)} MB  ${f.seconds.toFixed(1).padStart(6)} s\n` +
      `  result: ${JSON.stringify(f.result.slice(0, 160))}${f.result.length > 160 ? ` … (${f.result.length} chars)` : ""}`
  )

const main = async () => {
  // The project folder (Read reads inside it), kept when KEEL_BENCH_DIR names it.
  const dir = process.env.KEEL_BENCH_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), "keel-bench-bigio-"))
  const log = path.join(dir, "app.log")
  bigLog(log, 600 * MB)
  show("Read 600 MB log, limit 5", await measure({ name: "Read", input: { file_path: log, limit: 5 }, id: "toolu_read" }, dir))
  show(
    "Bash, 250 MB of output",
    await measure({
      name: "Bash",
      input: { command: "head -c 250000000 /dev/zero | tr '\\0' 'a' | fold -w 100" },
      id: "toolu_bash"
    }, dir)
  )
  if (process.env.KEEL_BENCH_DIR === undefined) fs.rmSync(dir, { recursive: true, force: true })
}

await main()
