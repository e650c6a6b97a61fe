/**
 * What a `Grep` search found, and the text the model reads, in ripgrep's shape: `path:line:text`
 * for content (with `-` separators for context lines and `--` between groups), paths for
 * `files_with_matches`, `path:count` for `count`; files newest first, paths relative to the
 * working directory, and `head_limit` / `offset` paging. Both searches (ripgrep and the built-in
 * one) produce `FileMatches`, so their output is the same by construction.
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import { DEFAULT_HEAD_LIMIT, type Query } from "./GrepQuery.js"

/** Default number of output lines or paths (0 means all; `GrepQuery`'s). @category Constants */
export { DEFAULT_HEAD_LIMIT }

/** A line shown in content mode: a matching line or a context line. @category Models */
export interface Line {
  /** 1-based. */
  readonly number: number
  readonly text: string
  /** Whether the pattern matched on this line (rather than it being context). */
  readonly hit: boolean
}

/** One file with at least one match. @category Models */
export interface FileMatches {
  /** Absolute. */
  readonly path: string
  readonly mtimeMs: number
  /** How many matches (not lines) the file has; counted in count mode. */
  readonly count: number
  /** Its matching and context lines in ascending order; filled in content mode. */
  readonly lines: ReadonlyArray<Line>
}

/** Newest first, then by path: the order both searches report files in. @category Ordering */
export const byRecency = (a: { readonly path: string; readonly mtimeMs: number }, b: { readonly path: string; readonly mtimeMs: number }) =>
  b.mtimeMs - a.mtimeMs || a.path.localeCompare(b.path)

/** A file's lines in content mode, `--` between groups that are not adjacent when context is asked for. */
const contentLines = (shown: string, lines: ReadonlyArray<Line>, query: Query): Array<string> => {
  const out: Array<string> = []
  let previous = -1
  for (const line of lines) {
    if (previous >= 0 && line.number > previous + 1 && (query.before > 0 || query.after > 0)) out.push("--")
    const sep = line.hit ? ":" : "-"
    out.push(query.lineNumbers ? `${shown}${sep}${line.number}${sep}${line.text}` : `${shown}${sep}${line.text}`)
    previous = line.number
  }
  return out
}

/** Every file's lines in the query's mode, files newest first, and the page `offset` and `head_limit` select. */
const paged = (query: Query, files: ReadonlyArray<FileMatches>) => {
  const out: Array<string> = []
  const names: Array<string> = []
  let matches = 0
  for (const file of [...files].sort(byRecency)) {
    const shown = path.relative(query.cwd, file.path) || file.path
    names.push(shown)
    matches += file.count
    if (query.mode === "content") out.push(...contentLines(shown, file.lines, query))
    else if (query.mode === "count") out.push(`${shown}:${file.count}`)
    else out.push(shown)
  }
  const offset = query.input.offset ?? 0
  const limit = query.input.head_limit ?? DEFAULT_HEAD_LIMIT
  const page = out.slice(offset, limit === 0 ? undefined : offset + limit)
  return { names, matches, page, offset, limit, more: out.length - offset - page.length }
}

/**
 * The text for the model: every file's lines in the query's mode, then the page `offset` and
 * `head_limit` select, with a note when more remain.
 *
 * @category Rendering
 */
export const render = (query: Query, files: ReadonlyArray<FileMatches>): string => {
  const { more, offset, page } = paged(query, files)
  if (page.length === 0) return query.mode === "content" ? "No matches found" : "No files found"
  return more > 0 ? `${page.join("\n")}\n(${more} more results: use offset ${offset + page.length} to see them.)` : page.join("\n")
}

/**
 * The structured result of a search, in Claude Code's shape (`GrepOutput`): the mode, the files
 * (the page of paths for `files_with_matches`, every matching file otherwise), the page's text in
 * `content` and `count` modes with its line or match count, and the paging applied.
 *
 * @category Models
 */
export interface Result {
  readonly mode: Query["mode"]
  readonly numFiles: number
  readonly filenames: ReadonlyArray<string>
  readonly content?: string
  readonly numLines?: number
  readonly numMatches?: number
  readonly appliedLimit?: number
  readonly appliedOffset?: number
}

/** The structured result of a search (see {@link Result}). @category Rendering */
export const result = (query: Query, files: ReadonlyArray<FileMatches>): Result => {
  const { matches, more, names, offset, limit, page } = paged(query, files)
  const filenames = query.mode === "files_with_matches" ? page : names
  return {
    mode: query.mode,
    numFiles: filenames.length,
    filenames,
    ...(query.mode === "content" ? { content: page.join("\n"), numLines: page.length } : {}),
    ...(query.mode === "count" ? { content: page.join("\n"), numMatches: matches } : {}),
    ...(more > 0 ? { appliedLimit: limit } : {}),
    ...(offset > 0 ? { appliedOffset: offset } : {})
  }
}
