/**
 * Preload (`node --import ./test/support/exit-with-parent.mjs ...`): ending a helper process with
 * what started it. A process whose parent dies lives on, adopted by
 * init: `npm run fake-api` is npm, a shell and node, and killing npm leaves the shell and node
 * behind (npm hands SIGTERM to the shell, which does not hand it on; SIGKILL reaches no one).
 * This preload notes the process's ancestors as they are when node starts (before any slow
 * compiling: a parent killed during it counts) and polls them; once any has gone it sends the
 * process SIGTERM, which ends it or lets it close what it serves. On Linux it watches every ancestor
 * below init, known by pid and start time (a reused pid is not taken for the old process);
 * elsewhere the parent, through `process.ppid`.
 */
import * as fs from "node:fs"

/**
 * `/proc/PID/stat` as its parent, start time (clock ticks after boot) and whether it is a zombie;
 * undefined when the process is gone (or there is no /proc).
 */
const stat = (pid) => {
  let text
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
  } catch {
    return undefined
  }
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so fields count from the last ")".
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ")
  return { ppid: Number(fields[1]), start: fields[19] ?? "", zombie: fields[0] === "Z" }
}

/** The ancestors of this process below init, nearest first, each with its start time. */
const ancestors = () => {
  const chain = []
  for (let pid = process.ppid; pid > 1 && chain.length < 64;) {
    const s = stat(pid)
    if (s === undefined) break
    chain.push({ pid, start: s.start })
    pid = s.ppid
  }
  return chain
}

const parent = process.ppid
const chain = stat(process.pid) === undefined ? [] : ancestors()
const gone = () =>
  process.ppid !== parent ||
  chain.some((a) => {
    const s = stat(a.pid)
    return s === undefined || s.zombie || s.start !== a.start
  })
const timer = setInterval(() => {
  if (!gone()) return
  clearInterval(timer)
  process.kill(process.pid, "SIGTERM")
}, 250)
// The watch alone does not keep the process alive.
timer.unref()
