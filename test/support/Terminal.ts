/**
 * Driving the real `keel` REPL in a real terminal without anything but Node: a pseudo-terminal
 * (`@lydell/node-pty`) whose output feeds a terminal emulator (`@xterm/headless`), with a fixed
 * size. Tests type into it (`send`, `type`) and read the screen as a person sees it (`screen`),
 * waiting (bounded) for text to appear.
 */
import nodePty from "@lydell/node-pty"
import xterm from "@xterm/headless"
import * as os from "node:os"
import { keel, pretrust } from "./KeelProcess.js"
import * as ScreenText from "./ScreenText.js"
import * as TerminalKeys from "./TerminalKeys.js"

/** A terminal running a command. */
export interface Terminal {
  /** Sends tmux key names (`Enter`, `C-c`, `Up`, `Tab`, `Escape`, `BSpace`); other strings go as text. */
  readonly send: (...keys: ReadonlyArray<string>) => void
  /** Types text literally (no key names). */
  readonly type: (text: string) => void
  /** The visible screen and its scrollback, as text (`escapes`: with colour escape sequences). */
  readonly screen: (options?: { readonly escapes?: boolean }) => string
  /** Waits until the screen matches, up to `timeoutMs` (default 15 s); returns the screen or throws with it. */
  readonly waitFor: (pattern: string | RegExp, timeoutMs?: number) => Promise<string>
  /** Changes the terminal's size (the program gets SIGWINCH). */
  readonly resize: (columns: number, rows: number) => void
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

/**
 * How an input waits for the program to take it before the next one is written (inputs written
 * together reach the program in one read, which it takes for a paste): until the program printed
 * something and then nothing for `INPUT_QUIET_MS` (output already on its way, such as a spinner's
 * frame, is not taken for the answer), or `INPUT_ANSWER_MS` at most.
 */
const INPUT_QUIET_MS = 40
const INPUT_ANSWER_MS = 1000

/**
 * Runs `keel args` in a shell that prints `[keel exited N]` after it, and stays open for inspection.
 * `$0` is keel, the rest its arguments: nothing is quoted by hand.
 */
const SCRIPT = `"$0" "$@"; echo "[keel exited $?]"; exec sleep 600`

/**
 * Opens a terminal running `keel args` in `cwd` with exactly `env` (plus PATH, HOME, TERM); after
 * keel exits the terminal shows `[keel exited N]` and stays open for inspection.
 */
export const open = (options: OpenOptions): Terminal => {
  const columns = options.columns ?? 100
  const rows = options.rows ?? 40
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? os.tmpdir(),
    TERM: "xterm-256color",
    LANG: "C.UTF-8",
    ...options.env
  }
  // The folder is trusted (the trust question has its own test), unless the test brings its own list.
  if (options.trust !== false && options.env.KEEL_HOME !== undefined) pretrust(options.env.KEEL_HOME, options.cwd)
  const emulator = new xterm.Terminal({ cols: columns, rows, scrollback: 5000, allowProposedApi: true })
  const pty = nodePty.spawn("/bin/sh", ["-c", SCRIPT, keel, ...(options.args ?? [])], {
    name: env.TERM!,
    cols: columns,
    rows,
    cwd: options.cwd,
    env
  })
  let alive = true
  // Output counts, so that an input can wait for its answer.
  let outputs = 0
  const waiting = new Set<() => void>()
  pty.onData((data) => {
    outputs++
    emulator.write(data)
    for (const wake of waiting) wake()
  })
  // The emulator's own answers (to cursor position or device queries) go back to the program.
  emulator.onData((data) => {
    if (alive) pty.write(data)
  })

  // Inputs go one at a time: each is written once the previous one was answered (or not, in time).
  const inputs: Array<() => string> = []
  let writing = false
  const answered = (before: number) =>
    new Promise<void>((resolve) => {
      let quiet: ReturnType<typeof setTimeout> | undefined
      const done = () => {
        clearTimeout(limit)
        clearTimeout(quiet)
        waiting.delete(onOutput)
        resolve()
      }
      const limit = setTimeout(done, INPUT_ANSWER_MS)
      const onOutput = () => {
        if (outputs === before) return
        clearTimeout(quiet)
        quiet = setTimeout(done, INPUT_QUIET_MS)
      }
      waiting.add(onOutput)
    })
  const pump = async () => {
    if (writing) return
    writing = true
    while (alive && inputs.length > 0) {
      const before = outputs
      pty.write(inputs.shift()!())
      await answered(before)
    }
    writing = false
  }
  const input = (data: () => string) => {
    inputs.push(data)
    void pump()
  }

  const modes = (): TerminalKeys.KeyModes => ({ applicationCursorKeys: emulator.modes.applicationCursorKeysMode })
  const screen = (o: { readonly escapes?: boolean } = {}) => ScreenText.capture(emulator.buffer.active, o)
  const terminal: Terminal = {
    // Key names are turned into bytes when written: the modes then are the ones the program set.
    send: (...keys) => {
      for (const key of keys) input(() => TerminalKeys.bytes(key, modes()))
    },
    type: (text) => input(() => text),
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
    resize: (c, r) => {
      pty.resize(c, r)
      emulator.resize(c, r)
    },
    kill: () => {
      if (!alive) return
      alive = false
      inputs.length = 0
      // The whole process group: the shell, keel and whatever keel runs, as closing a terminal does.
      try {
        process.kill(-pty.pid, "SIGHUP")
      } catch {
        // already gone
      }
      pty.kill("SIGKILL")
      emulator.dispose()
    }
  }
  terminals.push(terminal)
  return terminal
}
