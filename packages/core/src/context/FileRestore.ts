/**
 * The files re-attached after a compaction: the most recently read ones that the kept messages do
 * not read again. A small one is read from disk now (a file may have changed since) and attached
 * whole, within a budget per file and one for all; a larger one is only named, with its size, for
 * the model to Read again if it needs it. So the compacted conversation knows the files it was
 * working on without paying for large ones it may not need.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as nodePath from "node:path"
import { AssistantMessage, type Message, TextBlock, ToolUseBlock } from "../message/Message.js"
import * as SummaryPrompt from "./SummaryPrompt.js"
import * as TokenEstimate from "./TokenEstimate.js"

/** The tool whose calls name the files read, and its path field. @category Models */
export interface ReadTool {
  readonly name: string
  readonly pathField: string
}

/** Options of the files re-attached. @category Models */
export interface Options {
  /**
   * Files re-attached after a compaction: how many at most (5), the largest attached whole (2,000
   * tokens, as characters at `TokenEstimate.CHARS_PER_TOKEN`: a larger one is named instead), and
   * the tokens of all attached (8,000).
   */
  readonly restoreFiles?: number | undefined
  readonly restoreTokensPerFile?: number | undefined
  readonly restoreTokensTotal?: number | undefined
  /** The tool whose calls name the files read, and its path field (`Read`, `file_path`). */
  readonly readTool?: ReadTool | undefined
}

/** Claude Code's read tool. @category Constants */
export const defaultReadTool: ReadTool = { name: "Read", pathField: "file_path" }

/** The paths `readTool` read in `messages`, the most recent first, each once. @category Accessors */
export const pathsRead = (messages: ReadonlyArray<Message>, readTool: ReadTool): Array<string> => {
  const out: Array<string> = []
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!
    if (!(m instanceof AssistantMessage)) continue
    for (let j = m.content.length - 1; j >= 0; j--) {
      const b = m.content[j]!
      if (!(b instanceof ToolUseBlock) || b.name !== readTool.name) continue
      const path = (b.input as Record<string, unknown> | null)?.[readTool.pathField]
      if (typeof path === "string" && !out.includes(path)) out.push(path)
    }
  }
  return out
}

/** The defaults of {@link Options}. @category Constants */
export const DEFAULTS = { files: 5, tokensPerFile: 2_000, tokensTotal: 8_000 } as const

/**
 * The files read in `messages` (most recent first) that `kept` does not read again, at most
 * `restoreFiles` of them, from `fs` (relative paths against `cwd`): the small ones attached as a text
 * block each, the others (over the budget per file, or past the total) named in one more block. A
 * file that is gone is left out.
 *
 * @category Files
 */
export const restoredFiles = (
  fs: FileSystem.FileSystem,
  options: Options,
  messages: ReadonlyArray<Message>,
  kept: ReadonlyArray<Message>,
  cwd: string | undefined
): Effect.Effect<Array<TextBlock>> =>
  Effect.gen(function*() {
    const readTool = options.readTool ?? defaultReadTool
    const inKept = new Set(pathsRead(kept, readTool))
    const perFile = (options.restoreTokensPerFile ?? DEFAULTS.tokensPerFile) * TokenEstimate.CHARS_PER_TOKEN
    let budget = (options.restoreTokensTotal ?? DEFAULTS.tokensTotal) * TokenEstimate.CHARS_PER_TOKEN
    const blocks: Array<TextBlock> = []
    const listed: Array<SummaryPrompt.Listed> = []
    const paths = pathsRead(messages, readTool).filter((p) => !inKept.has(p)).slice(0, options.restoreFiles ?? DEFAULTS.files)
    for (const path of paths) {
      const file = cwd !== undefined && !nodePath.isAbsolute(path) ? nodePath.join(cwd, path) : path
      const info = yield* Effect.option(fs.stat(file))
      if (info._tag === "None" || info.value.type !== "File") continue
      const bytes = Number(info.value.size)
      // Bytes bound characters from above: a file under the budget in bytes is read, no other.
      const content = bytes <= perFile && bytes <= budget ? yield* Effect.option(fs.readFileString(file)) : undefined
      if (content?._tag === "None") continue
      if (content === undefined || content.value.length > budget) {
        listed.push({ path, bytes })
        continue
      }
      budget -= content.value.length
      blocks.push(new TextBlock({ text: SummaryPrompt.attachedFile(path, content.value) }))
    }
    return listed.length === 0 ? blocks : [...blocks, new TextBlock({ text: SummaryPrompt.listedFiles(listed) })]
  })
