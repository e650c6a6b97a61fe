/**
 * Summarises a V8 sampling heap profile (`.heapprofile`, from bench/turn-overhead.ts with
 * KEEL_HEAP_PROFILE, DevTools, or `HeapProfiler.stopSampling`) by allocating function: bytes
 * allocated in each function itself (self) and in it and all it called (inclusive), in KB divided by
 * DIV (the number of turns or rounds profiled, for a figure per turn).
 *
 * Run: node bench/scripts/heap-top.mjs FILE [nSelf=30] [nInclusive=60] [DIV=1]
 */
import * as fs from "node:fs"

const [file, nSelf = "30", nIncl = "60", div = "1"] = process.argv.slice(2)
const profile = JSON.parse(fs.readFileSync(file, "utf8"))
const root = process.cwd() + "/"
const where = (url) => url.replace(/^file:\/\//, "").replace(root, "").replace(/.*\/node_modules\//, "")
const key = (n) => `${n.callFrame.functionName || "(anon)"} ${where(n.callFrame.url)}:${n.callFrame.lineNumber}`
const self = new Map()
const inclusive = new Map()
let total = 0
const onStack = new Set()
const walk = (node) => {
  const k = key(node)
  total += node.selfSize
  self.set(k, (self.get(k) ?? 0) + node.selfSize)
  const outermost = !onStack.has(k)
  if (outermost) onStack.add(k)
  let below = node.selfSize
  for (const child of node.children) below += walk(child)
  // A recursive function counts once, at its outermost frame.
  if (outermost) {
    inclusive.set(k, (inclusive.get(k) ?? 0) + below)
    onStack.delete(k)
  }
  return below
}
walk(profile.head)
const kb = (bytes) => (bytes / 1024 / Number(div)).toFixed(1).padStart(9)
const top = (m, n) => [...m].sort((a, b) => b[1] - a[1]).slice(0, Number(n))
console.log(`total KB ${kb(total)}`)
console.log("--- self")
for (const [k, b] of top(self, nSelf)) console.log(kb(b), k)
console.log("--- inclusive")
for (const [k, b] of top(inclusive, nIncl)) console.log(kb(b), k)
