// Preloaded (`node --require`) into every process the bench table measures (keel, raw SDK, floor
// alike, so the cost, well under a millisecond, is the same for all): at exit, writes its peak
// resident set size (KB) and CPU time (user and system, µs) as JSON to the file $BENCH_USAGE_FILE.
const file = process.env.BENCH_USAGE_FILE
if (file) {
  delete process.env.BENCH_USAGE_FILE
  process.on("exit", () => {
    const u = process.resourceUsage()
    require("node:fs").writeFileSync(file, JSON.stringify({ maxRSS: u.maxRSS, user: u.userCPUTime, system: u.systemCPUTime }))
  })
}
