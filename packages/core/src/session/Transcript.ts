/**
 * The pure half of session persistence: how a file's lines are replayed into the conversation and
 * the session's totals ({@link parse}), and how a conversation cut by a crash is made valid again
 * ({@link answerDangling}); what to append for a change of the conversation is `TranscriptDiff`
 * (re-exported here as {@link diff}). No I/O here: `SessionStore` reads and writes the bytes,
 * `TranscriptRecorder` decides when.
 *
 * @since 0.1.0
 */
import type * as Action from "../action/Action.js"
import type * as Admission from "../admission/Admission.js"
import type * as Goal from "../goal/Goal.js"
import * as Either from "effect/Either"
import { type Message, ToolResultBlock, UserMessage } from "../message/Message.js"
import type { PerModel } from "./TokenUsage.js"
import * as TokenUsage from "./TokenUsage.js"
import { CorruptTranscript, ForeignTranscript } from "./TranscriptError.js"
import * as TranscriptEntry from "./TranscriptEntry.js"
import { corrupt, lineText, readFileText, readLine, readText, type Rejection, toEntry } from "./TranscriptLine.js"
import * as TurnEnvelope from "./TurnEnvelope.js"

export { type Change, diff, type RewriteOp } from "./TranscriptDiff.js"
export { answerDangling } from "./TranscriptRepair.js"

/** Where a file's valid content ends, for a writer that continues it. @category Models */
export interface Tail {
  /** Bytes up to the end of the last complete entry (its newline included, when it has one). */
  readonly validBytes: number
  /** The last line was cut while it was written, and skipped. */
  readonly truncated: boolean
  /** The last complete entry has no newline after it (the next append must start with one). */
  readonly missingNewline: boolean
}

/** A transcript replayed: the conversation the model last saw and the session's totals. @category Models */
export interface Loaded {
  readonly sessionId: string
  readonly file: string
  /** The conversation as the transcript holds it (see {@link answerDangling} for a sendable one). */
  readonly messages: ReadonlyArray<Message>
  readonly usage: PerModel
  readonly fileState: ReadonlyMap<string, number>
  /** The model of the last call that was not a fallback, if any. */
  readonly model: string | undefined
  /** The model of the last call. */
  readonly lastModel: string | undefined
  /** The last entry's uuid: the next entry's `parentUuid`. */
  readonly lastUuid: string | null
  readonly entries: number
  /** What was skipped (a truncated last line), for people. */
  readonly warnings: ReadonlyArray<string>
  readonly origin: { readonly source: "fork" | "clear"; readonly from: string } | undefined
  /** The first prompt's text, for listings. */
  readonly firstPrompt: string | undefined
  readonly tail: Tail
  /** The session's goal as last saved (`undefined`: none, or cleared). */
  readonly goal: Goal.Goal | undefined
  /** The inputs that were waiting for their turn when the file was last written. */
  readonly queued: ReadonlyArray<Admission.Saved>
  /** What happened to the session's pending actions, in order (see `Action.pendingAfter`). */
  readonly actions: ReadonlyArray<Action.Event>
  /** The turn envelopes, in order (see `TurnEnvelope`); none in a transcript written before them. */
  readonly envelopes: ReadonlyArray<TurnEnvelope.TurnEnvelope>
  /** The system prompts the file stores, by sha256: what envelopes name. */
  readonly prompts: ReadonlyMap<string, TurnEnvelope.SystemPromptRecord>
  /** The uuid of each message's `user`/`assistant` entry (a message a rewrite wrote inline has none). */
  readonly uuids: WeakMap<Message, string>
}

/** The text of a prompt (a user message without tool results), if it is one. @category Accessors */
export const promptText = (message: Message): string | undefined => {
  if (!(message instanceof UserMessage)) return undefined
  if (typeof message.content === "string") return message.content
  if (message.content.some((b) => b instanceof ToolResultBlock)) return undefined
  const texts = message.content.flatMap((b) => ("text" in b && typeof b.text === "string" ? [b.text] : []))
  return texts.length > 0 ? texts.join("\n") : undefined
}

