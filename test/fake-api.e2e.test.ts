/**
 * End to end: `npm run fake-api` (the README's loopback API, which .ci/run starts the same way)
 * ends with the process that started it. Killing npm, however (SIGTERM, SIGHUP, or SIGKILL, which
 * npm cannot pass on), leaves no process of it behind and nothing listening on its port.
 */
import { assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as readline from "node:readline"
import { listening } from "./support/Ports.js"

const root = path.resolve(import.meta.dirname, "..")

/** The live (not zombie) processes of a process group, from /proc. */
const groupMembers = (pgid: number): Array<number> =>
  fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).flatMap((name) => {
    try {
      const text = fs.readFileSync(`/proc/${name}/stat`, "utf8")
      const fields = text.slice(text.lastIndexOf(")") + 2).split(" ")
      return fields[0] !== "Z" && Number(fields[2]) === pgid ? [Number(name)] : []
    } catch {
      return [] // gone while listed
    }
  })

/** Polls `check` every 100 ms until it holds or `ms` passed; whether it held. */
const eventually = async (check: () => Promise<boolean> | boolean, ms: number): Promise<boolean> => {
  const deadline = Date.now() + ms
  for (;;) {
    if (await check()) return true
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe.skipIf(process.platform !== "linux")("npm run fake-api [reads /proc: Linux]", () => {
  for (const signal of ["SIGTERM", "SIGHUP", "SIGKILL"] as const) {
    it(`ends with npm: npm killed by ${signal} leaves no process and a closed port`, { timeout: 90_000 }, async () => {
      // A process group of its own, so that whatever npm started can be found and, at the end, killed.
      const npm = spawn("npm", ["run", "fake-api"], { cwd: root, detached: true, stdio: ["ignore", "pipe", "inherit"] })
      const pgid = npm.pid!
      try {
        const url = await new Promise<string>((resolve, reject) => {
          readline.createInterface({ input: npm.stdout }).on("line", (line) => {
            if (line.startsWith("ANTHROPIC_BASE_URL=")) resolve(line.slice("ANTHROPIC_BASE_URL=".length))
          })
          npm.once("exit", (code) => reject(new Error(`npm run fake-api exited early with ${code}`)))
        })
        const port = Number(new URL(url).port)
        assert.isTrue(await listening(port), "it serves before npm is killed")
        assert.isAbove(groupMembers(pgid).length, 1, "npm and the server it started")

        npm.kill(signal)
        const ended = await eventually(async () => groupMembers(pgid).length === 0 && !(await listening(port)), 10_000)
        assert.isTrue(ended, `still running 10 s after npm got ${signal}: ${groupMembers(pgid).join(", ")}`)
      } finally {
        for (const pid of groupMembers(pgid)) process.kill(pid, "SIGKILL")
      }
    })
  }
})
