/**
 * The journal's lines: what crossed a session's boundary that the kernel cannot compute again,
 * in the order it happened, as JSON lines (format {@link VERSION}). A journal starts with a
 * `journal` header; then, per model call:
 * - `body`: the request body as sent (the exact JSON text), once per distinct body, by its sha256;
 * - `call`: call `n` (from 1) went out at `at` (ms since the header's `startedAt`, on `Clock`) with
 *   the body `hash`;
 * - `chunk`: the items of one read of its stream (raw events and pings, as the base client gave
 *   them), at `at` ms after the call went out;
 * - `end`: how the call ended, at `at` ms after it went out: `done`, `failed` with the typed
 *   `ModelError` (encoded), or `interrupted` (its consumer stopped it: the idle watchdog, a
 *   user's interrupt, a fallback).
 * and, per tool call:
 * - `tool_start`: the call `id` (the `tool_use` block's) of tool `name` began at `at` (ms since
 *   `startedAt`) with `input` (as decoded, encoded back to JSON);
 * - `tool_end`: how it ended, `at` ms after it began: `done` with its `output` (text, or content
 *   blocks) and structured `result`, `error` with the tool's message, or `interrupted`.
 * and, per turn: `turn_start` (`turn`, its number in the process from 1, `at`, and the `prompt`
 * submitted: text, the message's content blocks, or `null` for a turn that runs on from its last
 * answer's tool calls) and `turn_end` (`turn`, `at`): a `turn_start` without its `turn_end` is a turn
 * a crash cut short. A process that continues a session appends a new header: its calls number from
 * 1 again, and its times count from its own `startedAt`.
 * Readers skip line types they do not know, so later versions can add lines.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { ToolResultContent } from "../message/Message.js"
import { ModelError } from "../model/ModelError.js"

/** The journal format this Keel writes and reads. @category Constants */
export const VERSION = 1

/** The first line of a journal. @category Schemas */
export const Header = Schema.Struct({
  type: Schema.Literal("journal"),
  version: Schema.Number,
  /** `Clock` milliseconds when recording started: every `call`'s `at` counts from here. */
  startedAt: Schema.Number,
  /** The seed the run's ids and random draws came from (`keel --record`), for a replay to draw the same. */
  seed: Schema.optional(Schema.Number),
  /** The command line of the recorded run (`keel`'s arguments), for `keel replay` to run it again. */
  argv: Schema.optional(Schema.Array(Schema.String)),
  /** The recorded run's working directory. */
  cwd: Schema.optional(Schema.String),
  /** The variables that configure Keel (`KEEL_*`, `CLAUDE_CODE_*`, ...) the run had, secrets excluded. */
  env: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
})

/** A request body as sent, stored once per distinct body. @category Schemas */
export const Body = Schema.Struct({
  type: Schema.Literal("body"),
  /** sha256 (hex) of `body`. */
  hash: Schema.String,
  /** The JSON text sent, byte for byte. */
  body: Schema.String
})

/** A model call going out. @category Schemas */
export const Call = Schema.Struct({
  type: Schema.Literal("call"),
  /** The call's number in the journal, from 1. */
  call: Schema.Number,
  /** Milliseconds since the header's `startedAt`. */
  at: Schema.Number,
  /** sha256 (hex) of the body sent (see {@link Body}). */
  hash: Schema.String
})

/** One read of a call's stream: raw events and pings, as the base client gave them. @category Schemas */
export const Chunk = Schema.Struct({
  type: Schema.Literal("chunk"),
  call: Schema.Number,
  /** Milliseconds since the call went out. */
  at: Schema.Number,
  items: Schema.Array(Schema.Unknown)
})

/** How a call ended. @category Schemas */
export const End = Schema.Struct({
  type: Schema.Literal("end"),
  call: Schema.Number,
  /** Milliseconds since the call went out. */
  at: Schema.Number,
  outcome: Schema.Literal("done", "failed", "interrupted"),
  /** The call's failure, when `outcome` is `failed`. */
  error: Schema.optional(ModelError)
})