/** The conversation a `rewrite` entry makes of `messages`: its kept ranges and inline messages, checked. */
const rewrite = (
  messages: ReadonlyArray<Message>,
  entry: typeof TranscriptEntry.RewriteEntry.Type
): Either.Either<Array<Message>, Rejection> => {
  if (entry.from !== messages.length) {
    return corrupt(`a rewrite of ${entry.from} messages, but the conversation before it has ${messages.length}`)
  }
  const rewritten: Array<Message> = []
  for (const op of entry.ops) {
    if ("keep" in op) {
      const [a, b] = op.keep
      if (a < 0 || b <= a || b > messages.length) {
        return corrupt(`a rewrite keeps messages [${a}, ${b}) of ${messages.length}`)
      }
      for (let i = a; i < b; i++) rewritten.push(messages[i]!)
    } else {
      rewritten.push(op.message)
    }
  }
  if (rewritten.length !== entry.length) {
    return corrupt(`a rewrite that makes ${rewritten.length} messages, not the ${entry.length} it records`)
  }
  return Either.right(rewritten)
}

/** A replay under way: what the entries so far made of the session, and where the file's valid content ends. */
interface Replay {
  messages: Array<Message>
  /** The last `usage` entry's totals (each entry holds them all): made a map once, at the end. */
  usage: Readonly<Record<string, TokenUsage.TokenUsage>> | undefined
  readonly fileState: Map<string, number>
  model: string | undefined
  lastModel: string | undefined
  lastUuid: string | null
  entries: number
  origin: Loaded["origin"]
  firstPrompt: string | undefined
  goal: Goal.Goal | undefined
  queued: ReadonlyArray<Admission.Saved>
  readonly actions: Array<Action.Event>
  readonly envelopes: Array<TurnEnvelope.TurnEnvelope>
  readonly prompts: Map<string, TurnEnvelope.SystemPromptRecord>
  readonly uuids: WeakMap<Message, string>
  readonly warnings: Array<string>
  validBytes: number
  truncated: boolean
  missingNewline: boolean
}

/** Replays one entry into `replay` (its place in the chain is the caller's to record). */
const apply = (replay: Replay, entry: TranscriptEntry.Entry): Either.Either<void, Rejection> => {
  switch (entry.type) {
    case "user":
    case "assistant":
      replay.messages.push(entry.message)
      replay.uuids.set(entry.message, entry.uuid)
      if (replay.firstPrompt === undefined) replay.firstPrompt = promptText(entry.message)
      break
    case "rewrite": {
      const rewritten = rewrite(replay.messages, entry)
      if (Either.isLeft(rewritten)) return rewritten
      replay.messages = rewritten.right
      break
    }
    case "model":
      replay.lastModel = entry.model
      if (!entry.fallback) replay.model = entry.model
      break
    case "usage":
      replay.usage = entry.models
      break
    case "file_state":
      for (const [path, mtime] of Object.entries(entry.files)) replay.fileState.set(path, mtime)
      break
    case "origin":
      replay.origin = { source: entry.source, from: entry.from }
      break
    case "system_prompt": {
      if (!replay.prompts.has(entry.hash)) {
        replay.prompts.set(entry.hash, {
          hash: entry.hash,
          stable: entry.stable,
          dynamic: entry.dynamic,
          ...(entry.asString === true ? { asString: true } : {})
        })
      }
      break
    }
    case "envelope": {
      if (!replay.prompts.has(entry.systemPrompt)) {
        return corrupt(`an envelope naming system prompt ${entry.systemPrompt}, which no entry before it stores`)
      }
      replay.envelopes.push(TurnEnvelope.fromEntry(entry))
      break
    }
    case "queue":
      replay.queued = entry.queue
      break
    case "action":
      replay.actions.push(entry.action)
      break
    case "goal":
      replay.goal = entry.goal ?? undefined
      break
  }
  return Either.void
}

