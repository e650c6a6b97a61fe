/**
 * End to end: the README's quick start, as written. Its shell blocks (before "## What Keel is") are
 * read from README.md: the first must still be the two commands (install and run Keel, run every
 * test), and the no-key block runs top to bottom in one `bash`, in the repository: the fake API
 * starts in the background from `eval "$(npm run --silent fake-api -- --env)"`, its exports reach
 * the next lines, `npx keel -p` makes the Read round trip, `npx keel` (the REPL, reading a piped
 * prompt) makes it again, and `kill $KEEL_FAKE_API_PID` stops the fake. The fake `--env` starts
 * outlives the npm that started it and is bounded: it stops by itself after its idle limit.
 *
 * The block's `npm ci` line is left out: the repository is installed already (its node_modules is
 * the one these tests run from; a second install here would rebuild it under the running suite).
 */
import { assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pretrust } from "./support/KeelProcess.js"
import { listening } from "./support/Ports.js"

const root = path.resolve(import.meta.dirname, "..")

/** The `sh` blocks of README.md's quick start (the text before "## What Keel is"), as lines. */
const quickStartBlocks = (): Array<Array<string>> => {
  const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")
  const top = readme.slice(0, readme.indexOf("\n## What Keel is"))
  return [...top.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!.split("\n").filter((l) => l.trim() !== ""))
}

/** Whether a process with this id is alive (a zombie, ended but not yet reaped, is not). */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z"
  } catch {
    return process.platform !== "linux"
  }
}

/** Runs `script` with `bash -euo pipefail` in the repository (at most 150 s), `stdin` piped in; its exit and output. */
const bash = (script: string, env: NodeJS.ProcessEnv, stdin: string) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn("bash", ["-euo", "pipefail", "-c", script], {
      cwd: root,
      env,
      stdio: ["pipe", "pipe", "pipe"],
      timeout: 150_000
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.stdin.end(stdin)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

describe("README quick start", () => {
  it("begins with the two commands: install and run Keel, then every test", () => {
    assert.deepStrictEqual(quickStartBlocks()[0], [
      "npm ci && npx keel -p \"read README.md and summarise it\"",
      "npm test"
    ])
  })

  it("runs without a key, top to bottom in one shell: fake API, keel -p, the REPL, kill", { timeout: 180_000 }, async () => {
    const block = quickStartBlocks().find((lines) => lines.some((l) => l.includes("fake-api")))
    assert.isDefined(block, "a quick-start block starts the fake API")
    const lines = block!.filter((l) => !/^npm ci(\s|$)/.test(l))
    assert.strictEqual(lines.length, block!.length - 1, "the block installs first with `npm ci` (left out here)")

    // What a fresh shell has: no Anthropic or Keel variables; Keel's home and Claude's settings in
    // temporary folders, the repository trusted there (as a user who answered the REPL's question).
    const env: NodeJS.ProcessEnv = { ...process.env }
    for (const k of Object.keys(env)) if (k.startsWith("ANTHROPIC_") || k.startsWith("KEEL_")) delete env[k]
    env.KEEL_HOME = fs.mkdtempSync(path.join(os.tmpdir(), "keel-home-"))
    env.CLAUDE_CONFIG_DIR = fs.mkdtempSync(path.join(os.tmpdir(), "keel-claude-home-"))
    pretrust(env.KEEL_HOME, root)

    // The trap (not a README line) reports what the eval exported, however the script ends, so that
    // the test can check and stop what it started.
    const report = 'trap \'echo "exported: ${ANTHROPIC_BASE_URL:-} ${ANTHROPIC_API_KEY:-} ${KEEL_FAKE_API_PID:-}" >&2\' EXIT'
    const run = await bash([report, ...lines].join("\n"), env, "read README.md and summarise it\n")
    const exported = /^exported: (\S*) (\S*) (\S*)$/m.exec(run.stderr)
    const pid = Number(exported?.[3])
    try {
      assert.strictEqual(run.code, 0, `the block failed:\n${run.stdout}\n${run.stderr}`)
      assert.match(exported![1]!, /^http:\/\/127\.0\.0\.1:\d+$/, "ANTHROPIC_BASE_URL is exported")
      assert.strictEqual(exported![2], "fake", "ANTHROPIC_API_KEY is exported")
      assert.isTrue(Number.isInteger(pid) && pid > 0, `KEEL_FAKE_API_PID is exported: ${exported?.[3]}`)
      // keel -p answers first; the REPL then shows the call and the same answer.
      const answers = run.stdout.match(/README\.md summary: # Keel \(\d+ lines read\)/g) ?? []
      assert.strictEqual(answers.length, 2, `keel -p and the REPL each make the Read round trip:\n${run.stdout}`)
      assert.include(run.stdout.slice(run.stdout.indexOf(answers[0]!) + answers[0]!.length), "● Read(README.md)")
      assert.include(run.stderr, "fake-api: serving", "the fake says where it runs")
      // The block's last line stopped the fake.
      const port = Number(new URL(exported![1]!).port)
      const deadline = Date.now() + 10_000
      while ((alive(pid) || (await listening(port))) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      assert.isFalse(alive(pid), "kill $KEEL_FAKE_API_PID ended the fake")
      assert.isFalse(await listening(port), "nothing listens on its port")
    } finally {
      if (Number.isInteger(pid) && pid > 0 && alive(pid)) process.kill(pid, "SIGKILL")
    }
  })

  it("the fake that --env starts outlives its npm, and stops by itself once idle", { timeout: 120_000 }, async () => {
    // 0.1 idle minutes: 6 s without a request.
    const run = await bash("npm run --silent fake-api -- --env --idle-minutes 0.1", { ...process.env }, "")
    const url = /^export ANTHROPIC_BASE_URL=(\S+) ANTHROPIC_API_KEY=fake$/m.exec(run.stdout)?.[1]
    const pid = Number(/^export KEEL_FAKE_API_PID=(\d+)$/m.exec(run.stdout)?.[1])
    try {
      assert.strictEqual(run.code, 0, run.stdout + run.stderr)
      assert.isDefined(url, `the export lines:\n${run.stdout}`)
      assert.include(run.stderr, "it stops after 0.1 idle minutes")
      const port = Number(new URL(url!).port)
      assert.isTrue(await listening(port), "it serves after npm has exited")
      const started = Date.now()
      while ((alive(pid) || (await listening(port))) && Date.now() - started < 60_000) {
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
      assert.isFalse(alive(pid), "it stopped once idle")
      assert.isFalse(await listening(port), "nothing listens on its port")
    } finally {
      if (Number.isInteger(pid) && pid > 0 && alive(pid)) process.kill(pid, "SIGKILL")
    }
  })
})
