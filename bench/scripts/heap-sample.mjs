/**
 * A preload that samples every allocation of a whole process (objects the collector freed counted
 * too, unlike `node --heap-prof`) and writes the profile to KEEL_HEAP_OUT at exit, for
 * bench/scripts/heap-top.mjs. KEEL_HEAP_INTERVAL: bytes between samples (default 4096).
 *
 * Run: KEEL_HEAP_OUT=/tmp/loop.heapprofile node --import ./bench/scripts/heap-sample.mjs \
 *        packages/cli/bin/keel.js -p hi --model bench-loop-200 --max-turns 300
 */
import * as fs from "node:fs"
import * as inspector from "node:inspector"

const session = new inspector.Session()
session.connect()
session.post("HeapProfiler.enable")
session.post("HeapProfiler.startSampling", {
  samplingInterval: Number(process.env.KEEL_HEAP_INTERVAL ?? 4096),
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true
})
let written = false
const write = () => {
  if (written) return
  written = true
  // The inspector answers synchronously within the same thread.
  session.post("HeapProfiler.stopSampling", (error, result) => {
    if (error === null) fs.writeFileSync(process.env.KEEL_HEAP_OUT ?? "process.heapprofile", JSON.stringify(result.profile))
  })
}
const exit = process.exit
process.exit = function(code) {
  write()
  return exit.call(process, code)
}
process.on("beforeExit", write)
