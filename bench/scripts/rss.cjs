// Preloaded (`node --require`) into a measured process: at exit, writes its peak resident set size
// (process.resourceUsage().maxRSS, in KB) to the file named by $BENCH_RSS_FILE.
const file = process.env.BENCH_RSS_FILE
if (file) process.on("exit", () => require("node:fs").writeFileSync(file, String(process.resourceUsage().maxRSS)))
