import * as path from "node:path"
import { defineConfig } from "vitest/config"

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
    // (isolate: false would save another minute of module loading, but a test leaves work running
    // that keeps its worker from terminating at the end of the run; not found yet.)
    maxWorkers: 3,
    minWorkers: 1,
    // SkipReport: one line per tool whose tests were skipped for want of it (`[needs rg]`).
    reporters: ["default", "json", "./test/support/SkipReport.ts"],
    outputFile: { json: ".vitest-report.json" }
  }
})