/** A tool call starting. @category Schemas */
export const ToolStart = Schema.Struct({
  type: Schema.Literal("tool_start"),
  /** The id of the `tool_use` block it answers. */
  id: Schema.String,
  name: Schema.String,
  /** Milliseconds since the header's `startedAt`. */
  at: Schema.Number,
  input: Schema.Unknown
})

/** A tool call's end. @category Schemas */
export const ToolEnd = Schema.Struct({
  type: Schema.Literal("tool_end"),
  id: Schema.String,
  /** Milliseconds since the call began. */
  at: Schema.Number,
  outcome: Schema.Literal("done", "error", "interrupted"),
  /** What the model saw, when `done`. */
  output: Schema.optional(Schema.Union(Schema.String, Schema.Array(ToolResultContent))),
  /** The structured result, when `done` and the tool gave one. */
  result: Schema.optional(Schema.Unknown),
  /** The tool's message, when `error`. */
  error: Schema.optional(Schema.String)
})

/** A turn starting, with what was submitted. @category Schemas */
export const TurnStart = Schema.Struct({
  type: Schema.Literal("turn_start"),
  /** The turn's number in this process, from 1. */
  turn: Schema.Number,
  /** Milliseconds since the header's `startedAt`. */
  at: Schema.Number,
  /** The prompt as submitted: text, the content of the message given, or `null` (no new prompt). */
  prompt: Schema.Union(Schema.String, Schema.Array(Schema.Unknown), Schema.Null)
})

/** A turn's end. @category Schemas */
export const TurnEnd = Schema.Struct({
  type: Schema.Literal("turn_end"),
  turn: Schema.Number,
  /** Milliseconds since the header's `startedAt`. */
  at: Schema.Number
})

/** Any journal line this Keel knows. @category Schemas */
export const Entry = Schema.Union(Header, Body, Call, Chunk, End, ToolStart, ToolEnd, TurnStart, TurnEnd)
/** @category Models */
export type Entry = typeof Entry.Type

/** The JSON line of an entry (without its newline). @category Conversions */
export const encodeLine = (entry: Entry): string => JSON.stringify(Schema.encodeSync(Entry)(entry))

/** A journal line that cannot be read: its number and why. @category Errors */
export class JournalLineInvalid extends Schema.TaggedError<JournalLineInvalid>("@keel/JournalLineInvalid")(
  "JournalLineInvalid",
  { line: Schema.Number, message: Schema.String }
) {}

const knownTypes: ReadonlySet<string> = new Set([
  "journal",
  "body",
  "call",
  "chunk",
  "end",
  "tool_start",
  "tool_end",
  "turn_start",
  "turn_end"
])
const decodeEntry = Schema.decodeUnknownEither(Entry)

/**
 * The entries of a journal's text, in order; blank lines and lines of types this Keel does not
 * know are skipped. A line that is not JSON, or a known line that does not match its schema, fails
 * naming its line number (a journal is evidence: it is never half-read).
 *
 * @category Conversions
 */
export const parse = (text: string): Either.Either<ReadonlyArray<Entry>, JournalLineInvalid> => {
  const out: Array<Entry> = []
  const lines = text.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    if (line.trim() === "") continue
    let json: unknown
    try {
      json = JSON.parse(line)
    } catch (e) {
      return Either.left(new JournalLineInvalid({ line: i + 1, message: `not JSON: ${(e as Error).message}` }))
    }
    const type = (json as { type?: unknown } | null)?.type
    if (typeof type !== "string" || !knownTypes.has(type)) continue
    const decoded = decodeEntry(json)
    if (Either.isLeft(decoded)) {
      return Either.left(
        new JournalLineInvalid({ line: i + 1, message: ParseResult.TreeFormatter.formatErrorSync(decoded.left) })
      )
    }
    out.push(decoded.right)
  }
  return Either.right(out)
}
