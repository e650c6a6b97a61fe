/**
 * The pure half of session persistence: what to append for a change of the conversation
 * ({@link diff}), how a file's lines are replayed into the conversation and the session's totals
 * ({@link parse}), and how a conversation cut by a crash is made valid again ({@link answerDangling}).
 * No I/O here: `SessionStore` reads and writes the bytes, `TranscriptRecorder` decides when.
 *
 * Rewrites are found by object identity. Messages are immutable and every stage returns its
 * unchanged messages as the same objects (see `Stage`), so a stage's output compared with what the
 * file already holds tells exactly which messages are new: an entry costs what changed, never the
 * whole history.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { AssistantMessage, type ContentBlock, type Message, ToolResultBlock, UserMessage } from "../message/Message.js"
import { interruptedResult } from "../tool/ToolRuntime.js"
import type { PerModel } from "./TokenUsage.js"
import * as TokenUsage from "./TokenUsage.js"
import { CorruptTranscript, ForeignTranscript } from "./TranscriptError.js"
import * as TranscriptEntry from "./TranscriptEntry.js"

/** One op of a rewrite: a range of the previous conversation kept, or a message written inline. @category Models */
export type RewriteOp = { readonly keep: readonly [number, number] } | { readonly message: Message }

/** How the conversation changed since the file last described it. @category Models */
export type Change =
  | { readonly _tag: "Unchanged" }
  | { readonly _tag: "Append"; readonly messages: ReadonlyArray<Message> }
  | { readonly _tag: "Rewrite"; readonly from: number; readonly length: number; readonly ops: ReadonlyArray<RewriteOp> }

/**
 * The change from `persisted` (the conversation the file describes) to `current`. When `current`
 * starts with `persisted` (same objects) the new messages are appended; otherwise `current` is
 * described as ranges of `persisted` kept in order and new messages inline. Linear in the lengths,
 * by pointer comparisons.
 *
 * @category Diffing
 */
export const diff = (persisted: ReadonlyArray<Message>, current: ReadonlyArray<Message>): Change => {
  if (current === persisted) return { _tag: "Unchanged" }
  if (current.length >= persisted.length) {
    let i = 0
    while (i < persisted.length && current[i] === persisted[i]) i++
    if (i === persisted.length) {
      return current.length === persisted.length
        ? { _tag: "Unchanged" }
        : { _tag: "Append", messages: current.slice(persisted.length) }
    }
  }
  const index = new Map<Message, number>()
  for (let i = 0; i < persisted.length; i++) if (!index.has(persisted[i]!)) index.set(persisted[i]!, i)
  const ops: Array<RewriteOp> = []
  let from = -1
  let to = -1
  const flush = () => {
    if (from >= 0) ops.push({ keep: [from, to] })
    from = -1
  }
  for (const m of current) {
    const j = index.get(m)
    if (j !== undefined && from >= 0 && j === to) {
      to++
      continue
    }
    flush()
    if (j !== undefined) {
      from = j
      to = j + 1
    } else {
      ops.push({ message: m })
    }
  }
  flush()
  return { _tag: "Rewrite", from: persisted.length, length: current.length, ops }
}

/**
 * `messages` with every `tool_use` answered: a call whose result never made it to the transcript
 * (the process stopped while it ran) gets the "interrupted" result the turn loop gives an
 * interrupted call. Unchanged messages stay the same objects.
 *
 * @category Repair
 */
export const answerDangling = (messages: ReadonlyArray<Message>): ReadonlyArray<Message> => {
  let out: Array<Message> | undefined
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!
    if (!(m instanceof AssistantMessage)) continue
    const uses = m.toolUses
    if (uses.length === 0) continue
    const next = messages[i + 1]
    const results = next instanceof UserMessage ? next.toolResults : []
    const answered = new Set(results.map((r) => r.tool_use_id))
    const missing = uses.filter((u) => !answered.has(u.id)).map((u) => interruptedResult(u.id))
    if (missing.length === 0) continue
    out ??= [...messages]
    if (results.length > 0) {
      const others = (next as UserMessage).content as ReadonlyArray<ContentBlock>
      out[i + 1] = new UserMessage({
        content: [...results, ...missing, ...others.filter((b) => !(b instanceof ToolResultBlock))]
      })
    } else {
      out.splice(i + 1, 0, new UserMessage({ content: missing }))
    }
  }
  return out ?? messages
}

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
}

/** The text of a prompt (a user message without tool results), if it is one. @category Accessors */
export const promptText = (message: Message): string | undefined => {
  if (!(message instanceof UserMessage)) return undefined
  if (typeof message.content === "string") return message.content
  if (message.content.some((b) => b instanceof ToolResultBlock)) return undefined
  const texts = message.content.flatMap((b) => ("text" in b && typeof b.text === "string" ? [b.text] : []))
  return texts.length > 0 ? texts.join("\n") : undefined
}

const decoder = new TextDecoder("utf-8", { fatal: true })

const firstIssue = (error: ParseResult.ParseError): string => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  if (issue === undefined) return "it is not shaped as an entry"
  return issue.path.length === 0 ? issue.message : `${issue.path.join(".")}: ${issue.message}`
}

const decoders = Object.fromEntries(
  Object.entries(TranscriptEntry.schemas).map(([type, schema]) => [
    type,
    Schema.decodeUnknownEither(schema as Schema.Schema<TranscriptEntry.Entry, unknown>, { errors: "first" })
  ])
) as Record<string, (u: unknown) => Either.Either<TranscriptEntry.Entry, ParseResult.ParseError>>

