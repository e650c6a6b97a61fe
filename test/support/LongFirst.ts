/**
 * Test file order (vitest.config.ts `sequence.sequencer`): the longest files start first, so the
 * run does not end with one long end-to-end file alone on a worker while the others idle. With
 * durations from vitest's cache of an earlier run (every file timed), vitest's own order (failed
 * first, then longest); without them, as on a clean clone, the end-to-end files (`*.e2e.test.ts`,
 * each spawning `keel` processes, seconds to a minute) before the unit files, larger files first.
 */
import * as path from "node:path"
import { BaseSequencer, type TestSpecification } from "vitest/node"

const e2e = (spec: TestSpecification): boolean => spec.moduleId.endsWith(".e2e.test.ts")

/** Longest first: by cached durations when every file has one, else end-to-end files first. */
export default class LongFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const key = (spec: TestSpecification) => `${spec.project.name}:${path.relative(this.ctx.config.root, spec.moduleId)}`
    if (files.every((spec) => this.ctx.cache.getFileTestResults(key(spec)) !== undefined)) return super.sort(files)
    const size = (spec: TestSpecification) => this.ctx.cache.getFileStats(key(spec))?.size ?? 0
    return [...files].sort((a, b) => Number(e2e(b)) - Number(e2e(a)) || size(b) - size(a))
  }
}
