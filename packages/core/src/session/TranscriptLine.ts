/**
 * One line of a transcript file, read: its bytes as UTF-8 JSON ({@link readLine}), then as an entry of
 * this session's chain in Keel's format ({@link toEntry}), or why not ({@link Rejection}: the file
 * is corrupt, or not a Keel transcript of this session at all). `Transcript` replays the entries.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as TranscriptEntry from "./TranscriptEntry.js"
import * as TranscriptFastPath from "./TranscriptFastPath.js"

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
 * Why a line does not replay (a `Transcript` replay turns it into an error or a warning): `foreign` when it shows the file is not a Keel transcript of this
 * session (`ForeignTranscript`), otherwise it is corrupt (`CorruptTranscript`).
 *
 * @category Models
 */
export interface Rejection {
  readonly foreign: boolean
  readonly reason: string
}

/** A line that makes the file corrupt, and why. @category Rejections */
export const corrupt = (reason: string): Either.Either<never, Rejection> => Either.left({ foreign: false, reason })
/** A line that shows the file is not a Keel transcript of this session, and why. @category Rejections */
export const foreign = (reason: string): Either.Either<never, Rejection> => Either.left({ foreign: true, reason })

/** What a line holds: nothing (blank), bytes that are not UTF-8 JSON text (and why), or a JSON value. @category Models */
export type Line =
  | { readonly _tag: "Blank" }
  | { readonly _tag: "Unreadable"; readonly reason: string }
  | { readonly _tag: "Json"; readonly json: unknown }

/** Reads one line's bytes (its newline excluded) as UTF-8 text, then as JSON unless it is blank. @category Reading */
export const readLine = (bytes: Uint8Array): Line => {
  let text: string
  try {
    text = decoder.decode(bytes)
  } catch {
    return { _tag: "Unreadable", reason: "it is not UTF-8 text" }
  }
  return readText(text)
}

/**
 * The whole of a file's bytes as UTF-8 text, when they all are (`undefined` otherwise: then each
 * line is read by {@link readLine}, which says which one is not). One decode of the file instead of
 * one per line; a line's text is then what {@link readLine} decodes of its bytes, once a leading
 * byte order mark (which the decoder drops at the start of each text it decodes) is dropped too
 * (see {@link lineText}).
 *
 * @category Reading
 */
export const readFileText = (bytes: Uint8Array): string | undefined => {
  try {
    return decoder.decode(bytes)
  } catch {
    return undefined
  }
}

/**
 * The text of the line that is `text[start, end)` of a file's text ({@link readFileText}), as
 * {@link readLine} decodes it from the line's bytes: without a leading byte order mark (the file's
 * decode dropped the first line's).
 *
 * @category Reading
 */
export const lineText = (text: string, start: number, end: number): string =>
  start > 0 && text.charCodeAt(start) === 0xfeff ? text.slice(start + 1, end) : text.slice(start, end)

/** Reads one line's text (see {@link readLine}) as JSON unless it is blank. @category Reading */
export const readText = (text: string): Line => {
  if (text.trim().length === 0) return { _tag: "Blank" }
  try {
    return { _tag: "Json", json: JSON.parse(text) }
  } catch (e) {
    return { _tag: "Unreadable", reason: `it is not JSON (${e instanceof Error ? e.message : String(e)})` }
  }
}

/**
 * The format version a line's record carries, checked: never newer than this Keel reads, and
 * exactly Keel's on the `first` entry (the one that decides whether the file is a Keel transcript).
 */
const checkVersion = (version: unknown, first: boolean): Either.Either<void, Rejection> => {
  if (typeof version === "number" && version > TranscriptEntry.VERSION) {
    return foreign(`it is in transcript format ${version}, newer than this Keel reads (${TranscriptEntry.VERSION})`)
  }
  if (first && version !== TranscriptEntry.VERSION) {
    return foreign(
      typeof version === "string"
        ? `its entries carry version "${version}", another program's, not Keel's format ${TranscriptEntry.VERSION}`
        : `its first entry has no Keel format version (${TranscriptEntry.VERSION})`
    )
  }
  return Either.void
}

/**
 * A line's JSON as an entry of this transcript: in Keel's format, of a known type that decodes, of
 * session `sessionId`, and chained to the previous entry (`lastUuid`). `first` when no entry came before.
 *
 * @category Reading
 */
export const toEntry = (
  json: unknown,
  options: { readonly sessionId: string; readonly lastUuid: string | null; readonly first: boolean }
): Either.Either<TranscriptEntry.Entry, Rejection> => {
  const { first, lastUuid, sessionId } = options
  const record = typeof json === "object" && json !== null && !Array.isArray(json)
    ? json as Record<string, unknown>
    : undefined
  const version = checkVersion(record?.["version"], first)
  if (Either.isLeft(version)) return Either.left(version.left)
  const type = record?.["type"]
  const decode = typeof type === "string" ? decoders[type] : undefined
  if (decode === undefined) {
    return corrupt(typeof type === "string" ? `unknown entry type "${type}"` : "an entry without a type")
  }
  // Most lines are messages of the common shape: checked by hand, else by their Schema (which says why not).
  const fast = record !== undefined ? TranscriptFastPath.entry(record) : undefined
  const decoded = fast !== undefined ? Either.right(fast) : decode(json)
  if (Either.isLeft(decoded)) {
    return corrupt(`a "${String(type)}" entry that does not decode: ${firstIssue(decoded.left)}`)
  }
  const entry = decoded.right
  if (entry.sessionId !== sessionId) {
    return first
      ? foreign(`it is the transcript of session ${entry.sessionId}`)
      : corrupt(`an entry of session ${entry.sessionId} in the transcript of ${sessionId}`)
  }
  if (entry.parentUuid !== lastUuid) {
    return corrupt(
      `its parentUuid ${entry.parentUuid ?? "null"} does not follow the previous entry (${lastUuid ?? "none"})`
    )
  }
  return Either.right(entry)
}
