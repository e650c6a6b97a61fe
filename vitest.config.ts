import * as path from "node:path"
import { defineConfig } from "vitest/config"
import LongFirst from "./test/support/LongFirst.js"

const src = (pkg: string, entry = "index.ts") => path.resolve(import.meta.dirname, "packages", pkg, "src", entry)

export default defineConfig({
  resolve: {
    // Exact names: `@keel/core` must not also rewrite `@keel/core/testing`.
    alias: [
      { find: /^@keel\/core$/, replacement: src("core") },
      { find: /^@keel\/core\/testing$/, replacement: src("core", "testing/index.ts") },
      { find: /^@keel\/tools$/, replacement: src("tools") },
      { find: /^@keel\/tools\/mcp$/, replacement: src("tools", "mcp.ts") },
      { find: /^@keel\/cli$/, replacement: src("cli") }
    ]
  },
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    // 3 workers on 2 cores: the end-to-end files mostly wait on the keel processes they spawn.
    maxWorkers: 3,
    // As many workers kept as started: with shared workers, tinypool ends a worker that goes idle
    // while more than minWorkers remain, and that end can race the pool's own ending of it (an
    // unhandled "Terminating worker thread" that made vitest exit 1 before its summary).
    minWorkers: 3,
    // Workers run file after file: Effect, the SDK and TypeScript load once per worker instead of
    // once per file (a fresh process per file spent ~540 s of the suite's ~1,800 worker-seconds
    // importing). The setup file gives each file fresh copies of the repository's own modules.
    isolate: false,
    setupFiles: ["./test/support/fresh-modules.ts"],
    // Longest files first (end-to-end files first on a clean clone, which has no timings yet).
    sequence: { sequencer: LongFirst },
    // SkipReport: one line per tool whose tests were skipped for want of it (`[needs rg]`).
    reporters: ["default", "json", "./test/support/SkipReport.ts"],
    outputFile: { json: ".vitest-report.json" }
  }
})
