import * as path from "node:path"
import { defineConfig } from "vitest/config"

const src = (pkg: string) => path.resolve(import.meta.dirname, "packages", pkg, "src", "index.ts")

export default defineConfig({
  resolve: {
    alias: {
      "@keel/core": src("core"),
      "@keel/tools": src("tools"),
      "@keel/cli": src("cli")
    }
  },
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    // One module graph per worker, not per file: Effect's modules take seconds to load, and no test
    // relies on module state (each builds its own layers). 3 workers on 2 cores: the end-to-end
    // files mostly wait on the keel processes they spawn. Together: 7.5 min -> 2 min.
    isolate: false,
    maxWorkers: 3,
    minWorkers: 1,
    reporters: ["default", "json"],
    outputFile: { json: ".vitest-report.json" }
  }
})
