/**
 * Where session transcripts live: one append-only JSONL file per session,
 * `<home>/projects/<cwd as a slug>/<session id>.jsonl` (`home` is `KEEL_HOME`, default `~/.keel`;
 * the slug is Claude Code's: every character but letters and digits becomes `-`, long paths cut at
 * 200 characters plus a hash). The store appends whole lines (one write per batch, `O_APPEND`, on a
 * file held open until the next flush: see `TranscriptAppender`),
 * syncs on request, replays a file (`Transcript.parse`) and lists a folder's sessions.
 *
 * It never rewrites a file: a new session's file is created exclusively (an existing file with that
 * id is an error, not overwritten), and the only change to an existing file other than appending is
 * cutting an incomplete last line (which was never a final entry) before continuing it.
 *
 * `layerFile` stores on the file system (`@effect/platform`), `layerMemory` in memory (tests,
 * embedders with their own persistence), `layerNoop` nowhere.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { createHash } from "node:crypto"
import * as nodePath from "node:path"
import { homeConfig } from "../context/ContextManagement.js"
import * as Transcript from "./Transcript.js"
import * as TranscriptEntry from "./TranscriptEntry.js"
import {
  type CorruptTranscript,
  type ForeignTranscript,
  type LoadError,
  SessionExists,
  type SessionLocked,
  SessionNotFound,
  TranscriptIoError
} from "./TranscriptError.js"
import { fileSystemFiles, type Files, memoryFiles } from "./TranscriptFiles.js"

/** The file operations a store is made of, on disk and in memory (see `TranscriptFiles`). */
export { fileSystemFiles, type Files, memoryFiles } from "./TranscriptFiles.js"

/** A session of a folder, as listings show it. @category Models */
export interface SessionInfo {
  readonly sessionId: string
  readonly file: string
  /** When the file was last written (ms since the epoch). */
  readonly modifiedAt: number
  readonly size: number
  /** The text of the first prompt, cut to 200 characters (read from the start of the file). */
  readonly firstPrompt: string | undefined
}

/** Options of an append. @category Models */
export interface AppendOptions {
  /** The session's first write: create the file, failing with `SessionExists` if it is there. */
  readonly create?: boolean | undefined
  /** Start with a newline: the file's last entry has none (see `Transcript.Tail`). */
  readonly newlineFirst?: boolean | undefined
}

/** @category Models */
export interface Service {
  /** The folder holding the transcripts of sessions run in `cwd`. */
  readonly directory: (cwd: string) => string
  /** The transcript of a session run in `cwd`. */
  readonly fileOf: (cwd: string, sessionId: string) => string
  /** Appends entries, as whole lines in one write. */
  readonly append: (
    cwd: string,
    sessionId: string,
    entries: ReadonlyArray<TranscriptEntry.Entry>,
    options?: AppendOptions
  ) => Effect.Effect<void, TranscriptIoError | SessionExists>
  /** Flushes a transcript to disk (`fsync`). */
  readonly sync: (cwd: string, sessionId: string) => Effect.Effect<void, TranscriptIoError>
  /** Cuts a loaded transcript's incomplete last line (see `Transcript.Tail.truncated`) so it can be continued. */
  readonly cutTail: (cwd: string, loaded: Transcript.Loaded) => Effect.Effect<void, TranscriptIoError>
  /** Replays a session's transcript. */
  readonly load: (cwd: string, sessionId: string) => Effect.Effect<Transcript.Loaded, LoadError>
  /** Replays a session's transcript and keeps its entries, in order (for read models and exports). */
  readonly loadEntries: (cwd: string, sessionId: string) => Effect.Effect<Transcript.Decoded, LoadError>
  /** Whether a session of `cwd` has a transcript. */
  readonly exists: (cwd: string, sessionId: string) => Effect.Effect<boolean, TranscriptIoError>
  /** The sessions of `cwd`, most recently written first. */
  readonly list: (cwd: string) => Effect.Effect<ReadonlyArray<SessionInfo>, TranscriptIoError>
  /** The most recently written session of `cwd` (`--continue`), if any. */
  readonly latest: (cwd: string) => Effect.Effect<Option.Option<SessionInfo>, TranscriptIoError>
  /**
   * Holds session `sessionId`'s write lock for the life of the scope (see `SessionLock`): one
   * writer per session, across processes and within this one.
   */
  readonly lock: (cwd: string, sessionId: string) => Effect.Effect<void, SessionLocked | TranscriptIoError, Scope.Scope>
}

