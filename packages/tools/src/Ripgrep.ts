/**
 * Grep's fast path: ripgrep (`rg`), run through `@effect/platform`'s `Command` with `--json` and
 * read back into the same `FileMatches` the built-in search produces. Its flags make it walk the
 * tree as the built-in search does: hidden files included, `.git` skipped, every `.gitignore` under
 * the searched folder respected (in a git repository or not) and no other ignore source (parent
 * folders, `.ignore`, `.rgignore`, git's excludes, a ripgrep config file); binary files are searched
 * as text, then the built-in rule (a NUL in the first 8,192 characters) drops them, and `glob` and
 * `type` are checked here with the built-in matchers (ripgrep's own `--glob` would override
 * `.gitignore`). Each search is bounded by a timeout. Patterns are Rust regular expressions, which
 * agree with JavaScript's on common patterns (`\w`, `\d` and `\b` are Unicode-aware in Rust); a
 * pattern ripgrep rejects (look-around, backreferences) fails with `UnsupportedPattern`.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/platform/Command"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import { Tool } from "@keel/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as fsSync from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import type { FileMatches, Line } from "./GrepOutput.js"
import { isBinary, type Query } from "./GrepQuery.js"

/** The executable looked up on the PATH. @category Constants */
export const COMMAND = "rg"
/** How long one search may run. @category Constants */
export const DEFAULT_TIMEOUT = Duration.seconds(20)

/** Where to find ripgrep and how long to let it run. @category Models */
export interface Options {
  /** The rg executable (default `rg`, found on the PATH). */
  readonly command?: string | undefined
  /** How long one search may run (default 20 s). */
  readonly timeout?: Duration.DurationInput | undefined
}

/**
 * Why ripgrep gave no results: it could not be started (`Unavailable`), it rejected the pattern
 * (`UnsupportedPattern`), it failed otherwise (`Failed`), or it ran out of time (`Timeout`).
 *
 * @category Errors
 */
export class RipgrepError extends Schema.TaggedError<RipgrepError>("@keel/tools/Ripgrep/RipgrepError")("RipgrepError", {
  reason: Schema.Literal("Unavailable", "UnsupportedPattern", "Failed", "Timeout"),
  message: Schema.String
}) {}

/** The oldest ripgrep with every flag used here (`--no-require-git` came in 12.0). @category Constants */
export const MINIMUM_VERSION = [12, 0] as const

/**
 * Whether `rg --version` runs (within 5 s) and names version 12 or later. Grep asks once per tool.
 *
 * @category Detection
 */
export const isAvailable = (command: string = COMMAND): Effect.Effect<boolean, never, CommandExecutor.CommandExecutor> =>
  Command.string(Command.make(command, "--version")).pipe(
    Effect.map((out) => {
      const version = /^ripgrep (\d+)\.(\d+)/.exec(out)
      if (version === null) return false
      const [major, minor] = [Number(version[1]), Number(version[2])]
      return major > MINIMUM_VERSION[0] || (major === MINIMUM_VERSION[0] && minor >= MINIMUM_VERSION[1])
    }),
    Effect.timeoutTo({ duration: Duration.seconds(5), onSuccess: (ok) => ok, onTimeout: () => false }),
    Effect.orElseSucceed(() => false)
  )

/** A glob on the file name ripgrep reads as `picomatch` does: no slash, no negation, no nested braces. */
const isSimpleNameGlob = (glob: string) => /^[\w.*?-]*(\{[\w.*?,-]*\})?[\w.*?-]*$/.test(glob)

/**
 * The ripgrep arguments for a query, searching `target` (`.` for the folder rg runs in). A type
 * (or a simple glob on the file name) becomes a ripgrep type, which narrows the search without
 * overriding `.gitignore`; the exact filters are applied afterwards.
 *
 * @category Running
 */
export const args = (query: Query, target: string): Array<string> => {
  const out = [
    "--json",
    "--no-config",
    "--hidden",
    "--no-require-git",
    "--no-ignore-parent",
    "--no-ignore-dot",
    "--no-ignore-exclude",
    "--no-ignore-global",
    "--glob=!.git/",
    ...(query.excludeGlobs ?? []).map((g) => `--glob=${g}`),
    "--text",
    "--crlf",
    "--encoding=none",
    "--no-messages"
  ]
  if (query.ignoreCase) out.push("--ignore-case")
  if (query.multiline) out.push("--multiline", "--multiline-dotall")
  if (query.mode === "files_with_matches") out.push("--max-count=1")
  if (query.mode === "content") out.push(`--before-context=${query.before}`, `--after-context=${query.after}`)
  const glob = query.glob
  const names = query.typeGlobs.length > 0 ? query.typeGlobs : glob !== undefined && isSimpleNameGlob(glob) ? [glob] : []
  if (names.length > 0) out.push("--type-clear=keel", ...names.map((g) => `--type-add=keel:${g}`), "--type=keel")
  out.push("--regexp", query.pattern, "--", target)
  return out
}

/** Text as ripgrep's JSON gives it: UTF-8 `text`, or base64 `bytes` when it is not valid UTF-8. */
interface Data {
  readonly text?: string
  readonly bytes?: string
}

const decode = (data: Data | undefined): string => data?.text ?? Buffer.from(data?.bytes ?? "", "base64").toString("utf8")

interface Found {
  count: number
  readonly lines: Map<number, Line>
}

/** What one run of rg reported: files by the path it printed, and whether it finished its search. */
interface Report {
  readonly files: Map<string, Found>
  /** Whether lines are kept (content mode), or only counted. */
  readonly keepLines: boolean
  summary: boolean
}

