/**
 * Running the real `keel` binary (built by `npm run build`, linked into node_modules/.bin by npm) in
 * end-to-end tests, against loopback fakes of the Messages API that are closed after each test.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as FakeAnthropic from "./FakeAnthropic.js"

/** The `keel` binary that npm links into node_modules/.bin. */
export const keel = path.resolve(import.meta.dirname, "..", "..", "node_modules", ".bin", "keel")

/** How a `keel` process ended: its exit code and everything it printed. */
export interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const servers: Array<FakeAnthropic.FakeAnthropic> = []

/** Closes every server {@link fake} started and forgets them; call it from `afterEach`. */
export const closeServers = async (): Promise<void> => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
}

/** Starts a fake Messages API with `script`, to be closed by {@link closeServers}. */
export const fake = async (
  script: ReadonlyArray<FakeAnthropic.ScriptItem>,
  options: FakeAnthropic.StartOptions = {}
): Promise<FakeAnthropic.FakeAnthropic> => {
  const server = await FakeAnthropic.start(script, options)
  servers.push(server)
  return server
}

/** A fresh temporary project directory holding a four-line README.md. */
export const workdir = (): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "keel-e2e-"))
  fs.writeFileSync(path.join(dir, "README.md"), "# Demo project\n\nIt counts sheep.\nThree lines.\n")
  return dir
}

/**
 * A fresh {@link workdir} (its real path) as a git repository on `main`, with its README committed
 * by "Keel Tester", and `git` to run more commands there (no global or system git config is read).
 */