/**
 * Replays a transcript's bytes (`file` names it in errors; `sessionId` is the session it must
 * belong to). A last line without a newline that does not parse was cut by a crash while being
 * written: it is skipped, with a warning. A torn transcript is not a dead end: a line that does not
 * replay (not JSON, not an entry, an entry that does not decode, one whose `parentUuid` does not
 * follow the last entry replayed, a rewrite or envelope that does not fit) is skipped, with one
 * warning for all of them, and the replay goes on with the lines that chain from the last entry
 * replayed: the session resumes from the longest valid chain from the start, and what it appends
 * next chains from its end, so the file stays resumable (`keel doctor` rewrites it without the
 * skipped lines). The file is refused only when it is not a Keel transcript of this session
 * (`ForeignTranscript`: decided on its first entry, or a newer format anywhere), or its first
 * entry does not replay (`CorruptTranscript`). Blank lines are ignored. Linear in the file's size.
 *
 * @category Parsing
 */
export const parse = (
  bytes: Uint8Array,
  options: { readonly file: string; readonly sessionId: string }
): Either.Either<Loaded, CorruptTranscript | ForeignTranscript> => replayBytes(bytes, options, undefined)

/** A line {@link parse} skipped (1-based), and why. @category Models */
export interface Dropped {
  readonly line: number
  readonly reason: string
}

/** A transcript replayed, with its entries in the order of the file: what read models project. @category Models */
export interface Decoded {
  readonly loaded: Loaded
  /** Every entry that replayed (a truncated last line excluded), decoded. */
  readonly entries: ReadonlyArray<TranscriptEntry.Entry>
  /** Where each of `entries` is in the file: its line's bytes `[start, end)`, newline excluded. */
  readonly lines: ReadonlyArray<readonly [number, number]>
  /** The lines skipped (a truncated last line excluded: see `loaded.tail`). */
  readonly dropped: ReadonlyArray<Dropped>
}

/** What a replay collects besides the `Loaded`. */
interface Collect {
  readonly entries: Array<TranscriptEntry.Entry>
  readonly lines: Array<readonly [number, number]>
  readonly dropped: Array<Dropped>
}

/**
 * {@link parse}, keeping the decoded entries as well: for projections of the facts (the read model,
 * exports), which need each entry in order and not only what they replay to.
 *
 * @category Parsing
 */
export const parseEntries = (
  bytes: Uint8Array,
  options: { readonly file: string; readonly sessionId: string }
): Either.Either<Decoded, CorruptTranscript | ForeignTranscript> => {
  const collect: Collect = { entries: [], lines: [], dropped: [] }
  return Either.map(replayBytes(bytes, options, collect), (loaded) => ({ loaded, ...collect }))
}

/** A replay before the first entry. */
const emptyReplay = (): Replay => ({
  messages: [],
  usage: undefined,
  fileState: new Map(),
  model: undefined,
  lastModel: undefined,
  lastUuid: null,
  entries: 0,
  origin: undefined,
  firstPrompt: undefined,
  goal: undefined,
  queued: [],
  actions: [],
  envelopes: [],
  prompts: new Map(),
  uuids: new WeakMap(),
  warnings: [],
  validBytes: 0,
  truncated: false,
  missingNewline: false
})

/** What a finished replay made of session `sessionId`'s file. */
const loadedOf = (replay: Replay, options: { readonly file: string; readonly sessionId: string }): Loaded => ({
  sessionId: options.sessionId,
  file: options.file,
  messages: replay.messages,
  usage: new Map(Object.entries(replay.usage ?? {})),
  fileState: replay.fileState,
  model: replay.model,
  lastModel: replay.lastModel,
  lastUuid: replay.lastUuid,
  entries: replay.entries,
  warnings: replay.warnings,
  origin: replay.origin,
  firstPrompt: replay.firstPrompt,
  goal: replay.goal,
  queued: replay.queued,
  actions: replay.actions,
  envelopes: replay.envelopes,
  prompts: replay.prompts,
  uuids: replay.uuids,
  tail: { validBytes: replay.validBytes, truncated: replay.truncated, missingNewline: replay.missingNewline }
})

/**
 * Replays entries already decoded and chained (some of a `Decoded`'s, in order): what the file would
 * load as if it held only them. Its `tail` is meaningless (no bytes were read): a transcript made
 * this way is for a new session to start from, never one to continue.
 *
 * @category Parsing
 */