/** One line of rg's JSON output (the fields read here). */
interface Event {
  readonly type: string
  readonly data: {
    readonly path?: Data
    readonly lines?: Data
    readonly line_number?: number | null
    readonly submatches?: ReadonlyArray<unknown>
  }
}

/** Records one line of rg's JSON output. */
const record = (report: Report, json: string): void => {
  let event: Event
  try {
    event = JSON.parse(json)
  } catch {
    return
  }
  if (event.type === "summary") report.summary = true
  if (event.type !== "match" && event.type !== "context") return
  const file = decode(event.data.path)
  const found = report.files.get(file) ?? { count: 0, lines: new Map() }
  report.files.set(file, found)
  const hit = event.type === "match"
  if (hit) found.count += event.data.submatches?.length ?? 0
  if (!report.keepLines) return
  const first = event.data.line_number ?? 0
  decode(event.data.lines).replace(/\r?\n$/, "").split(/\r?\n/).forEach((text, i) => {
    const number = first + i
    if (!found.lines.get(number)?.hit) found.lines.set(number, { number, text, hit })
  })
}

/** Runs rg in `cwd` and collects its report. */
const run = (
  command: string,
  argv: ReadonlyArray<string>,
  cwd: string,
  timeout: Duration.Duration,
  keepLines: boolean
): Effect.Effect<Report, RipgrepError, CommandExecutor.CommandExecutor> =>
  Effect.scoped(Effect.gen(function*() {
    const proc = yield* Command.start(Command.make(command, ...argv).pipe(Command.workingDirectory(cwd))).pipe(
      Effect.mapError((e) => new RipgrepError({ reason: "Unavailable", message: `Could not start ${command}: ${e.message}` }))
    )
    const report: Report = { files: new Map(), keepLines, summary: false }
    const stdout = proc.stdout.pipe(
      Stream.decodeText(),
      Stream.splitLines,
      Stream.runForEach((line) => Effect.sync(() => record(report, line)))
    )
    const stderr = proc.stderr.pipe(Stream.decodeText(), Stream.runFold("", (all, s) => all.length < 8192 ? all + s : all))
    const done = yield* Effect.all([stdout, stderr, proc.exitCode], { concurrency: "unbounded" }).pipe(
      Effect.mapError((e) => new RipgrepError({ reason: "Failed", message: `${command} failed: ${String(e)}` })),
      Effect.timeoutOption(timeout)
    )
    if (Option.isNone(done)) {
      return yield* new RipgrepError({
        reason: "Timeout",
        message: `The search took longer than ${Duration.format(timeout)} and was stopped. Narrow it with path, glob or type.`
      })
    }
    const [, errors, code] = done.value
    if (code === 0 || code === 1 || report.summary) return report
    const message = errors.trim()
    return yield* new RipgrepError({
      reason: /regex|look-?around|backreference/i.test(message) ? "UnsupportedPattern" : "Failed",
      message: `ripgrep failed (exit code ${code}): ${message || "no message"}`
    })
  }))

/** Files inspected between two yields to the scheduler. @category Constants */
export const INSPECT_BATCH = 256

const buffer = new Uint8Array(4 * 8192)

/**
 * A reported file's mtime and whether it is text by the built-in rule: not empty, and no NUL in its
 * first 8,192 characters (32 KB hold them). Synchronous, in batches between yields: four system calls per file,
 * where going through the thread pool costs ten times as much on thousands of files.
 */
const inspect = (file: string): { readonly mtimeMs: number; readonly isText: boolean } | undefined => {
  let fd: number | undefined
  try {
    fd = fsSync.openSync(file, "r")
    const { mtimeMs } = fsSync.fstatSync(fd)
    const read = fsSync.readSync(fd, buffer, 0, buffer.length, 0)
    return { mtimeMs, isText: read > 0 && !isBinary(new TextDecoder("utf-8").decode(buffer.subarray(0, read))) }
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) fsSync.closeSync(fd)
  }
}

/**
 * Searches the query's root with ripgrep. Fails with a `ToolError` when the root does not exist,
 * and with a `RipgrepError` when ripgrep cannot give an answer.
 *
 * @category Searching
 */
export const search = (
  query: Query,
  options: Options = {}
): Effect.Effect<ReadonlyArray<FileMatches>, RipgrepError | Tool.ToolError, CommandExecutor.CommandExecutor> =>
  Effect.gen(function*() {
    const root = query.root
    const stat = yield* Effect.tryPromise({
      try: () => fs.stat(root),
      catch: (e) =>
        new Tool.ToolError({
          message: (e as NodeJS.ErrnoException).code === "ENOENT" ? `Path does not exist: ${root}` : `Cannot search ${root}: ${String(e)}`
        })
    })
    const isFolder = stat.isDirectory()
    if (!isFolder && !query.accepts(path.basename(root))) return []
    const cwd = isFolder ? root : path.dirname(root)
    const timeout = Duration.decode(options.timeout ?? DEFAULT_TIMEOUT)
    const report = yield* run(options.command ?? COMMAND, args(query, isFolder ? "." : root), cwd, timeout, query.mode === "content")
    const found: Array<FileMatches> = []
    let inspected = 0
    for (const [reported, { count, lines }] of report.files) {
      if (++inspected % INSPECT_BATCH === 0) yield* Effect.yieldNow()
      const file = path.resolve(cwd, reported)
      if (!query.accepts(path.relative(root, file) || path.basename(file))) continue
      if (query.shows !== undefined && !query.shows(file)) continue
      const info = inspect(file)
      if (info === undefined || !info.isText) continue
      found.push({ path: file, mtimeMs: info.mtimeMs, count, lines: [...lines.values()].sort((a, b) => a.number - b.number) })
    }
    return found
  })
