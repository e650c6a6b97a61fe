/**
 * Prompt size: the system prompt and tool definitions the built `keel -p` sends, measured from the
 * request body the loopback fake of the Messages API receives (test/support/FakeAnthropic.ts), in a
 * fresh git repository with one commit and no instruction files. Characters, and tokens at the
 * estimate `TokenEstimate` uses (a token per four characters); the system prompt split into its
 * stable (cached, the same in every session) and dynamic parts, the tools as JSON and by description.
 *
 * Run: npm run bench:prompt   (KEEL_BENCH_MODEL to measure with another model; default claude-sonnet-4-6)
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { CHARS_PER_TOKEN } from "../packages/core/src/context/TokenEstimate.js"
import * as FakeAnthropic from "../test/support/FakeAnthropic.js"
import { envFor, run, workdir } from "../test/support/KeelProcess.js"

const model = process.env.KEEL_BENCH_MODEL ?? "claude-sonnet-4-6"

const main = async () => {
  const dir = fs.realpathSync(workdir())
  const git = (...args: Array<string>) =>
    execFileSync("git", ["-c", "user.name=Bench", "-c", "user.email=bench@example.com", ...args], { cwd: dir })
  git("init", "-q", "-b", "main")
  git("add", "README.md")
  git("commit", "-q", "-m", "the README")
  const server = await FakeAnthropic.start([FakeAnthropic.textReply("ok", { model })])
  const r = await run(["-p", "hi", "--model", model], { env: envFor(server), cwd: dir })
  await server.close()
  if (r.code !== 0) throw new Error(`keel exited ${r.code}: ${r.stderr}`)
  const body = server.requests[0]!.body
  const blocks: Array<{ text: string; cache_control?: unknown }> = typeof body.system === "string"
    ? [{ text: body.system }]
    : body.system
  const stableCount = blocks.findIndex((b) => b.cache_control !== undefined) + 1
  const chars = (texts: ReadonlyArray<string>) => texts.reduce((n, t) => n + t.length, 0)
  const row = (what: string, n: number) =>
    `${what.padEnd(34)}${String(n).padStart(8)} chars ${String(Math.ceil(n / CHARS_PER_TOKEN)).padStart(7)} tokens`
  const tools: Array<{ name: string; description?: string }> = body.tools ?? []
  console.log(`keel -p, ${model}, in ${path.basename(dir)} (a git repository, no instruction files)`)
  console.log(row("system prompt", chars(blocks.map((b) => b.text))))
  console.log(row("  stable part (base instructions)", chars(blocks.slice(0, stableCount).map((b) => b.text))))
  console.log(row("  dynamic part (environment, git)", chars(blocks.slice(stableCount).map((b) => b.text))))
  console.log(row(`tools (${tools.length}), as JSON`, JSON.stringify(tools).length))
  console.log(row("  their descriptions", chars(tools.map((t) => t.description ?? ""))))
  for (const t of tools) console.log(row(`    ${t.name}`, (t.description ?? "").length))
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
