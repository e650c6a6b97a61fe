/**
 * Driving the real `keel` REPL in a real terminal: tmux, on a socket of its own per terminal, with
 * a fixed size. Tests type into it (`send`, `type`) and read the screen as a person sees it
 * (`screen`), waiting (bounded) for text to appear.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { keel, pretrust } from "./KeelProcess.js"

/** A terminal running a command. */
export interface Terminal {
  /** Sends tmux key names (`Enter`, `C-c`, `Up`, `Tab`, `Escape`) or literal text with `literal`. */
  readonly send: (...keys: ReadonlyArray<string>) => void
  /** Types text literally (no key names). */
  readonly type: (text: string) => void
  /** The visible screen and its scrollback, as text (`escapes`: with colour escape sequences). */
  readonly screen: (options?: { readonly escapes?: boolean }) => string
  /** Waits until the screen matches, up to `timeoutMs` (default 15 s); returns the screen or throws with it. */
  readonly waitFor: (pattern: string | RegExp, timeoutMs?: number) => Promise<string>
  /** Kills the terminal (and what runs in it). */
  readonly kill: () => void
}

const terminals: Array<Terminal> = []

/** Kills every terminal {@link open} started; call it from `afterEach`. */
export const closeTerminals = (): void => {
  for (const t of terminals.splice(0)) t.kill()
}

/** Options of {@link open}. */
export interface OpenOptions {
  readonly cwd: string
  /** The environment of the command: PATH, HOME and TERM are added. */
  readonly env: Record<string, string>
  readonly args?: ReadonlyArray<string>
  readonly columns?: number
  readonly rows?: number
  /** `false`: leave the folder untrusted, so the REPL asks (by default it is marked trusted). */
  readonly trust?: boolean
}

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`

/**
 * Opens a terminal running `keel args` in `cwd` with exactly `env` (plus PATH, HOME, TERM); after
 * keel exits the terminal shows `[keel exited N]` and stays open for inspection.
 */
export const open = (options: OpenOptions): Terminal => {
  const socket = `keel-test-${process.pid}-${Math.random().toString(36).slice(2)}`
  const tmux = (...args: ReadonlyArray<string>): string =>
    execFileSync("tmux", ["-L", socket, "-f", "/dev/null", ...args], { encoding: "utf8" })
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? os.tmpdir(),
    TERM: "xterm-256color",
    LANG: "C.UTF-8",
    ...options.env
  }
  // The folder is trusted (the trust question has its own test), unless the test brings its own list.
  if (options.trust !== false && options.env.KEEL_HOME !== undefined) pretrust(options.env.KEEL_HOME, options.cwd)
  const script = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "keel-tty-")), "run.sh")
  fs.writeFileSync(
    script,
    [
      "#!/bin/sh",
      `cd ${quote(options.cwd)}`,
      `env -i ${Object.entries(env).map(([k, v]) => quote(`${k}=${v}`)).join(" ")} ${quote(keel)} ${
        (options.args ?? []).map(quote).join(" ")
      }`,
      `echo "[keel exited $?]"`,
      "sleep 600",
      ""
    ].join("\n"),
    { mode: 0o755 }
  )
  tmux(
    "new-session",
    "-d",
    "-x",
    String(options.columns ?? 100),
    "-y",
    String(options.rows ?? 40),
    script
  )
  tmux("set-option", "-g", "history-limit", "5000")
  const screen = (o: { readonly escapes?: boolean } = {}) =>
    tmux("capture-pane", "-p", "-J", "-S", "-", ...(o.escapes === true ? ["-e"] : []))
  const terminal: Terminal = {
    send: (...keys) => void tmux("send-keys", ...keys),
    type: (text) => void tmux("send-keys", "-l", text),
    screen,
    waitFor: async (pattern, timeoutMs = 15_000) => {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const text = screen()
        if (typeof pattern === "string" ? text.includes(pattern) : pattern.test(text)) return text
        if (Date.now() > deadline) {
          throw new Error(`the terminal did not show ${String(pattern)} within ${timeoutMs} ms; it shows:\n${text}`)
        }
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    },
    kill: () => {
      try {
        tmux("kill-server")
      } catch {
        // already gone
      }
    }
  }
  terminals.push(terminal)
  return terminal
}
