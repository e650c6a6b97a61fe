/**
 * Grep's built-in search, in process: walks the files `Glob` would see (`Workspace.find`, so
 * `.gitignore` is respected), keeps those `glob` and `type` accept, skips binary files (a NUL in
 * the first 8,192 characters), and runs the pattern as ripgrep does: line by line, or over the
 * whole file in multiline mode, a match marking every line it touches.
 *
 * @since 0.1.0
 */
import type { Tool } from "@keel/core"
import * as Effect from "effect/Effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import type { FileMatches, Line } from "./GrepOutput.js"
import { isBinary, type Query } from "./GrepQuery.js"
import * as Workspace from "./Workspace.js"

/** Files read at once. @category Constants */
export const CONCURRENCY = 16

/** The indexes of the lines within `before` / `after` of a matching line, ascending. */
const window = (hits: ReadonlyArray<number>, before: number, after: number, total: number): Array<number> => {
  const out: Array<number> = []
  for (const hit of hits) {
    const from = Math.max(hit - before, out.length > 0 ? out[out.length - 1]! + 1 : 0)
    for (let i = from; i <= Math.min(total - 1, hit + after); i++) out.push(i)
  }
  return out
}

/** The 0-based line a character index falls on, given the indexes of the line breaks. */
const lineOf = (breaks: ReadonlyArray<number>, index: number): number => {
  let lo = 0
  let hi = breaks.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (breaks[mid]! < index) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * The matches of a query in one file's text: how many, and (in content mode) the matching and
 * context lines; `undefined` when there are none. A final line break does not start a line.
 *
 * @category Matching
 */
export const matchText = (query: Query, text: string): Pick<FileMatches, "count" | "lines"> | undefined => {
  const lines = text.split(/\r?\n/)
  if (text.endsWith("\n")) lines.pop()
  const firstOnly = query.mode === "files_with_matches"
  const regex = query.regex()
  const hits = new Set<number>()
  let count = 0
  if (!query.multiline) {
    for (let i = 0; i < lines.length && !(firstOnly && count > 0); i++) {
      const line = lines[i]!
      regex.lastIndex = 0
      for (let m = regex.exec(line); m !== null; m = regex.exec(line)) {
        hits.add(i)
        count++
        if (firstOnly) break
        if (m[0].length === 0) regex.lastIndex++
      }
    }
  } else {
    const breaks: Array<number> = []
    for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) breaks.push(i)
    for (let m = regex.exec(text); m !== null; m = regex.exec(text)) {
      if (m[0].length === 0) regex.lastIndex++
      const first = lineOf(breaks, m.index)
      if (first >= lines.length) continue
      const last = Math.min(lineOf(breaks, m.index + Math.max(m[0].length, 1) - 1), lines.length - 1)
      for (let i = first; i <= last; i++) hits.add(i)
      count++
      if (firstOnly) break
    }
  }
  if (count === 0) return undefined
  if (query.mode !== "content") return { count, lines: [] }
  const sorted = [...hits].sort((a, b) => a - b)
  const shown: Array<Line> = window(sorted, query.before, query.after, lines.length).map((i) => ({
    number: i + 1,
    text: lines[i]!,
    hit: hits.has(i)
  }))
  return { count, lines: shown }
}

/**
 * Searches the files under the query's root, in process.
 *
 * @category Searching
 */
export const search = (query: Query): Effect.Effect<ReadonlyArray<FileMatches>, Tool.ToolError> =>
  Effect.gen(function*() {
    const files = yield* Workspace.find(query.root)
    const found = yield* Effect.forEach(
      files,
      ({ mtimeMs, path: file }) =>
        Effect.promise(async (): Promise<FileMatches | undefined> => {
          if (!query.accepts(path.relative(query.root, file) || path.basename(file))) return undefined
          if (query.shows !== undefined && !query.shows(file)) return undefined
          const text = await fs.readFile(file, "utf8").catch(() => "")
          if (text.length === 0 || isBinary(text)) return undefined
          const matches = matchText(query, text)
          return matches === undefined ? undefined : { path: file, mtimeMs, ...matches }
        }),
      { concurrency: CONCURRENCY }
    )
    return found.filter((f): f is FileMatches => f !== undefined)
  })
