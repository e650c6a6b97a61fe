/**
 * The processes the bench table measures and how they are spawned: the built `keel` (bin/keel.js,
 * which loads the esbuild bundle), the raw-SDK script and the `node:http` floor script
 * (bench/scripts), each started with this `node` (no `/usr/bin/env` lookup, the same for all) in a
 * given working directory with a clean environment pointing at the bench server.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"

const root = path.resolve(import.meta.dirname, "..", "..")

/** The built keel binary, as npm links it (node_modules/.bin/keel → @keel/cli/bin/keel.js). */
export const keelBin = fs.realpathSync(path.join(root, "node_modules", ".bin", "keel"))
/** A bench script by file name (bench/scripts/...). */
export const script = (name: string): string => path.join(root, "bench", "scripts", name)

/** Who is measured: keel, the raw SDK loop, the floor; the order of the table's columns. */
export type Client = "keel" | "raw" | "floor"
export const clients: ReadonlyArray<Client> = ["keel", "raw", "floor"]

/** The command line of `client` answering `prompt` with `model` (keel: `keel -p`, then `extra` flags). */
export const argsFor = (client: Client, model: string, prompt = "hi", extra: ReadonlyArray<string> = []): Array<string> =>
  client === "keel"
    ? [keelBin, "-p", prompt, "--model", model, ...extra]
    : [script(client === "raw" ? "raw-sdk.mjs" : "floor.mjs"), model, prompt]

/** Where and against what a process runs. */
export interface Setting {
  readonly url: string
  readonly cwd: string
  /** The captured request the raw and floor scripts send (bench/scripts/request.mjs). */
  readonly request?: string
  readonly env?: Record<string, string>
}

/** What a process used, as it reported at exit (bench/scripts/usage.cjs). */
export interface Usage {
  /** Peak resident set size, MB. */
  readonly maxRssMB: number
  /** CPU time, user + system, ms: a figure the machine's other load disturbs much less than wall time. */
  readonly cpuMs: number
}

/** A finished process: spawn → exit in ms, when it was spawned (epoch ms), its output, its usage. */
export interface Exit {
  readonly ms: number
  readonly usage: Usage
  readonly spawnedAt: number
  readonly stdoutBytes: number
  readonly stdout: string
  readonly stderr: string
}

/** The folder all of a bench run's temporary folders go in (removed by {@link cleanup}). */
export const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "keel-table-"))
/** A fresh folder in {@link scratch}. */
export const tmp = (prefix: string): string => fs.mkdtempSync(path.join(scratch, prefix))
/** Removes {@link scratch}. */
export const cleanup = (): void => fs.rmSync(scratch, { recursive: true, force: true })

/**
 * The environment of a measured process: this one's without `ANTHROPIC_*`, `KEEL_*` and
 * `NODE_OPTIONS`, plus the server's URL, a key, a fresh `KEEL_HOME` and `CLAUDE_CONFIG_DIR` (no
 * user settings, sessions saved in a temp folder), and `setting.env`.
 */
export const envFor = (setting: Setting): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith("ANTHROPIC_") || k.startsWith("KEEL_") || k === "NODE_OPTIONS") continue
    env[k] = v
  }
  return {
    ...env,
    ANTHROPIC_BASE_URL: setting.url,
    ANTHROPIC_API_KEY: "bench-key",
    KEEL_HOME: tmp("home-"),
    CLAUDE_CONFIG_DIR: tmp("claude-"),
    ...(setting.request !== undefined ? { BENCH_REQUEST: setting.request } : {}),
    ...setting.env
  }
}

/**
 * Spawns `node ...args` and waits for its exit; fails unless it exits 0 with nothing on stderr but
 * `bench-t0=` lines (a warning would mean the run took a path other than the one measured). Keeps
 * the first 64 KB of stdout.
 */
export const run = (args: ReadonlyArray<string>, setting: Setting): Promise<Exit> =>
  new Promise((resolve, reject) => {
    const usageFile = path.join(tmp("usage-"), "usage.json")
    const env = { ...envFor(setting), BENCH_USAGE_FILE: usageFile }
    const spawnedAt = performance.timeOrigin + performance.now()
    const t0 = performance.now()
    const child = spawn(process.execPath, ["--require", script("usage.cjs"), ...args], {
      cwd: setting.cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdoutBytes = 0
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => {
      stdoutBytes += d.length
      if (stdout.length < 65536) stdout += d.toString("utf8")
    })
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")))
    child.on("error", reject)
    child.on("exit", (code, signal) => {
      const ms = performance.now() - t0
      // Let the pipes drain before reporting (the time is already taken).
      child.on("close", () => {
        const complaint = stderr.split("\n").filter((l) => l !== "" && !l.startsWith("bench-t0=")).join("\n")
        if (code !== 0 || complaint !== "") {
          reject(new Error(`${args.map((a) => path.basename(a)).join(" ")} exited with ${code ?? signal}:\n${stderr.slice(0, 2000)}`))
        } else {
          const u = JSON.parse(fs.readFileSync(usageFile, "utf8"))
          resolve({ ms, usage: { maxRssMB: u.maxRSS / 1024, cpuMs: (u.user + u.system) / 1000 }, spawnedAt, stdoutBytes, stdout, stderr })
        }
      })
    })
  })
