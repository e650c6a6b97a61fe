/**
 * Where a session's journal goes: the record of everything non-deterministic that crossed its
 * boundary (see `JournalEntry`). Appending is synchronous, like `Ids.uuid`: a recorder appends
 * from inside a model stream, once per read, and an effect per line would cost more than the line.
 *
 * - `layerMemory` keeps the entries (the testing layer's journal);
 * - `layerFile(path)` appends JSON lines to a file;
 * - `layerBeside(seed)` (`keel --record`) keeps entries in memory until the session opens its
 *   transcript and `attach`es it, then writes them, and all later ones, to the transcript's
 *   journal file ({@link fileOf}: `<session id>.journal` beside `<session id>.jsonl`), appending
 *   after what an earlier process of the session recorded;
 * - `layerContinuing` (a resume without `--record`) does the same only for a session that was
 *   recorded (its journal file exists), so a recorded session stays recorded.
 *
 * Each line is written whole with one `write`, so a crash loses at most the line being written and
 * never leaves two lines merged; a journal that cannot be written stops recording (the session goes
 * on) and says why once, in `problem`.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { closeSync, constants, copyFileSync, existsSync, mkdirSync, openSync, writeSync } from "node:fs"
import { dirname } from "node:path"
import * as JournalEntry from "./JournalEntry.js"

/** @category Models */
export interface Service {
  /** `Clock` milliseconds when the journal started (its header's `startedAt`). */
  readonly startedAt: number
  /** Appends one entry. */
  readonly append: (entry: JournalEntry.Entry) => void
  /** The entries this process appended, in order (a file journal keeps none in memory: empty). */
  readonly entries: () => ReadonlyArray<JournalEntry.Entry>
  /** Tells the journal the session's transcript file: a journal kept beside it starts writing. */
  readonly attach: (transcriptFile: string) => void
  /** Why the journal stopped writing, if it did. */
  readonly problem: () => string | undefined
  /** Whether appends are kept (recorders skip their work when not: see {@link layerContinuing}). */
  readonly active: () => boolean
}

/** @category Context */
export class Journal extends Context.Tag("@keel/core/Journal")<Journal, Service>() {}

/** The journal file of a transcript: `<session id>.journal` beside `<session id>.jsonl`. @category Files */
export const fileOf = (transcriptFile: string): string => transcriptFile.replace(/\.jsonl$/, "") + ".journal"

/**
 * Carries the journal of transcript `from` over to transcript `to` (a fork cut at a message, see
 * `TranscriptCut`): a copy of the whole source journal, so the fork's recording starts with what
 * its history was recorded from; its own process appends after it (a new header first). Nothing
 * when `from` has no journal or `to` already has one. Answers a warning for people when the copy
 * failed (the fork goes on without it).
 *
 * @category Files
 */
export const carryOver = (from: string, to: string): string | undefined => {
  const source = fileOf(from)
  const target = fileOf(to)
  try {
    if (!existsSync(source)) return undefined
    mkdirSync(dirname(target), { recursive: true })
    copyFileSync(source, target, constants.COPYFILE_EXCL)
    return undefined
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return undefined
    return `the journal ${source} could not be carried over to ${target} (${(e as Error).message}); the fork's recording starts without it`
  }
}

/** What a recorded run was: its command line and working directory (see `JournalEntry.Header`). @category Models */
export interface Run {
  readonly argv: ReadonlyArray<string>
  readonly cwd: string
  /** The configuring variables (see {@link configuringEnv}). */
  readonly env?: Readonly<Record<string, string>> | undefined
}

/** Variables that configure the kernel's behaviour: what a replay must set again. */
const CONFIGURING = /^(KEEL_|CLAUDE_CODE_|MAX_THINKING_TOKENS$|DISABLE_PROMPT_CACHING|ANTHROPIC_MODEL$|ANTHROPIC_SMALL_FAST_MODEL$|MCP_TIMEOUT$|BASH_)/
/** Where things are, not how Keel behaves: a replay keeps its own. */
const LOCATION = /^(KEEL_HOME|KEEL_RECORD|KEEL_COMPILE_CACHE|CLAUDE_CODE_TMPDIR)$/
/** Names that hold secrets, never journaled. */
const SECRET = /(KEY$|KEY_|TOKEN$|TOKEN_|SECRET|PASSWORD|CREDENTIAL|AUTH|HEADERS?$)/i

/**
 * The variables of `env` that configure Keel (`KEEL_*`, `CLAUDE_CODE_*`, `MAX_THINKING_TOKENS`,
 * `ANTHROPIC_MODEL`, ...), without any whose name says it holds a secret and without the places
 * (`KEEL_HOME`): what a recording keeps for its replay.
 *
 * @category Recording
 */
export const configuringEnv = (env: Readonly<Record<string, string | undefined>>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(env)) if (v !== undefined && CONFIGURING.test(k) && !SECRET.test(k) && !LOCATION.test(k)) out[k] = v
  return out
}