export const replayEntries = (
  entries: ReadonlyArray<TranscriptEntry.Entry>,
  options: { readonly file: string; readonly sessionId: string }
): Either.Either<Loaded, CorruptTranscript> => {
  const replay = emptyReplay()
  for (const [i, entry] of entries.entries()) {
    const applied = apply(replay, entry)
    if (Either.isLeft(applied)) return Either.left(new CorruptTranscript({ file: options.file, line: i + 1, reason: applied.left.reason }))
    replay.lastUuid = entry.uuid
    replay.entries++
  }
  return Either.right(loadedOf(replay, options))
}

/** Replays a file's bytes (see {@link parse}), pushing each entry that replayed onto `collect` when given. */
const replayBytes = (
  bytes: Uint8Array,
  options: { readonly file: string; readonly sessionId: string },
  collect: Collect | undefined
): Either.Either<Loaded, CorruptTranscript | ForeignTranscript> => {
  const { file, sessionId } = options
  const replay = emptyReplay()
  const rejected = (line: number, { foreign, reason }: Rejection) =>
    Either.left(foreign ? new ForeignTranscript({ file, line, reason }) : new CorruptTranscript({ file, line, reason }))

  const dropped: Array<Dropped> = []
  const drop = (line: number, reason: string) => {
    dropped.push({ line, reason })
    collect?.dropped.push({ line, reason })
  }
  // The file decoded once when it is all UTF-8 (else line by line): a line's bytes and its text
  // advance together, the newline byte being the newline character.
  const text = readFileText(bytes)
  let at = 0
  let start = 0
  let lineNo = 0
  while (start < bytes.length) {
    let end = bytes.indexOf(0x0a, start)
    const terminated = end >= 0
    if (!terminated) end = bytes.length
    lineNo++
    const lineStart = start
    const next = terminated ? end + 1 : end
    let line: ReturnType<typeof readLine>
    if (text === undefined) {
      line = readLine(bytes.subarray(start, end))
    } else {
      const textEnd = terminated ? text.indexOf("\n", at) : text.length
      line = readText(lineText(text, at, textEnd))
      at = textEnd + 1
    }
    start = next
    // Nothing up to here is cut when the file is continued, only a torn last line.
    replay.validBytes = next
    replay.missingNewline = !terminated
    if (line._tag === "Blank") continue
    if (line._tag === "Unreadable") {
      if (!terminated) {
        replay.truncated = true
        replay.validBytes = lineStart
        replay.missingNewline = false
        replay.warnings.push(
          `${file}:${lineNo}: the last line is incomplete (the process stopped while writing it); it was skipped`
        )
        break
      }
      if (replay.entries === 0) return rejected(lineNo, { foreign: true, reason: line.reason })
      drop(lineNo, line.reason)
      continue
    }
    const entry = toEntry(line.json, { sessionId, lastUuid: replay.lastUuid, first: replay.entries === 0 })
    if (Either.isLeft(entry)) {
      if (entry.left.foreign || replay.entries === 0) return rejected(lineNo, entry.left)
      drop(lineNo, entry.left.reason)
      continue
    }
    const applied = apply(replay, entry.right)
    if (Either.isLeft(applied)) {
      if (replay.entries === 0) return rejected(lineNo, applied.left)
      drop(lineNo, applied.left.reason)
      continue
    }
    collect?.entries.push(entry.right)
    collect?.lines.push([lineStart, end])
    replay.lastUuid = entry.right.uuid
    replay.entries++
  }
  if (dropped.length > 0) {
    const first = dropped[0]!
    replay.warnings.push(
      `${file}: ${
        dropped.length === 1 ? `line ${first.line} could not be replayed` : `${dropped.length} lines could not be replayed, from line ${first.line}`
      } (${first.reason}); ` +
        `the session resumes from the ${replay.entries} entries that chain from the start, and goes on from the last of them ` +
        `(keel doctor ${sessionId} repairs the file, keeping the original)`
    )
  }
  return Either.right(loadedOf(replay, options))
}
