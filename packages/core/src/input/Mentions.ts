/**
 * `@path` mentions: a prompt that names a file with `@` gets the file attached, as Claude Code
 * attaches it: the prompt stays as written, and after it come, per file, the Read call that fetched
 * it (`Called the Read tool with the following input: {"file_path": ...}`) and its result: numbered
 * lines for text, an image block for an image, a document block for a PDF. Files are read by a
 * Read-shaped tool (`Reader`), so its size limits apply and the read is recorded in the session's
 * file state (an Edit of a mentioned file works without reading it again).
 *
 * Paths are relative to the working directory, absolute, or under `~/`; `@"path with spaces"` is
 * quoted; `@file#L10-20` attaches lines 10 to 20. A mention that names no readable file (a missing
 * file, `@alice`, a denied path) stays in the prompt as text and is reported in `skipped`.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as os from "node:os"
import * as path from "node:path"
import { type ContentBlock, TextBlock, UserMessage } from "../message/Message.js"
import * as PermissionRule from "../permission/PermissionRule.js"
import type * as Permissions from "../permission/Permissions.js"
import * as Tool from "../tool/Tool.js"

/** One `@` mention in a prompt. @category Models */
export interface Mention {
  /** As written: `@src/a.ts`, `@"my notes.md"`, `@a.ts#L3-5`. */
  readonly text: string
  /** The path as written, unquoted, without the line range. */
  readonly path: string
  /** The lines asked for with `#L10-20` (`#L10`: that line only). */
  readonly lines?: { readonly from: number; readonly to: number } | undefined
  /** Whether it was quoted (then trailing punctuation is part of the path). */
  readonly quoted: boolean
}

/** The input of a Read-shaped tool. @category Models */
export interface ReadInput {
  readonly file_path: string
  readonly offset?: number
  readonly limit?: number
}

/** Reads a file as the Read tool does (an absolute path, optionally a line range), in a session's turn. @category Models */
export type Reader = (input: ReadInput) => Effect.Effect<Tool.ToolOutput, Tool.ToolError, Tool.Services>

/**
 * A reader that calls `tool` (the Read tool: its input decoded by its Schema, so its checks and
 * limits apply; a crash becomes a `ToolError`). Without a tool, every mention is left as text.
 *
 * @category Constructors
 */
export const toolReader = (tool: Tool.Any | undefined, cwd: string, uuid: () => string): Reader => {
  if (tool === undefined) return () => Tool.fail("this session has no Read tool to attach files with")
  const decode = Schema.decodeUnknown(tool.input)
  return (input) =>
    decode(input).pipe(
      Effect.mapError((e) => new Tool.ToolError({ message: ParseResult.TreeFormatter.formatErrorSync(e) })),
      Effect.flatMap((decoded) => tool.call(decoded, { toolUseId: `mention_${uuid()}`, cwd })),
      Effect.map(Tool.outputOf),
      Effect.catchAllDefect((defect) =>
        Tool.fail(`${tool.name} crashed: ${Cause.pretty(Cause.die(defect)).split("\n")[0]}`)
      )
    )
}

/**
 * The deny rules' verdict on attaching a file: a mention is the user's own request, so only a
 * `deny` rule for the read tool (`Read(./.env)`) stops it; rules that would ask do not.
 *
 * @category Constructors
 */
export const denyRules = (
  config: Permissions.Config,
  cwd: string,
  toolName = "Read"
): (file: string) => string | undefined =>
(file) => {
  const rule = config.deny.find((r) => PermissionRule.matches(r, toolName, { file_path: file }, cwd))
  return rule === undefined ? undefined : `the permission rule ${PermissionRule.format(rule)} denies reading it`
}

/** Options of {@link expand}. @category Models */
export interface Options {
  /** The working directory relative paths resolve against. */
  readonly cwd: string
  readonly read: Reader
  /** Why the file at this absolute path may not be attached (a deny rule), or `undefined` when it may. */
  readonly denied?: ((file: string) => string | undefined) | undefined
  /** The tool named in the attachments (default `Read`). */
  readonly toolName?: string | undefined
}

/** A mention that was left as text, and why. @category Models */
export interface Skipped {
  readonly mention: string
  readonly reason: string
}

/** A prompt with its mentions attached. @category Models */
export interface Expanded {
  /** The user message: the prompt as written, then the attachments (the prompt alone, as a string, when none). */
  readonly message: UserMessage
  /** The absolute paths attached, in order. */
  readonly attached: ReadonlyArray<string>
  readonly skipped: ReadonlyArray<Skipped>
}