const header = (startedAt: number, seed: number | undefined, run?: Run): JournalEntry.Entry => ({
  type: "journal",
  version: JournalEntry.VERSION,
  startedAt,
  ...(seed !== undefined ? { seed } : {}),
  ...(run !== undefined ? { argv: run.argv, cwd: run.cwd, ...(run.env !== undefined ? { env: run.env } : {}) } : {})
})

/** A journal kept in memory, started at `startedAt` (`Clock` ms), its header written. @category Constructors */
export const memory = (startedAt: number, seed?: number): Service => {
  const entries: Array<JournalEntry.Entry> = [header(startedAt, seed)]
  return Journal.of({
    startedAt,
    append: (entry) => void entries.push(entry),
    entries: () => entries,
    attach: () => {},
    problem: () => undefined,
    active: () => true
  })
}

/** No journal: a run that does not record (appends go nowhere). @category Layers */
export const layerNone: Layer.Layer<Journal> = Layer.succeed(
  Journal,
  Journal.of({ startedAt: 0, append: () => {}, entries: () => [], attach: () => {}, problem: () => undefined, active: () => false })
)

/** A journal in memory, for tests and replays: read it back with `entries`. @category Layers */
export const layerMemory: Layer.Layer<Journal> = Layer.effect(Journal, Effect.map(Clock.currentTimeMillis, (t) => memory(t)))

/** Why a journal file cannot be written. @category Errors */
export class JournalUnwritable extends Schema.TaggedError<JournalUnwritable>("@keel/JournalUnwritable")(
  "JournalUnwritable",
  { path: Schema.String, message: Schema.String }
) {}

const open = (path: string): number => {
  mkdirSync(dirname(path), { recursive: true })
  return openSync(path, "a", 0o600)
}

const writer = (fd: number) => (entry: JournalEntry.Entry) => {
  writeSync(fd, JournalEntry.encodeLine(entry) + "\n")
}

/** A journal appending JSON lines to `path` (its folder made if missing), held open for the layer's life. @category Layers */
export const layerFile = (path: string): Layer.Layer<Journal, JournalUnwritable> =>
  Layer.scoped(
    Journal,
    Effect.gen(function*() {
      const fd = yield* Effect.acquireRelease(
        Effect.try({ try: () => open(path), catch: (e) => new JournalUnwritable({ path, message: (e as Error).message }) }),
        (fd) => Effect.sync(() => closeSync(fd))
      )
      const startedAt = yield* Clock.currentTimeMillis
      const append = writer(fd)
      append(header(startedAt, undefined))
      return Journal.of({ startedAt, append, entries: () => [], attach: () => {}, problem: () => undefined, active: () => true })
    })
  )

/**
 * A journal written beside the session's transcript once it is attached (see the module's doc),
 * its header carrying `seed` (the seed the run's ids and random draws came from, so a replay draws
 * the same) and the `run` it records. Entries before the attach wait in memory; a session that is never attached (no
 * transcript: `--no-session-persistence`) writes nothing.
 *
 * @category Layers
 */
export const layerBeside = (seed: number, run?: Run): Layer.Layer<Journal> => beside(seed, run, "always")

/**
 * The journal of a resumed session run without `--record`: a session that was recorded (a journal
 * lies beside its transcript) goes on being recorded, so a crash of this process is as durable as
 * one of the first (see `DurableTurn`); a session that was not stays unrecorded (nothing is kept,
 * and the recorders do no work: `active` is false once attached). Its header has no seed: this
 * process draws its ids as usual.
 *
 * @category Layers
 */
export const layerContinuing = (run?: Run): Layer.Layer<Journal> => beside(undefined, run, "ifRecorded")

const beside = (seed: number | undefined, run: Run | undefined, when: "always" | "ifRecorded"): Layer.Layer<Journal> =>
  Layer.scoped(
    Journal,
    Effect.gen(function*() {
      const startedAt = yield* Clock.currentTimeMillis
      let pending: Array<JournalEntry.Entry> | undefined = [header(startedAt, seed, run)]
      let fd: number | undefined
      let write: ((entry: JournalEntry.Entry) => void) | undefined
      let problem: string | undefined
      const fail = (path: string, e: unknown) => {
        problem ??= `the journal ${path} cannot be written (${(e as Error).message}); recording stopped`
        write = undefined
        pending = undefined
      }
      let path = ""
      yield* Effect.addFinalizer(() => Effect.sync(() => fd !== undefined && closeSync(fd)))
      return Journal.of({
        startedAt,
        append: (entry) => {
          if (pending !== undefined) return void pending.push(entry)
          if (write === undefined) return
          try {
            write(entry)
          } catch (e) {
            fail(path, e)
          }
        },
        entries: () => [],
        attach: (transcriptFile) => {
          if (pending === undefined) return
          path = fileOf(transcriptFile)
          if (when === "ifRecorded" && !existsSync(path)) return void (pending = undefined)
          try {
            fd = open(path)
            write = writer(fd)
            for (const entry of pending) write(entry)
            pending = undefined
          } catch (e) {
            fail(path, e)
          }
        },
        problem: () => problem,
        active: () => pending !== undefined || write !== undefined
      })
    })
  )