/**
 * Replays a transcript's bytes (`file` names it in errors; `sessionId` is the session it must
 * belong to). A last line without a newline that does not parse was cut by a crash while being
 * written: it is skipped, with a warning. Anything else that does not replay is an error naming the
 * line: `ForeignTranscript` when the file is not a Keel transcript of this session (decided on its
 * first entry, or a newer format anywhere), `CorruptTranscript` otherwise. Blank lines are ignored.
 * Linear in the file's size.
 *
 * @category Parsing
 */
export const parse = (
  bytes: Uint8Array,
  options: { readonly file: string; readonly sessionId: string }
): Either.Either<Loaded, CorruptTranscript | ForeignTranscript> => {
  const { file, sessionId } = options
  const corrupt = (line: number, reason: string) => Either.left(new CorruptTranscript({ file, line, reason }))
  const foreign = (line: number, reason: string) => Either.left(new ForeignTranscript({ file, line, reason }))

  let messages: Array<Message> = []
  let usage: PerModel = new Map()
  const fileState = new Map<string, number>()
  let model: string | undefined
  let lastModel: string | undefined
  let lastUuid: string | null = null
  let entries = 0
  let origin: Loaded["origin"]
  let firstPrompt: string | undefined
  const warnings: Array<string> = []
  let validBytes = 0
  let truncated = false
  let missingNewline = false

  let start = 0
  let lineNo = 0
  while (start < bytes.length) {
    let end = bytes.indexOf(0x0a, start)
    const terminated = end >= 0
    if (!terminated) end = bytes.length
    lineNo++
    const next = terminated ? end + 1 : end
    const cut = () => {
      truncated = true
      warnings.push(
        `${file}:${lineNo}: the last line is incomplete (the process stopped while writing it); it was skipped`
      )
    }
    let text: string
    try {
      text = decoder.decode(bytes.subarray(start, end))
    } catch {
      if (!terminated) {
        cut()
        break
      }
      return entries === 0 ? foreign(lineNo, "it is not UTF-8 text") : corrupt(lineNo, "it is not UTF-8 text")
    }
    start = next
    if (text.trim().length === 0) {
      if (terminated) validBytes = next
      continue
    }
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (e) {
      if (!terminated) {
        cut()
        break
      }
      const why = `it is not JSON (${e instanceof Error ? e.message : String(e)})`
      return entries === 0 ? foreign(lineNo, why) : corrupt(lineNo, why)
    }
    const record = typeof json === "object" && json !== null && !Array.isArray(json)
      ? json as Record<string, unknown>
      : undefined
    const version = record?.["version"]
    if (typeof version === "number" && version > TranscriptEntry.VERSION) {
      return foreign(lineNo, `it is in transcript format ${version}, newer than this Keel reads (${TranscriptEntry.VERSION})`)
    }
    if (entries === 0 && version !== TranscriptEntry.VERSION) {
      return foreign(
        lineNo,
        typeof version === "string"
          ? `its entries carry version "${version}", another program's, not Keel's format ${TranscriptEntry.VERSION}`
          : `its first entry has no Keel format version (${TranscriptEntry.VERSION})`
      )
    }
    const type = record?.["type"]
    const decode = typeof type === "string" ? decoders[type] : undefined
    if (decode === undefined) {
      return corrupt(lineNo, typeof type === "string" ? `unknown entry type "${type}"` : "an entry without a type")
    }
    const decoded = decode(json)
    if (Either.isLeft(decoded)) return corrupt(lineNo, `a "${String(type)}" entry that does not decode: ${firstIssue(decoded.left)}`)
    const entry = decoded.right
    if (entry.sessionId !== sessionId) {
      return entries === 0
        ? foreign(lineNo, `it is the transcript of session ${entry.sessionId}`)
        : corrupt(lineNo, `an entry of session ${entry.sessionId} in the transcript of ${sessionId}`)
    }
    if (entry.parentUuid !== lastUuid) {
      return corrupt(
        lineNo,
        `its parentUuid ${entry.parentUuid ?? "null"} does not follow the previous entry (${lastUuid ?? "none"})`
      )
    }
    switch (entry.type) {
      case "user":
      case "assistant":
        messages.push(entry.message)
        if (firstPrompt === undefined) firstPrompt = promptText(entry.message)
        break
      case "rewrite": {
        if (entry.from !== messages.length) {
          return corrupt(lineNo, `a rewrite of ${entry.from} messages, but the conversation before it has ${messages.length}`)
        }
        const rewritten: Array<Message> = []
        for (const op of entry.ops) {
          if ("keep" in op) {
            const [a, b] = op.keep
            if (a < 0 || b <= a || b > messages.length) {
              return corrupt(lineNo, `a rewrite keeps messages [${a}, ${b}) of ${messages.length}`)
            }
            for (let i = a; i < b; i++) rewritten.push(messages[i]!)
          } else {
            rewritten.push(op.message)
          }
        }
        if (rewritten.length !== entry.length) {
          return corrupt(lineNo, `a rewrite that makes ${rewritten.length} messages, not the ${entry.length} it records`)
        }
        messages = rewritten
        break
      }
      case "model":
        lastModel = entry.model
        if (!entry.fallback) model = entry.model
        break
      case "usage": {
        const next = new Map<string, TokenUsage.TokenUsage>()
        for (const [name, counters] of Object.entries(entry.models)) next.set(name, counters)
        usage = next
        break
      }
      case "file_state":
        for (const [path, mtime] of Object.entries(entry.files)) fileState.set(path, mtime)
        break
      case "origin":
        origin = { source: entry.source, from: entry.from }
        break
    }
    lastUuid = entry.uuid
    entries++
    validBytes = next
    missingNewline = !terminated
  }
  return Either.right({
    sessionId,
    file,
    messages,
    usage,
    fileState,
    model,
    lastModel,
    lastUuid,
    entries,
    warnings,
    origin,
    firstPrompt,
    tail: { validBytes, truncated, missingNewline }
  })
}
