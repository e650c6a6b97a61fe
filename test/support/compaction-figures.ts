/**
 * Figures of one compaction, for comparing builds: a session reads five files of ~20,000 characters,
 * then `/compact` runs on it (`--resume`), then one more prompt. Prints, as JSON:
 *
 * - `postTokens`: the compacted conversation's size as the boundary reports it (`post_tokens`);
 * - `nextRequestTokens`: the next request's messages, a token per four characters of their JSON;
 * - `summaryBytes` / `summaryUncachedBytes`: the summary request's `[tools, system, messages]` JSON,
 *   and the part of it not read from the cache: all of it without a breakpoint, else what follows
 *   the bytes it shares with the request before it (which wrote that prefix to the cache).
 *
 *   npx tsx test/support/compaction-figures.ts [path/to/keel/bin/keel.js]
 *
 * The binary defaults to this checkout's (`npm run build` first).
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FakeAnthropic from "./FakeAnthropic.js"
import { keel } from "./KeelProcess.js"

const FILES = ["one.ts", "two.ts", "three.ts", "four.ts", "five.ts"]

/** ~20,000 characters of distinct lines. */
const fileText = (tag: string) =>
  Array.from({ length: 200 }, (_, i) => `// ${tag} ${i + 1}: `.padEnd(99, "const value = compute(input) ") + "\n").join("")

const run = (bin: string, args: ReadonlyArray<string>, cwd: string, env: NodeJS.ProcessEnv) =>
  new Promise<Array<any>>((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let err = ""
    child.stdout.on("data", (d) => (out += d))
    child.stderr.on("data", (d) => (err += d))
    child.on("close", (code) =>
      code === 0 ? resolve(out.trim().split("\n").map((l) => JSON.parse(l))) : reject(new Error(`exit ${code}: ${err}`)))
  })

/** The API's cache prefix order: tools, system, messages. */
const prefixOf = (body: any) => JSON.stringify([body.tools ?? null, body.system ?? null, body.messages])

const commonPrefix = (a: string, b: string) => {
  let i = 0
  while (i < a.length && i < b.length && a[i] === b[i]) i++
  return i
}

/** A summary request, by its instruction (this build's wording, or the one before it). */
const isSummary = (body: any) =>
  /create a detailed summary|write a summary of this conversation/.test(JSON.stringify(body.messages.at(-1)))

export const main = async (bin: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keel-figures-"))
  for (const name of FILES) fs.writeFileSync(path.join(dir, name), fileText(name))
  let reads = 0
  const server = await FakeAnthropic.start([], {
    fallback: (body: any) => {
      const usage = { usage: { input_tokens: Math.ceil(prefixOf(body).length / 4), output_tokens: 40 } }
      if (isSummary(body)) {
        return FakeAnthropic.textReply(
          "<analysis>Went over the five reads.</analysis>\n<summary>1. Primary Request and Intent: read five files.\n" +
            "3. Files and Code Sections: one.ts … five.ts, read whole.</summary>",
          usage
        )
      }
      const file = FILES[reads++]
      return file !== undefined
        ? FakeAnthropic.toolUseReply([{ name: "Read", input: { file_path: path.join(dir, file) } }], usage)
        : FakeAnthropic.textReply("Done.", usage)
    }
  })
  const env = {
    ...process.env,
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: "sk-test",
    KEEL_HOME: path.join(dir, ".keel-home"),
    HOME: path.join(dir, ".home")
  }
  try {
    const common = ["--output-format", "stream-json", "--verbose", "--model", "claude-sonnet-4-6"]
    const first = await run(bin, ["-p", "read the five files", "--allowedTools", "Read", ...common], dir, env)
    const sessionId = first[0].session_id
    const compact = await run(bin, ["--resume", sessionId, "-p", "/compact", ...common], dir, env)
    await run(bin, ["--resume", sessionId, "-p", "go on", ...common], dir, env)
    const bodies = server.requests.map((r) => r.body)
    const at = bodies.findIndex(isSummary)
    const summary = prefixOf(bodies[at])
    const shared = summary.includes("cache_control") ? commonPrefix(summary, prefixOf(bodies[at - 1])) : 0
    const boundary = compact.find((m) => m.subtype === "compact_boundary")
    return {
      postTokens: boundary?.compact_metadata.post_tokens,
      nextRequestTokens: Math.ceil(JSON.stringify(bodies.at(-1).messages).length / 4),
      summaryBytes: summary.length,
      summaryUncachedBytes: summary.length - shared
    }
  } finally {
    await server.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv[2] ?? keel).then((figures) => console.log(JSON.stringify(figures)), (e) => {
    console.error(e)
    process.exit(1)
  })
}
