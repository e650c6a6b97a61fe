/**
 * `keel replay`: runs a recorded session (`keel --record`) again from its journal, under virtual
 * time. The run is the recorded one (its command line and working directory from the journal's
 * header, its ids and random draws from the header's seed, the system prompt its transcript
 * recorded, each recorded prompt submitted in order); the model is the journal (`ReplayModel`),
 * under the same watchdog, retries, fallback and prompt caching; tool results come from the
 * journal unless `--tools live`; its transcript stays in memory. Waits (backoffs, retry-after, the watchdog, tool
 * durations) keep their recorded lengths on a `TestClock` that jumps from one to the next, so a
 * session that took minutes replays in milliseconds.
 *
 * It passes (exit 0) when every model call asked for exactly the recorded body and every recorded
 * call was asked for; otherwise it prints the first divergence (the call, the JSON path of the first
 * differing field, a diff) and exits 1. A recording it cannot run is exit 2, saying why.
 *
 * @since 0.1.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { ContextManagement, Journal, JournalEntry, ReplayModel, SessionStore, ToolsInFlight, Transcript, TurnEnvelope } from "@keel/core"
import { VirtualTime } from "@keel/core/testing"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as TestContext from "effect/TestContext"
import * as fs from "node:fs"
import * as path from "node:path"
import { parse } from "../Flags.js"
import * as Runtime from "../Runtime.js"
import { sessionIdOf } from "../SessionArgument.js"
import type { Flags } from "./ReplayFlags.js"

/** Where the report and the errors go. @category Models */
export interface Io {
  readonly out: (text: string) => void
  readonly err: (text: string) => void
}

/** The journal a session argument names: a path, or a session id of `cwd` under `KEEL_HOME`. */
const journalOf = (session: string, cwd: string): string => {
  if (session.includes("/") || session.includes(path.sep) || session.endsWith(".journal")) return path.resolve(cwd, session)
  const home = Effect.runSync(Effect.orDie(ContextManagement.homeConfig))
  return Journal.fileOf(path.join(home, "projects", SessionStore.slug(cwd), `${session}.jsonl`))
}

/** The recorded system prompt of the session's first turn, from the transcript beside the journal. */
const recordedPrompt = (journal: string): TurnEnvelope.Recorded | undefined => {
  const file = journal.replace(/\.journal$/, ".jsonl")
  if (!fs.existsSync(file)) return undefined
  const bytes = fs.readFileSync(file)
  const parsed = Transcript.parseEntries(bytes, { file, sessionId: sessionIdOf(file, bytes) })
  if (Either.isLeft(parsed)) return undefined
  const loaded = parsed.right.loaded
  return TurnEnvelope.recordedOf({ envelopes: loaded.envelopes.slice(0, 1), prompts: loaded.prompts })
}

/** What a replay found. */
interface Outcome {
  readonly divergence: Option.Option<ReplayModel.ReplayDivergence>
  readonly served: number
  readonly recorded: number
  readonly virtualMs: number
}

/**
 * Runs `keel replay` with parsed `flags`: answers the exit code.
 *
 * @category Running
 */
