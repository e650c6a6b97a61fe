/**
 * What Write and Edit share: the check that a file about to change was read in this session and has
 * not changed since (its mtime), and the atomic write (a temporary file in the same folder, then a
 * rename, parent folders created) that records the new mtime, and the patch of a change as their
 * structured results give it. The write keeps an existing file's permission bits and writes through
 * a symlink to its target, so the link stays a link; the permission check resolves links the same
 * way (`Permissions.insideWorkspace`), so a link that leads outside the workspace was asked about as
 * outside. A rename cannot keep the file's owner (when another user owns it) or its hard links (they
 * keep the old content).
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import { FileState, type SessionState, Tool } from "@keel/core"
import { structuredPatch } from "diff"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { rmSync } from "node:fs"
import * as RegularFile from "./RegularFile.js"

const mtimeOf = (info: FileSystem.File.Info) => (info.mtime._tag === "Some" ? info.mtime.value.getTime() : 0)

/** The file's info, or `undefined` when it does not exist; fails when it is not a regular file. @category Reading */
export const statIfExists = (fs: FileSystem.FileSystem, file: string) =>
  // A pipe, socket or device is refused before anything reads or replaces it (reading a pipe blocks).
  RegularFile.checkTarget(file).pipe(
    Effect.catchAll((e) => Tool.fail(e.message)),
    Effect.zipRight(
      fs.stat(file).pipe(
        Effect.map((info): FileSystem.File.Info | undefined => info),
        Effect.catchAll((e) =>
          e._tag === "SystemError" && e.reason === "NotFound" ? Effect.succeed(undefined) : Tool.fail(`Cannot access ${file}: ${e.message}`)
        )
      )
    )
  )

/**
 * Fails (with a message the model can act on) unless `file`, which exists, was read in this
 * session and is unchanged since.
 *
 * @category Checks
 */
export const requireFreshRead = (
  file: string,
  info: FileSystem.File.Info
): Effect.Effect<void, Tool.ToolError, SessionState.SessionState> =>
  Effect.gen(function*() {
    if (info.type === "Directory") return yield* Tool.fail(`${file} is a directory, not a file.`)
    const seen = yield* FileState.lastSeen(file)
    if (seen === undefined) {
      return yield* Tool.fail(`File has not been read yet: ${file}. Read it first before writing to it.`)
    }
    if (seen !== mtimeOf(info)) {
      return yield* Tool.fail(
        `File has been modified since read, either by the user or by another program: ${file}. Read it again before writing to it.`
      )
    }
  })

/** Temporary files made by this process: with its pid, a name no other write uses. */
let temporaries = 0

/** The temporary files of writes under way, removed if the process exits before they end (a forced exit). */
const pending = new Set<string>()
process.on("exit", () => {
  for (const temp of pending) rmSync(temp, { force: true })
})

/**
 * Writes `content` to `file` atomically, creating parent folders, and records the new mtime. An
 * existing file keeps its permission bits; a symlink is written through (its target is replaced).
 *
 * @category Writing
 */
export const writeAtomically = (
  fs: FileSystem.FileSystem,
  path: Path.Path,
  file: string,
  content: string
): Effect.Effect<void, Tool.ToolError, SessionState.SessionState> =>
  Effect.gen(function*() {
    // A missing file (or a dangling link) resolves to itself.
    const target = yield* fs.realPath(file).pipe(Effect.orElseSucceed(() => file))
    const before = yield* statIfExists(fs, target)
    const dir = path.dirname(target)
    const temp = path.join(dir, `.${path.basename(target)}.keel-${process.pid}-${++temporaries}.tmp`)
    // The temporary file is written whole (an interruption waits for it: a write cannot be cut
    // short), then renamed unless the call was interrupted meanwhile; whatever the end, it is gone.
    yield* Effect.acquireUseRelease(
      Effect.sync(() => pending.add(temp)).pipe(
        Effect.zipRight(fs.makeDirectory(dir, { recursive: true })),
        Effect.zipRight(fs.writeFileString(temp, content)),
        Effect.zipRight(before === undefined ? Effect.void : fs.chmod(temp, before.mode & 0o7777)),
        Effect.either
      ),
      (written) => (written._tag === "Left" ? Effect.fail(written.left) : fs.rename(temp, target)),
      (_, exit) =>
        Effect.zipRight(
          Exit.isSuccess(exit) ? Effect.void : Effect.ignore(fs.remove(temp)),
          Effect.sync(() => pending.delete(temp))
        )
    ).pipe(Effect.catchAll((e) => Tool.fail(`Cannot write ${file}: ${e.message}`)))
    const info = yield* fs.stat(file).pipe(Effect.catchAll((e) => Tool.fail(`Cannot access ${file}: ${e.message}`)))
    yield* FileState.record(file, mtimeOf(info))
  })

/** One hunk of a change, as Claude Code's Edit and Write results give it (`structuredPatch`). @category Models */
export interface Hunk {
  readonly oldStart: number
  readonly oldLines: number
  readonly newStart: number
  readonly newLines: number
  /** The hunk's lines, each prefixed by ` ` (context), `-` (removed) or `+` (added). */
  readonly lines: ReadonlyArray<string>
}

/** The hunks turning `before` into `after`, with three lines of context. @category Diffing */
export const patchOf = (before: string, after: string): ReadonlyArray<Hunk> =>
  structuredPatch("a", "b", before, after, undefined, undefined, { context: 3 }).hunks.map((h) => ({
    oldStart: h.oldStart,
    oldLines: h.oldLines,
    newStart: h.newStart,
    newLines: h.newLines,
    lines: h.lines.filter((l) => !l.startsWith("\\"))
  }))