export const gitRepository = (): { readonly dir: string; readonly git: (...args: Array<string>) => Buffer } => {
  const dir = fs.realpathSync(workdir())
  const git = (...args: Array<string>) =>
    execFileSync("git", args, { cwd: dir, env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" } })
  git("init", "-q", "-b", "main")
  git("config", "user.name", "Keel Tester")
  git("config", "user.email", "tester@example.com")
  git("config", "commit.gpgsign", "false")
  git("add", "README.md")
  git("commit", "-q", "-m", "the README")
  return { dir, git }
}

/** Options of {@link start}: extra environment, working directory (default a fresh {@link workdir}), stdin text. */
export interface SpawnOptions {
  readonly env?: Record<string, string | undefined>
  readonly cwd?: string
  readonly stdin?: string
  /** Leave stdin open (for {@link live}); by default it is ended after `stdin`. */
  readonly openStdin?: boolean
  /** The executable, given `args` (default {@link keel}): benches run node on a script the same way. */
  readonly command?: string
  /** `false`: do not mark the folder trusted for a REPL run (by default it is, so the REPL does not ask). */
  readonly trust?: boolean
}

/** Whether `keel args` runs the REPL (which asks whether to trust a new folder). */
const isRepl = (args: ReadonlyArray<string>): boolean =>
  !["serve", "export"].includes(args[0] ?? "") && !args.some((a) => a === "-p" || a === "--print" || a === "--version" || a === "--help")

/**
 * Marks `cwd` trusted in `home` (`$KEEL_HOME/trusted-folders.json`) unless that file exists, as a
 * user who answered the REPL's trust question once would have it.
 */
export const pretrust = (home: string, cwd: string): void => {
  const file = path.join(home, "trusted-folders.json")
  if (fs.existsSync(file)) return
  fs.mkdirSync(home, { recursive: true })
  fs.writeFileSync(file, JSON.stringify({ folders: [fs.realpathSync(cwd)] }))
}

/**
 * Spawns `keel args` with this process's environment minus every `ANTHROPIC_*`, `KEEL_*` and
 * `API_TIMEOUT_MS` variable, plus `options.env`; `KEEL_HOME` and `CLAUDE_CONFIG_DIR` are fresh
 * temporary folders unless `options.env` sets them (runs save their sessions there, never in the
 * real `~/.keel`, and read no user settings of the real `~/.claude`). `done`
 * resolves when the process has closed.
 */
export const start = (
  args: ReadonlyArray<string>,
  options: SpawnOptions = {}
): { child: ChildProcess; done: Promise<Run> } => {
  const env: Record<string, string | undefined> = { ...process.env }
  for (const k of Object.keys(env)) {
    if (k.startsWith("ANTHROPIC_") || k.startsWith("KEEL_") || k === "API_TIMEOUT_MS") delete env[k]
  }
  Object.assign(env, options.env)
  env.KEEL_HOME ??= fs.mkdtempSync(path.join(os.tmpdir(), "keel-home-"))
  // Claude Code's user settings (~/.claude/settings.json) are read too: never the real ones.
  env.CLAUDE_CONFIG_DIR ??= fs.mkdtempSync(path.join(os.tmpdir(), "keel-claude-home-"))
  const cwd = options.cwd ?? workdir()
  if (options.trust !== false && isRepl(args)) pretrust(env.KEEL_HOME, cwd)
  const child = spawn(options.command ?? keel, [...args], { cwd, env, stdio: ["pipe", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stdout!.on("data", (d) => (stdout += d))
  child.stderr!.on("data", (d) => (stderr += d))
  if (options.stdin !== undefined) child.stdin!.end(options.stdin)
  else if (options.openStdin !== true) child.stdin!.end()
  const done = new Promise<Run>((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })))
  return { child, done }
}

/** Runs `keel args` (see {@link start}) to the end. */
export const run = (args: ReadonlyArray<string>, options: SpawnOptions = {}): Promise<Run> => start(args, options).done

/** The environment that points `keel` at `server`, with a test API key. */
export const envFor = (server: FakeAnthropic.FakeAnthropic): Record<string, string> => ({
  ANTHROPIC_BASE_URL: server.url,
  ANTHROPIC_API_KEY: "test-key"
})

/** The JSON values of `stream-json` output, one a line. */
export const lines = (stdout: string): Array<any> => stdout.trim().split("\n").map((l) => JSON.parse(l))

/**
 * Runs `keel -p go --output-format stream-json` in `dir` with `args` against a fake API playing
 * `script`, with `KEEL_HOME` inside `dir`: the run, the fake (its recorded requests), and the parsed
 * stream-json lines (none for a usage error).
 */
export const runStreamJson = async (dir: string, script: ReadonlyArray<FakeAnthropic.ScriptItem>, args: ReadonlyArray<string>) => {
  const server = await fake(script)
  const r = await run(["-p", "go", "--output-format", "stream-json", ...args], {
    env: { ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home") },
    cwd: dir
  })
  return { ...r, server, messages: r.code === 2 ? [] : lines(r.stdout) }
}

/** A `keel` process whose stdin stays open: lines are written one at a time, output read as it comes. */
export interface Live {
  readonly child: ChildProcess
  readonly done: Promise<Run>
  /** Writes `line` and a newline to stdin (a value is written as its JSON). */
  readonly send: (line: unknown) => void
  /** Ends stdin. */
  readonly end: () => void
  /** The stream-json messages printed so far, parsed. */
  readonly messages: () => Array<any>
  /** What was printed on stderr so far. */
  readonly stderr: () => string
  /** Waits (real time, at most `timeoutMs`) until `check(messages)` holds; fails the test with what was printed if not. */
  readonly waitFor: (check: (messages: Array<any>) => boolean, timeoutMs?: number) => Promise<Array<any>>
}

/** Spawns `keel args` (see {@link start}) with stdin left open, for `--input-format stream-json` sessions. */
export const live = (args: ReadonlyArray<string>, options: SpawnOptions = {}): Live => {
  const { child, done } = start(args, { ...options, openStdin: true })
  let out = ""
  let err = ""
  child.stdout!.on("data", (d) => (out += d))
  child.stderr!.on("data", (d) => (err += d))
  const messages = () => out.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l))
  return {
    child,
    done,
    send: (line) => child.stdin!.write((typeof line === "string" ? line : JSON.stringify(line)) + "\n"),
    end: () => child.stdin!.end(),
    messages,
    stderr: () => err,
    waitFor: async (check, timeoutMs = 15_000) => {
      const deadline = Date.now() + timeoutMs
      while (Date.now() < deadline) {
        if (check(messages())) return messages()
        if (child.exitCode !== null) break
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      if (check(messages())) return messages()
      throw new Error(`keel did not print what was awaited.\nstdout:\n${out}\nstderr:\n${err}`)
    }
  }
}

/** A user message line of `--input-format stream-json` input. */
export const userLine = (content: unknown) => ({
  type: "user",
  message: { role: "user", content },
  parent_tool_use_id: null,
  session_id: ""
})