export const run = async (flags: Flags, io: Io, version: string): Promise<number> => {
  const cwd = path.resolve(flags.cwd ?? process.cwd())
  const file = journalOf(flags.session, cwd)
  let text: string
  try {
    text = fs.readFileSync(file, "utf8")
  } catch (e) {
    io.err(`keel replay: cannot read ${file}: ${(e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (e as Error).message}\n`)
    io.err("keel replay: give a session id of this folder recorded with --record (or --cwd <its folder>), or its journal's path.\n")
    return 2
  }
  const parsed = JournalEntry.parse(text)
  if (Either.isLeft(parsed)) {
    io.err(`keel replay: ${file} line ${parsed.left.line}: ${parsed.left.message}\n`)
    return 2
  }
  const entries = parsed.right
  // Live tools run in real time: the virtual clock stands still while one runs.
  const running = ToolsInFlight.counter()
  const plan = planOf(entries, flags, file, version, running)
  if (Either.isLeft(plan)) {
    io.err(`keel replay: ${file}: ${plan.left}\n`)
    return 2
  }
  const { options, prompts } = plan.right
  // The variables that configured the recorded run configure the replay (this process is the replay's own).
  const header = entries[0]
  if (header?.type === "journal" && header.env !== undefined) {
    for (const k of Object.keys(Journal.configuringEnv(process.env))) delete process.env[k]
    Object.assign(process.env, header.env)
  }
  const started = performance.now()
  const program = Effect.gen(function*() {
    const before = yield* TestClock.currentTimeMillis
    const opened = yield* Runtime.openSession(options)
    for (const prompt of prompts) yield* Stream.runDrain(opened.session.submit(prompt))
    const replay = Option.getOrThrow(yield* Effect.serviceOption(ReplayModel.Replay))
    return {
      divergence: yield* replay.divergence,
      served: yield* replay.served,
      recorded: replay.recorded,
      virtualMs: (yield* TestClock.currentTimeMillis) - before
    } satisfies Outcome
  }).pipe(Effect.scoped, Effect.provide(Runtime.layer(options)))
  // The clock starts where the recording did (its times are offsets from there).
  const startedAt = header?.type === "journal" ? header.startedAt : 0
  const exit = await Effect.runPromiseExit(
    Effect.zipRight(TestClock.setTime(startedAt), VirtualTime.run(program, { busy: () => running.running > 0 })).pipe(
      Effect.provide(TestContext.TestContext),
      Effect.provide(NodeContext.layer)
    )
  )
  const realMs = Math.round(performance.now() - started)
  if (Exit.isFailure(exit)) {
    io.err(`keel replay: the replay failed: ${Cause.pretty(exit.cause)}\n`)
    return 2
  }
  const outcome = exit.value
  const timing = `${(outcome.virtualMs / 1000).toFixed(1)} s of recorded time in ${realMs} ms`
  if (Option.isSome(outcome.divergence)) {
    const d = outcome.divergence.value
    io.out(`replay: DIVERGED at model call ${d.call} of ${outcome.recorded}: ${d.path} differs from the recording\n`)
    io.out(`${d.diff}\n`)
    return 1
  }
  if (outcome.served < outcome.recorded) {
    io.out(`replay: DIVERGED: the run made ${outcome.served} of the ${outcome.recorded} recorded model calls\n`)
    return 1
  }
  io.out(`replay: pass: ${outcome.served} model call${outcome.served === 1 ? "" : "s"} as recorded, ${timing}\n`)
  return 0
}

/** The run a journal recorded, as options for the runtime, and the prompts to submit; or why it cannot be run. */
const planOf = (
  entries: ReadonlyArray<JournalEntry.Entry>,
  flags: Flags,
  file: string,
  version: string,
  running: ToolsInFlight.Counter
): Either.Either<{ readonly options: Runtime.Options; readonly prompts: ReadonlyArray<string> }, string> => {
  const header = entries[0]
  if (header?.type !== "journal" || header.argv === undefined || header.cwd === undefined) {
    return Either.left("its header has no command line: it was not recorded by keel --record")
  }
  if (entries.filter((e) => e.type === "journal").length > 1) {
    return Either.left("it holds more than one run of the session (a resumed session): keel replay runs one")
  }
  const parsed = parse(header.argv, version)
  if (parsed._tag !== "Run") return Either.left(`its command line does not parse now: ${parsed.stderr.trim()}`)
  const prompts: Array<string> = []
  for (const entry of entries) {
    if (entry.type !== "turn_start" || entry.prompt === null) continue
    if (typeof entry.prompt !== "string") return Either.left("a turn's prompt is not text: keel replay submits text prompts")
    prompts.push(entry.prompt)
  }
  const run = parsed.flags
  if (run.resume !== undefined || run.continue) {
    return Either.left("it continued an earlier session (--resume/--continue): keel replay runs a session from its start")
  }
  return Either.right({
    options: {
      ...run,
      cwd: header.cwd,
      record: false,
      replay: { entries, seed: header.seed, tools: flags.tools, prompt: recordedPrompt(file), running }
    },
    prompts
  })
}
