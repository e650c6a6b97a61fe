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
    reporters: ["default", "json"],
    outputFile: { json: ".vitest-report.json" }
  }
})
