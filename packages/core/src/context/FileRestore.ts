/**
 * The files re-read after a compaction: the most recently read ones that the kept turns do not read
 * again, read from disk now (a file may have changed since), each cut to a budget and all within
 * another, so that the compacted conversation goes on with the files it was working on.
 *
 * @since 0.1.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as nodePath from "node:path"
import { AssistantMessage, type Message, TextBlock, ToolUseBlock } from "../message/Message.js"
import * as TokenEstimate from "./TokenEstimate.js"

/** The tool whose calls name the files read, and its path field. @category Models */
export interface ReadTool {
  readonly name: string
  readonly pathField: string
}

/** Options; every number defaults to Claude Code's. @category Models */
export interface Options {
  /** Files re-read after a compaction: how many (5), tokens each (5,000), tokens in all (50,000). */
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

/**
 * The most recently read files of `head` (not read again in `tail`), re-read now from `fs` (relative
 * paths against `cwd`) within the budgets: one text block each. A file that cannot be read is left out.
 *
 * @category Files
 */
export const restoredFiles = (
  fs: FileSystem.FileSystem,
  options: Options,
  head: ReadonlyArray<Message>,
  tail: ReadonlyArray<Message>,
  cwd: string | undefined
): Effect.Effect<Array<TextBlock>> =>
  Effect.gen(function*() {
    const readTool = options.readTool ?? defaultReadTool
    const inTail = new Set(pathsRead(tail, readTool))
    const perFile = (options.restoreTokensPerFile ?? 5_000) * TokenEstimate.CHARS_PER_TOKEN
    let budget = (options.restoreTokensTotal ?? 50_000) * TokenEstimate.CHARS_PER_TOKEN
    const blocks: Array<TextBlock> = []
    for (const path of pathsRead(head, readTool).filter((p) => !inTail.has(p)).slice(0, options.restoreFiles ?? 5)) {
      const content = yield* Effect.option(fs.readFileString(
        cwd !== undefined && !nodePath.isAbsolute(path) ? nodePath.join(cwd, path) : path
      ))
      if (content._tag === "None") continue
      const cut = content.value.length > perFile
        ? `${content.value.slice(0, perFile)}\n[... cut at ${perFile} characters]`
        : content.value
      if (cut.length > budget) break
      budget -= cut.length
      blocks.push(new TextBlock({ text: `Contents of ${path}, read again after the compaction:\n\n${cut}` }))
    }
    return blocks
  })
