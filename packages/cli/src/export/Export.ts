/**
 * `keel export <session> --format handoff|replay|review [--output file] [--json]`: one of a saved
 * session's exports (`Export.render` in `@keel/core`), computed from its transcript alone. The
 * session is an id of a session of the working directory (or of `--cwd`), found under `KEEL_HOME`
 * as `--resume` finds it, or the path of a transcript file. Prices come from `KEEL_PRICING_FILE`
 * as in a run.
 *
 * The export goes to stdout, or to `--output`, written whole (a temporary file renamed into place)
 * only once it is complete. A session that is not there, a transcript that does not replay
 * (corrupt, another program's) or a file that cannot be read is exit code 1 with a line on stderr;
 * an invalid `KEEL_*` variable or pricing file is exit code 2. Either way nothing is written.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { BashGrammar, ContextManagement, Export, Pricing, SessionStore, Transcript, TranscriptError } from "@keel/core"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as path from "node:path"
import { describeFailure } from "../Runtime.js"
import { isPath, sessionIdOf } from "../SessionArgument.js"
import type { Flags } from "./ExportFlags.js"

/** Where the export and the errors go. @category Models */
export interface Io {
  readonly out: (text: string) => void
  readonly err: (text: string) => void
}

/** A transcript file's entries, replayed. */
const fromFile = (file: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const bytes = yield* fs.readFile(file).pipe(
      Effect.mapError((e) =>
        new TranscriptError.TranscriptIoError({
          file,
          operation: "read",
          reason: e._tag === "SystemError" && e.reason === "NotFound" ? "no such file" : e.message
        })
      )
    )
    const parsed = Transcript.parseEntries(bytes, { file, sessionId: sessionIdOf(file, bytes) })
    return Either.isLeft(parsed) ? yield* Effect.fail(parsed.left) : parsed.right
  })

/**
 * The entries of a transcript that replays whole: an export is computed from the transcript alone,
 * so a torn one (lines a resume skips) fails naming its first bad line, for `keel doctor` to repair.
 */
const whole = (decoded: Transcript.Decoded) => {
  const first = decoded.dropped[0]
  return first === undefined
    ? Effect.succeed(decoded)
    : Effect.fail(
      new TranscriptError.CorruptTranscript({
        file: decoded.loaded.file,
        line: first.line,
        reason: `${first.reason} (keel doctor ${decoded.loaded.sessionId} repairs it)`
      })
    )
}

/** A session's entries, from the store under `KEEL_HOME`. */
const fromStore = (sessionId: string, cwd: string) =>
  Effect.gen(function*() {
    const home = yield* ContextManagement.homeConfig
    const store = yield* Effect.provide(SessionStore.SessionStore, SessionStore.layerFile({ home }))
    return yield* store.loadEntries(cwd, sessionId)
  })

/** Writes `text` to `file` whole: a temporary file beside it, renamed into place. */
const writeWhole = (file: string, text: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`)
    yield* fs.writeFileString(temporary, text)
    yield* fs.rename(temporary, file).pipe(Effect.tapError(() => Effect.ignore(fs.remove(temporary))))
  }).pipe(
    Effect.mapError((e) => new TranscriptError.TranscriptIoError({ file, operation: "write", reason: e.message }))
  )

/**
 * Runs `keel export` with parsed `flags`: answers the exit code.
 *
 * @category Running
 */
export const run = async (flags: Flags, io: Io): Promise<number> => {
  const cwd = path.resolve(flags.cwd ?? process.cwd())
  const program = Effect.gen(function*() {
    const pricing = yield* Pricing.tableConfig
    const decoded = yield* Effect.flatMap(
      isPath(flags.session) ? fromFile(path.resolve(cwd, flags.session)) : fromStore(flags.session, cwd),
      whole
    )
    yield* BashGrammar.ready // Bash calls' decisions are explained with the bash grammar
    const rendered = Export.render(decoded, flags.format, { json: flags.json, pricing })
    if (flags.output === undefined) io.out(rendered.text)
    else yield* writeWhole(path.resolve(flags.output), rendered.text)
  })
  const exit = await Effect.runPromiseExit(program.pipe(Effect.provide(NodeContext.layer)))
  if (Exit.isSuccess(exit)) return 0
  const failure = describeFailure(exit.cause, false, "this is a bug in keel export")
  const notFound = Option.exists(Cause.failureOption(exit.cause), (e) => e._tag === "SessionNotFound")
  for (const line of failure.lines) io.err(`keel export: ${line}\n`)
  if (notFound) io.err("keel export: give a session id of this folder (or --cwd <its folder>), or the transcript's path.\n")
  return failure.code
}
