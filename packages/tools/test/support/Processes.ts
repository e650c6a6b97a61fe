/**
 * Process checks for tests that must leave no process behind.
 */

/** Whether a process is alive (signal 0 reaches it). */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