/** @category Context */
export class SessionStore extends Context.Tag("@keel/core/SessionStore")<SessionStore, Service>() {}

/** The longest slug kept whole (Claude Code's 200). @category Constants */
export const MAX_SLUG = 200

/**
 * A folder's name for `cwd`: every character but ASCII letters and digits becomes `-`; a slug
 * longer than {@link MAX_SLUG} is cut and a hash of the whole path added, so long paths stay apart.
 *
 * @category Paths
 */
export const slug = (cwd: string): string => {
  const s = cwd.replace(/[^a-zA-Z0-9]/g, "-")
  return s.length <= MAX_SLUG ? s : `${s.slice(0, MAX_SLUG)}-${createHash("sha256").update(cwd).digest("hex").slice(0, 12)}`
}

/** Whether `id` can name a session file (letters, digits, `.`, `_`, `-`; not starting with `.`). @category Paths */
export const isValidSessionId = (id: string): boolean => /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/.test(id)


const encoder = new TextEncoder()
const HEAD_BYTES = 64 * 1024

/** The first prompt in the start of a transcript, from the raw lines (a listing does not replay files). */
const firstPromptOf = (head: Uint8Array): string | undefined => {
  const text = new TextDecoder().decode(head)
  for (const line of text.split("\n")) {
    let entry: any
    try {
      entry = JSON.parse(line)
    } catch {
      continue
    }
    if (entry?.type !== "user") continue
    const content = entry.message?.content
    const prompt = typeof content === "string"
      ? content
      : Array.isArray(content) && !content.some((b: any) => b?.type === "tool_result")
      ? content.filter((b: any) => b?.type === "text").map((b: any) => String(b.text)).join("\n")
      : undefined
    if (prompt !== undefined && prompt.length > 0) return prompt.length > 200 ? `${prompt.slice(0, 199)}…` : prompt
  }
  return undefined
}

/**
 * A store over `files`, with transcripts under `<home>/projects/`.
 *
 * @category Constructors
 */
export const make = (options: { readonly home: string; readonly files: Files }): Service => {
  const { files } = options
  const directory = (cwd: string) => nodePath.join(options.home, "projects", slug(cwd))
  const fileOf = (cwd: string, sessionId: string) => nodePath.join(directory(cwd), `${sessionId}.jsonl`)
  const invalid = (cwd: string, sessionId: string, operation: string) =>
    new TranscriptIoError({ file: fileOf(cwd, "<id>"), operation, reason: `${JSON.stringify(sessionId)} is not a valid session id` })

  const list = (cwd: string) =>
    Effect.gen(function*() {
      const dir = directory(cwd)
      const found = yield* files.list(dir)
      // A stable sort: files written in the same millisecond keep the order the backend lists them in.
      const sorted = [...found].sort((a, b) => b.modifiedAt - a.modifiedAt)
      const out: Array<SessionInfo> = []
      for (const f of sorted) {
        const file = nodePath.join(dir, f.name)
        const head = yield* Effect.orElseSucceed(files.head(file, HEAD_BYTES), () => new Uint8Array())
        out.push({
          sessionId: f.name.slice(0, -".jsonl".length),
          file,
          modifiedAt: f.modifiedAt,
          size: f.size,
          firstPrompt: firstPromptOf(head)
        })
      }
      return out as ReadonlyArray<SessionInfo>
    })

  /** Reads session `sessionId`'s file and replays it with `parse` (`Transcript.parse` or `parseEntries`). */
  const replay = <A>(
    cwd: string,
    sessionId: string,
    parse: (
      bytes: Uint8Array,
      options: { readonly file: string; readonly sessionId: string }
    ) => Either.Either<A, CorruptTranscript | ForeignTranscript>
  ): Effect.Effect<A, LoadError> =>
    Effect.gen(function*() {
      if (!isValidSessionId(sessionId)) {
        return yield* Effect.fail(
          new SessionNotFound({
            sessionId,
            cwd,
            directory: directory(cwd),
            known: [],
            reason: "that is not a session id (letters, digits, '.', '_' and '-')"
          })
        )
      }
      const file = fileOf(cwd, sessionId)
      const bytes = yield* files.read(file)
      if (Option.isNone(bytes)) {
        const known = yield* Effect.orElseSucceed(list(cwd), () => [])
        return yield* Effect.fail(
          new SessionNotFound({ sessionId, cwd, directory: directory(cwd), known: known.map((s) => s.sessionId) })
        )
      }
      const parsed = parse(bytes.value, { file, sessionId })
      return Either.isLeft(parsed) ? yield* Effect.fail(parsed.left) : parsed.right
    })

  return {
    directory,
    fileOf,
    append: (cwd, sessionId, entries, appendOptions = {}) =>
      Effect.gen(function*() {
        if (!isValidSessionId(sessionId)) return yield* Effect.fail(invalid(cwd, sessionId, "write"))
        const file = fileOf(cwd, sessionId)
        let text = appendOptions.newlineFirst === true ? "\n" : ""
        for (const entry of entries) text += TranscriptEntry.encodeLine(entry)
        const created = yield* files.append(file, encoder.encode(text), appendOptions.create === true)
        if (!created) return yield* Effect.fail(new SessionExists({ sessionId, file }))
      }),
    sync: (cwd, sessionId) => files.sync(fileOf(cwd, sessionId)),
    cutTail: (cwd, loaded) =>
      loaded.tail.truncated ? files.truncate(fileOf(cwd, loaded.sessionId), loaded.tail.validBytes) : Effect.void,
    load: (cwd, sessionId) => replay(cwd, sessionId, Transcript.parse),
    loadEntries: (cwd, sessionId) => replay(cwd, sessionId, Transcript.parseEntries),
    exists: (cwd, sessionId) =>
      isValidSessionId(sessionId)
        ? Effect.map(files.list(directory(cwd)), (fs) => fs.some((f) => f.name === `${sessionId}.jsonl`))
        : Effect.succeed(false),
    list,
    latest: (cwd) => Effect.map(list(cwd), (sessions) => Option.fromNullable(sessions[0])),
    lock: (cwd, sessionId) =>
      isValidSessionId(sessionId) ? files.lock(sessionId, fileOf(cwd, sessionId)) : Effect.fail(invalid(cwd, sessionId, "lock"))
  }
}

