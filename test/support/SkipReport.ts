/**
 * A vitest reporter that says, at the end of a run, which tests did not run for want of a tool:
 * a test or suite whose name carries `[needs X]` and was skipped counts under X, so that
 * `npm test` on a machine without X says what it did not check instead of passing in silence.
 */
import * as path from "node:path"
import type { Reporter, TestModule } from "vitest/node"

/** `[needs rg]` in a test's full name: the tool it needs. */
const NEED = /\[needs ([^\]]+)\]/

/** Counts the skipped `[needs X]` tests by X and prints one line for each X after the run. */
export default class SkipReport implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const needs = new Map<string, { count: number; files: Set<string> }>()
    for (const module of testModules) {
      for (const test of module.children.allTests("skipped")) {
        const need = NEED.exec(test.fullName)?.[1]
        if (need === undefined) continue
        const entry = needs.get(need) ?? { count: 0, files: new Set<string>() }
        entry.count++
        entry.files.add(path.relative(process.cwd(), module.moduleId))
        needs.set(need, entry)
      }
    }
    for (const [need, { count, files }] of needs) {
      process.stdout.write(
        `\n  NOT RUN  ${count} tests need ${need}, which is not on this machine: ${[...files].join(", ")}\n`
      )
    }
  }
}
