/**
 * Starting the benchmarks' fake API (bench/serve.ts) in a child process. On a machine with taskset
 * and 2+ cores, this process is pinned to core 0 and the server to core 1, so that neither migrates
 * onto the other's core mid-run (the largest source of noise here).
 */
import { spawn, spawnSync } from "node:child_process"
import { once } from "node:events"
import { cpus } from "node:os"
import * as readline from "node:readline"

/** A running bench server: its base URL, whether the processes are pinned, and how to stop it. */
export interface BenchServer {
  readonly url: string
  readonly pinned: boolean
  readonly stop: () => void
}

/** Starts the server and waits for its `ANTHROPIC_BASE_URL=...` line; `pin: false` leaves both unpinned. */
export const start = async (options: { readonly pin?: boolean } = {}): Promise<BenchServer> => {
  const pinned = options.pin !== false && cpus().length >= 2 && spawnSync("taskset", ["-p", "-c", "0", String(process.pid)]).status === 0
  const serverArgs = [process.execPath, "--import", "tsx", new URL("./serve.ts", import.meta.url).pathname]
  const server = pinned
    ? spawn("taskset", ["-c", "1", ...serverArgs], { stdio: ["ignore", "pipe", "inherit"] })
    : spawn(serverArgs[0]!, serverArgs.slice(1), { stdio: ["ignore", "pipe", "inherit"] })
  const [first] = (await once(readline.createInterface({ input: server.stdout! }), "line")) as [string]
  return { url: first.split("=")[1]!, pinned, stop: () => void server.kill("SIGTERM") }
}
