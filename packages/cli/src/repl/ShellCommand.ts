/**
 * `!` shell mode: a line that starts with `!` runs the rest with `/bin/sh -c` in the session's
 * folder, a real process in a group of its own, stopped (the whole group) by Ctrl+C or when its
 * time is up (the Bash tool's: 2 minutes, `KEEL_TOOL_TIMEOUT_MS_BASH` or `KEEL_TOOL_TIMEOUT_MS`
 * change it). Its output is shown, and the command with its output goes to the model with the next
 * prompt, as tagged text before it (`<bash-input>`, `<bash-stdout>`, `<bash-stderr>`, the shape
 * Claude Code gives them), so the model sees what the user ran.
 *
 * @since 0.1.0
 */
import * as childProcess from "node:child_process"

/** How long a command may run by default (the Bash tool's default). @category Constants */
export const DEFAULT_TIMEOUT_MS = 120_000

/** The most characters of each stream kept (the start and the end, the middle cut). @category Constants */
export const MAX_OUTPUT_CHARS = 30_000

/** How a command ended. @category Models */
export interface Outcome {
  readonly stdout: string
  readonly stderr: string
  /** The exit code; `null` when a signal stopped it. */
  readonly code: number | null
  /** Why Keel stopped it, if it did. */
  readonly stopped: "interrupted" | "timeout" | undefined
}

/** A line of the REPL's input as a shell command: the command after `!`, or `undefined`. @category Parsing */
export const commandOf = (text: string): string | undefined => (text.startsWith("!") ? text.slice(1).trim() : undefined)

/** The time limit from the environment (positive integers only), else {@link DEFAULT_TIMEOUT_MS}. @category Constructors */
export const timeoutFrom = (env: Readonly<Record<string, string | undefined>>): number => {
  for (const value of [env.KEEL_TOOL_TIMEOUT_MS_BASH, env.KEEL_TOOL_TIMEOUT_MS]) {
    if (value !== undefined && /^\d+$/.test(value) && Number(value) > 0) return Number(value)
  }
  return DEFAULT_TIMEOUT_MS
}

/** `text` with its middle cut when longer than {@link MAX_OUTPUT_CHARS}. */
const bounded = (text: string): string =>
  text.length <= MAX_OUTPUT_CHARS
    ? text
    : `${text.slice(0, MAX_OUTPUT_CHARS / 2)}\n… ${text.length - MAX_OUTPUT_CHARS} characters cut …\n${text.slice(-MAX_OUTPUT_CHARS / 2)}`

/**
 * Runs `command` in `cwd`; stops it (SIGTERM to its group, SIGKILL a second later) when `signal`
 * aborts or after `timeoutMs`. Never rejects: a command that cannot start ends with its error on stderr.
 *
 * @category Running
 */
export const run = (command: string, cwd: string, timeoutMs: number, signal: AbortSignal): Promise<Outcome> =>
  new Promise((resolve) => {
    let stdout = ""
    let stderr = ""
    let stopped: Outcome["stopped"]
    const child = childProcess.spawn("/bin/sh", ["-c", command], { cwd, detached: true, stdio: ["ignore", "pipe", "pipe"] })
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout = bounded(stdout + d)))
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr = bounded(stderr + d)))
    let killer: NodeJS.Timeout | undefined
    const stop = (why: "interrupted" | "timeout") => {
      if (stopped !== undefined || child.pid === undefined) return
      stopped = why
      const group = (sig: NodeJS.Signals) => {
        try {
          process.kill(-child.pid!, sig)
        } catch {
          // Already gone.
        }
      }
      group("SIGTERM")
      killer = setTimeout(() => group("SIGKILL"), 1_000)
    }
    const timer = setTimeout(() => stop("timeout"), timeoutMs)
    const onAbort = () => stop("interrupted")
    if (signal.aborted) onAbort()
    signal.addEventListener("abort", onAbort, { once: true })
    const finish = (code: number | null, error?: Error) => {
      clearTimeout(timer)
      if (killer !== undefined) clearTimeout(killer)
      signal.removeEventListener("abort", onAbort)
      resolve({ stdout, stderr: error !== undefined ? `${stderr}${error.message}\n` : stderr, code, stopped })
    }
    child.on("error", (error) => finish(null, error))
    child.on("close", (code) => finish(code))
  })

/** What ended a command, for people and the model: `undefined` for a plain exit 0. @category Rendering */
export const ending = (outcome: Outcome, timeoutMs: number): string | undefined =>
  outcome.stopped === "interrupted"
    ? "Interrupted."
    : outcome.stopped === "timeout"
    ? `Stopped after ${timeoutMs < 10_000 ? (timeoutMs / 1000).toFixed(1) : Math.round(timeoutMs / 1000)} s (the time limit).`
    : outcome.code !== 0
    ? `Exit code ${outcome.code ?? "none (killed by a signal)"}.`
    : undefined

/**
 * The command and its output as the model gets them, before the next prompt.
 *
 * @category Rendering
 */
export const context = (command: string, outcome: Outcome, timeoutMs: number): string => {
  const end = ending(outcome, timeoutMs)
  const stdout = outcome.stdout.replace(/\n$/, "")
  const stderr = [outcome.stderr.replace(/\n$/, ""), end].filter((part) => part !== undefined && part !== "").join("\n")
  return `<bash-input>${command}</bash-input>\n<bash-stdout>${stdout}</bash-stdout><bash-stderr>${stderr}</bash-stderr>\n\n`
}

const CONTEXT = /^<bash-input>[\s\S]*?<\/bash-input>\n<bash-stdout>[\s\S]*?<\/bash-stdout><bash-stderr>[\s\S]*?<\/bash-stderr>\n\n/

/** A submitted prompt as the user wrote it: without the shell commands' context put before it. @category Rendering */
export const shown = (text: string): string => {
  let rest = text
  for (let m = CONTEXT.exec(rest); m !== null; m = CONTEXT.exec(rest)) rest = rest.slice(m[0].length)
  return rest
}
