/**
 * What can go wrong with a session transcript. Each error names the file (and, when it is about the
 * content, the line) and says what is wrong in one line, so a CLI can print `keel: <message>` and an
 * embedder can match on `_tag`. None of them is ever answered by overwriting the file.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * A transcript whose content cannot be replayed: a line in the middle that is not JSON, an entry
 * that is not shaped as one, a broken `parentUuid` chain (two writers, a spliced file), a rewrite
 * that refers to messages that are not there. A truncated *last* line is not corrupt: it is
 * skipped with a warning (see `Transcript.parse`).
 *
 * @category Errors
 */
export class CorruptTranscript extends Schema.TaggedError<CorruptTranscript>("@keel/core/CorruptTranscript")(
  "CorruptTranscript",
  { file: Schema.String, line: Schema.Number, reason: Schema.String }
) {
  /** `<file>:<line>: <reason>`. */
  override get message(): string {
    return `${this.file}:${this.line}: the transcript is corrupt: ${this.reason}; it was left as it is`
  }
}

/**
 * A file that is not a Keel transcript of this session: another program's JSONL (a Claude Code
 * transcript has the same envelope fields but not Keel's format version), a newer format, or a
 * transcript of another session under this session's name.
 *
 * @category Errors
 */
export class ForeignTranscript extends Schema.TaggedError<ForeignTranscript>("@keel/core/ForeignTranscript")(
  "ForeignTranscript",
  { file: Schema.String, line: Schema.Number, reason: Schema.String }
) {
  /** `<file>:<line>: <reason>`. */
  override get message(): string {
    return `${this.file}:${this.line}: not a Keel transcript of this session: ${this.reason}; it was left as it is`
  }
}

/**
 * No transcript for the session asked for (`sessionId`), or none at all in the folder (`--continue`
 * with no `sessionId`). `known` lists the folder's sessions, newest first, so the message can say
 * which ids exist.
 *
 * @category Errors
 */
export class SessionNotFound extends Schema.TaggedError<SessionNotFound>("@keel/core/SessionNotFound")(
  "SessionNotFound",
  {
    sessionId: Schema.optional(Schema.String),
    cwd: Schema.String,
    directory: Schema.String,
    known: Schema.Array(Schema.String),
    reason: Schema.optional(Schema.String)
  }
) {
  /** One line: what was not found, and the sessions there are. */
  override get message(): string {
    const what = this.sessionId === undefined
      ? `no session to continue in ${this.cwd}`
      : `no session ${this.sessionId} in ${this.cwd}`
    if (this.reason !== undefined) return `${what}: ${this.reason}`
    if (this.known.length === 0) return `${what}: this folder has no saved sessions (they would be in ${this.directory})`
    const shown = this.known.slice(0, 5).join(", ")
    const more = this.known.length > 5 ? ` and ${this.known.length - 5} more` : ""
    return `${what}; its sessions, newest first: ${shown}${more} (the .jsonl files in ${this.directory})`
  }
}

/** A new session's id is already taken by a transcript in the folder (`--session-id`). @category Errors */
export class SessionExists extends Schema.TaggedError<SessionExists>("@keel/core/SessionExists")(
  "SessionExists",
  { sessionId: Schema.String, file: Schema.String }
) {
  /** One line, with how to continue that session instead. */
  override get message(): string {
    return `session ${this.sessionId} already exists (${this.file}); resume it with --resume ${this.sessionId}, or pick another id`
  }
}

/**
 * The session is being written by another process (or another session of this one): its lock
 * (`SessionLock`) is held. `pid`, `host` and `startedAt` say by whom, when the lock file says.
 *
 * @category Errors
 */
export class SessionLocked extends Schema.TaggedError<SessionLocked>("@keel/core/SessionLocked")(
  "SessionLocked",
  {
    sessionId: Schema.String,
    lockFile: Schema.String,
    pid: Schema.optional(Schema.Number),
    host: Schema.optional(Schema.String),
    startedAt: Schema.optional(Schema.String),
    /** Taken on another host: never taken over, it has to be removed by hand once that host is done. */
    foreignHost: Schema.Boolean
  }
) {
  /** One line: who holds it since when, and what to do. */
  override get message(): string {
    const holder = this.pid === undefined
      ? `a lock file that cannot be read (${this.lockFile})`
      : `pid ${this.pid} on host ${this.host ?? "?"}${this.startedAt === undefined ? "" : ` (since ${this.startedAt})`}`
    const foreign = this.foreignHost ? `; if that host no longer runs it, remove ${this.lockFile}` : ""
    return `session ${this.sessionId} is in use by ${holder}; wait for it to finish, or use --fork-session to continue in a new session${foreign}`
  }
}

/** Reading or writing a transcript failed at the file system level. @category Errors */
export class TranscriptIoError extends Schema.TaggedError<TranscriptIoError>("@keel/core/TranscriptIoError")(
  "TranscriptIoError",
  { file: Schema.String, operation: Schema.String, reason: Schema.String }
) {
  /** One line: the operation, the file and the system's reason. */
  override get message(): string {
    return `could not ${this.operation} ${this.file}: ${this.reason}`
  }
}

/**
 * The message a session is to be resumed at (`resumeSessionAt`, `--resume-session-at`) is not one
 * of its `user` or `assistant` messages: no entry of its transcript has that uuid (`found` absent),
 * or the entry that has it is not a message (`found`: its type).
 *
 * @category Errors
 */
export class MessageNotFound extends Schema.TaggedError<MessageNotFound>("@keel/core/MessageNotFound")(
  "MessageNotFound",
  { sessionId: Schema.String, uuid: Schema.String, file: Schema.String, found: Schema.optional(Schema.String) }
) {
  /** One line: what was asked, what the transcript holds, and what to pass instead. */
  override get message(): string {
    const what = this.found === undefined ? "no entry with that uuid" : `a ${this.found} entry with that uuid, not a message`
    return `session ${this.sessionId} has no user or assistant message ${this.uuid} (${this.file} has ${what}); ` +
      `pass the uuid of one of its user or assistant messages, as its stream-json output (--output-format stream-json --verbose) or its .jsonl entries give it; nothing was written`
  }
}

/** Everything loading a transcript can fail with. @category Errors */
export type LoadError =
  | SessionNotFound
  | CorruptTranscript
  | ForeignTranscript
  | TranscriptIoError
  | SessionLocked
  | MessageNotFound