/** Loads the most recently written session of `cwd`; `SessionNotFound` when there is none. @category Loading */
export const loadLatest = (store: Service, cwd: string): Effect.Effect<Transcript.Loaded, LoadError> =>
  Effect.flatMap(store.latest(cwd), (latest) =>
    Option.isNone(latest)
      ? Effect.fail(new SessionNotFound({ cwd, directory: store.directory(cwd), known: [] }))
      : store.load(cwd, latest.value.sessionId))

/** Transcripts on the file system under `home` (`<home>/projects/...`). @category Layers */
export const layerFile = (options: { readonly home: string }): Layer.Layer<SessionStore, never, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(
    SessionStore,
    Effect.map(Effect.all([FileSystem.FileSystem, Path.Path]), ([fs, path]) =>
      make({ home: options.home, files: fileSystemFiles(fs, path) }))
  )

/** {@link layerFile} under `KEEL_HOME` (default `~/.keel`). @category Layers */
export const layerConfig: Layer.Layer<SessionStore, ConfigError.ConfigError, FileSystem.FileSystem | Path.Path> = Layer
  .unwrapEffect(Effect.suspend(() => Effect.map(homeConfig, (home) => layerFile({ home }))))

/** Transcripts in memory, under a notional `home` (default `/keel`). @category Layers */
export const layerMemory = (options: { readonly home?: string } = {}): Layer.Layer<SessionStore> =>
  Layer.sync(SessionStore, () => make({ home: options.home ?? "/keel", files: memoryFiles() }))

/**
 * A store that keeps nothing: appends are dropped, no session is found, listings are empty. (A
 * session with `persist: false` writes nothing either, but can still resume from a real store.)
 *
 * @category Layers
 */
export const layerNoop: Layer.Layer<SessionStore> = Layer.succeed(SessionStore, {
  directory: (cwd) => nodePath.join("/dev/null", slug(cwd)),
  fileOf: (cwd, sessionId) => nodePath.join("/dev/null", slug(cwd), `${sessionId}.jsonl`),
  append: () => Effect.void,
  sync: () => Effect.void,
  cutTail: () => Effect.void,
  load: (cwd, sessionId) =>
    Effect.fail(new SessionNotFound({ sessionId, cwd, directory: "nowhere", known: [], reason: "sessions are not kept" })),
  loadEntries: (cwd, sessionId) =>
    Effect.fail(new SessionNotFound({ sessionId, cwd, directory: "nowhere", known: [], reason: "sessions are not kept" })),
  exists: () => Effect.succeed(false),
  list: () => Effect.succeed([]),
  latest: () => Effect.succeed(Option.none()),
  lock: () => Effect.void
})
