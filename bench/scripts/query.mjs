// The embedding client of the bench table: a program that imports `@keel/cli`'s `query()` and runs
// one prompt to its result (every message consumed), as an app embedding Keel does. It prints
// `bench-t0=<epoch ms>` on stderr, taken before the import, so the runner can time import + set-up
// → the first request at the server.
// Usage: node query.mjs <model> [prompt]   (ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY from the env)
import { performance } from "node:perf_hooks"

process.stderr.write(`bench-t0=${performance.timeOrigin + performance.now()}\n`)
const { query } = await import("@keel/cli")
let result
for await (const message of query({ prompt: process.argv[3] ?? "hi", options: { cwd: process.cwd(), model: process.argv[2] } })) {
  if (message.type === "result") result = message
}
if (result === undefined || result.subtype !== "success") throw new Error(`query: ${JSON.stringify(result)}`)
process.stdout.write(result.result + "\n")