const MENTION = /(^|\s)@(?:"([^"]+)"|([^\s"]+))(#L\d+(?:-\d+)?)?/g
const LINES = /#L(\d+)(?:-(\d+))?$/

const lineRange = (suffix: string | undefined): Mention["lines"] => {
  const m = suffix === undefined ? null : LINES.exec(suffix)
  if (m === null) return undefined
  const from = Number(m[1])
  const to = m[2] === undefined ? from : Number(m[2])
  return from >= 1 && to >= from ? { from, to } : undefined
}

/** The mentions in a prompt, in order: an `@` at the start or after whitespace, then a path. @category Parsing */
export const find = (prompt: string): ReadonlyArray<Mention> => {
  const out: Array<Mention> = []
  for (const m of prompt.matchAll(MENTION)) {
    const quoted = m[2] !== undefined
    let raw = quoted ? m[2]! : m[3]!
    let suffix = m[4]
    if (!quoted && suffix === undefined) {
      const inline = LINES.exec(raw)
      if (inline !== null) {
        suffix = inline[0]
        raw = raw.slice(0, inline.index)
      }
    }
    if (raw.length === 0) continue
    out.push({ text: m[0].slice(m[1]!.length), path: raw, lines: lineRange(suffix), quoted })
  }
  return out
}

/** The absolute path a mentioned path names (`~/` is the home folder). @category Parsing */
export const resolve = (cwd: string, file: string): string =>
  path.resolve(cwd, file === "~" ? os.homedir() : file.startsWith("~/") ? path.join(os.homedir(), file.slice(2)) : file)

const TRAILING = /[.,;:!?)\]}'"`]+$/

/**
 * What to try for a mention: as written, then without trailing punctuation (`see @README.md.`,
 * `@a.ts#L2-3,`), its line range read again.
 */
const candidates = (mention: Mention): ReadonlyArray<Pick<Mention, "path" | "lines">> => {
  const literal = { path: mention.path, lines: mention.lines }
  if (mention.quoted) return [literal]
  const written = mention.text.slice(1)
  const stripped = written.replace(TRAILING, "")
  if (stripped.length === 0 || stripped === written) return [literal]
  const range = LINES.exec(stripped)
  return [
    literal,
    range === null ? { path: stripped, lines: undefined } : { path: stripped.slice(0, range.index), lines: lineRange(range[0]) }
  ]
}

const inputFor = (file: string, lines: Mention["lines"]): ReadInput =>
  lines === undefined ? { file_path: file } : { file_path: file, offset: lines.from, limit: lines.to - lines.from + 1 }

/** The blocks that attach one file: the call, then its result. */
const attachment = (toolName: string, input: ReadInput, output: Tool.ToolOutput): ReadonlyArray<ContentBlock> => {
  const call = new TextBlock({ text: `Called the ${toolName} tool with the following input: ${JSON.stringify(input)}` })
  return typeof output === "string"
    ? [call, new TextBlock({ text: `Result of calling the ${toolName} tool:\n${output}` })]
    : [call, ...output]
}

/**
 * Attaches the files a prompt mentions. Never fails: a mention that cannot be attached is left as
 * text and listed in `skipped` with the reason (the Read tool's message, or the deny rule's).
 *
 * @category Expanding
 */
export const expand = (prompt: string, options: Options): Effect.Effect<Expanded, never, Tool.Services> =>
  Effect.gen(function*() {
    const mentions = find(prompt)
    if (mentions.length === 0) return { message: new UserMessage({ content: prompt }), attached: [], skipped: [] }
    const toolName = options.toolName ?? "Read"
    const blocks: Array<ContentBlock> = []
    const attached: Array<string> = []
    const skipped: Array<Skipped> = []
    const seen = new Set<string>()
    for (const mention of mentions) {
      let reason: string | undefined
      for (const candidate of candidates(mention)) {
        const file = resolve(options.cwd, candidate.path)
        const input = inputFor(file, candidate.lines)
        const key = JSON.stringify(input)
        if (seen.has(key)) {
          reason = undefined
          break
        }
        const denial = options.denied?.(file)
        if (denial !== undefined) {
          reason ??= denial
          continue
        }
        const read = yield* Effect.either(options.read(input))
        if (read._tag === "Left") {
          reason ??= read.left.message
          continue
        }
        seen.add(key)
        attached.push(file)
        blocks.push(...attachment(toolName, input, read.right))
        reason = undefined
        break
      }
      if (reason !== undefined) skipped.push({ mention: mention.text, reason })
    }
    return {
      message: new UserMessage({ content: blocks.length === 0 ? prompt : [new TextBlock({ text: prompt }), ...blocks] }),
      attached,
      skipped
    }
  })
