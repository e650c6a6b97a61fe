/**
 * `keel doctor <session>`: checks a saved session's transcript and repairs a torn one. A transcript
 * is torn when lines do not replay (two writers, a crash, a hand edit: see `Transcript.parse`); a
 * session resumes from such a file anyway, and `doctor` makes it clean again: it keeps the original
 * beside it as `<file>.bak-<time>` (nothing is ever lost), then replaces the file (a temporary file
 * renamed into place) with the entries that replay, as their original lines: the longest valid
 * chain from the start, which needs no re-linking. It prints each line it dropped, with why.
 *
 * It takes the session's lock first: a session in use is not touched (exit 3). Exit 0 when the
 * transcript is healthy or repaired, 1 when there is none, or it is not a Keel transcript of that
 * session, or its first entry does not replay (nothing to keep).
 *
 * @since 0.1.0
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as FileSystem from "@effect/platform/FileSystem"
import { ContextManagement, SessionLock, SessionStore, Transcript, TranscriptError } from "@keel/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as path from "node:path"
import { describeFailure } from "../Runtime.js"
import { isPath, sessionIdOf } from "../SessionArgument.js"
import type { Flags } from "./DoctorFlags.js"

/** Where the report and the errors go. @category Models */
export interface Io {
  readonly out: (text: string) => void
  readonly err: (text: string) => void
}

/** The most dropped lines listed one by one. @category Constants */
export const MAX_LISTED = 50

/** The transcript the argument names, and its session id (from the file when it is a path). */
const locate = (flags: Flags, cwd: string) =>
  Effect.gen(function*() {
    if (isPath(flags.session)) return { file: path.resolve(cwd, flags.session), sessionId: undefined }
    if (!SessionStore.isValidSessionId(flags.session)) {
      return yield* Effect.fail(
        new TranscriptError.SessionNotFound({ sessionId: flags.session, cwd, directory: "", known: [], reason: "that is not a session id" })
      )
    }
    const home = yield* ContextManagement.homeConfig
    const store = SessionStore.make({ home, files: SessionStore.memoryFiles() })
    return { file: store.fileOf(cwd, flags.session), sessionId: flags.session }
  })

/** The kept lines of `bytes`, each with its newline. */
const keptBytes = (bytes: Uint8Array, lines: ReadonlyArray<readonly [number, number]>): Uint8Array => {
  const out = new Uint8Array(lines.reduce((n, [a, b]) => n + b - a + 1, 0))
  let at = 0
  for (const [a, b] of lines) {
    out.set(bytes.subarray(a, b), at)
    at += b - a
    out[at++] = 0x0a
  }
  return out
}

/**
 * Runs `keel doctor` with parsed `flags`: answers the exit code.
 *
 * @category Running
 */
export const run = async (flags: Flags, io: Io): Promise<number> => {
  const cwd = path.resolve(flags.cwd ?? process.cwd())
  const program = Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const located = yield* locate(flags, cwd)
    const { file } = located
    const ioError = (operation: string) => (e: { readonly message: string }) =>
      new TranscriptError.TranscriptIoError({ file, operation, reason: e.message })
    if (!(yield* fs.exists(file).pipe(Effect.mapError(ioError("read"))))) {
      return yield* Effect.fail(
        new TranscriptError.SessionNotFound({
          sessionId: located.sessionId ?? file,
          cwd,
          directory: path.dirname(file),
          known: [],
          reason: `there is no ${file}`
        })
      )
    }
    const peek = yield* fs.readFile(file).pipe(Effect.mapError(ioError("read")))
    const sessionId = located.sessionId ?? sessionIdOf(file, peek)
    // No writer while the file is checked and replaced.
    yield* SessionLock.acquire(sessionId, file)
    const bytes = yield* fs.readFile(file).pipe(Effect.mapError(ioError("read")))
    const parsed = Transcript.parseEntries(bytes, { file, sessionId })
    if (Either.isLeft(parsed)) return yield* Effect.fail(parsed.left)
    const { dropped, lines, loaded } = parsed.right
    if (dropped.length === 0 && !loaded.tail.truncated) {
      io.out(`${file}: healthy (${loaded.entries} entries); nothing to repair\n`)
      return
    }
    const stamp = new Date(yield* Clock.currentTimeMillis).toISOString().replace(/[:.]/g, "-")
    const backup = `${file}.bak-${stamp}`
    yield* fs.copyFile(file, backup).pipe(Effect.mapError(ioError("back up")))
    const temporary = path.join(path.dirname(file), `.${path.basename(file)}.doctor-${process.pid}.tmp`)
    yield* fs.writeFile(temporary, keptBytes(bytes, lines)).pipe(
      Effect.zipRight(fs.rename(temporary, file)),
      Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Effect.ignore(fs.remove(temporary)))),
      Effect.mapError(ioError("rewrite"))
    )
    let report = `${file}: repaired; the original is kept as ${backup}\n`
    for (const d of dropped.slice(0, MAX_LISTED)) report += `  dropped line ${d.line}: ${d.reason}\n`
    if (dropped.length > MAX_LISTED) report += `  ... and ${dropped.length - MAX_LISTED} more dropped lines\n`
    if (loaded.tail.truncated) report += `  dropped the incomplete last line (the process stopped while writing it)\n`
    report += `  kept ${loaded.entries} entries; resume it with: keel --resume ${sessionId}\n`
    io.out(report)
  }).pipe(Effect.scoped)
  const exit = await Effect.runPromiseExit(program.pipe(Effect.provide(NodeContext.layer)))
  if (Exit.isSuccess(exit)) return 0
  const failure = describeFailure(exit.cause, false, "this is a bug in keel doctor")
  for (const line of failure.lines) io.err(`keel doctor: ${line}\n`)
  return failure.code
}
