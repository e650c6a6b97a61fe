/**
 * The REPL's live area, at the bottom of the terminal below everything printed: the answer's
 * unfinished line, the working indicator, the input line (with the cursor), the queued prompts and
 * a note. Pure: the rows to write, how many terminal rows they take once wrapped, where the cursor
 * goes, and the escape sequences that take the area off the screen and draw it again, so `Screen`
 * only writes them.
 *
 * @since 0.1.0
 */
import { stripVTControlCharacters } from "node:util"
import type * as Style from "./Style.js"

/** The input line as shown. @category Models */
export interface Input {
  readonly prompt: string
  /** The prompt of the text's second and later lines. */
  readonly continuation: string
  readonly text: string
  readonly cursor: number
}

/** What the area shows, top to bottom. @category Models */
export interface Parts {
  /** The answer's unfinished line (raw, may wrap); "" for none. */
  readonly partial: string
  /** The working indicator or a tool's progress. */
  readonly status: string | undefined
  /** Hidden while `undefined`. */
  readonly input: Input | undefined
  /** The queued prompts' rows (see {@link queuedRows}). */
  readonly queued: ReadonlyArray<string>
  /** A passing note under the rest (the Ctrl+C exit warning). */
  readonly note: string | undefined
  /** The slash-command menu's rows, right under the input line (see `SlashMenu`). */
  readonly menu?: ReadonlyArray<string> | undefined
  /** The mode row at the bottom: the permission mode, or the `!` shell hint (see `PermissionMode`). */
  readonly mode?: string | undefined
}

/** Nothing shown. @category Constructors */
export const empty: Parts = { partial: "", status: undefined, input: undefined, queued: [], note: undefined }

/** The area laid out for a terminal's width. @category Models */
export interface Layout {
  /** What to write, from the start of a row. */
  readonly text: string
  /** The terminal rows it takes. */
  readonly rows: number
  /** Where the cursor goes, from the area's first row (0) and column (0). */
  readonly cursorRow: number
  readonly cursorColumn: number
}

const isWide = (code: number): boolean =>
  (code >= 0x1100 && code <= 0x115f) || (code >= 0x2e80 && code <= 0xa4cf && code !== 0x303f) ||
  (code >= 0xac00 && code <= 0xd7a3) || (code >= 0xf900 && code <= 0xfaff) || (code >= 0xfe30 && code <= 0xfe4f) ||
  (code >= 0xff00 && code <= 0xff60) || (code >= 0xffe0 && code <= 0xffe6) || (code >= 0x1f300 && code <= 0x1f64f) ||
  (code >= 0x1f900 && code <= 0x1f9ff) || (code >= 0x20000 && code <= 0x3fffd)

/**
 * The columns `text` takes in a terminal: escape sequences take none, combining marks none, East
 * Asian wide characters and most emoji two.
 *
 * @category Measuring
 */
export const width = (text: string): number => {
  let columns = 0
  for (const char of stripVTControlCharacters(text)) {
    const code = char.codePointAt(0)!
    if (code < 0x20 || (code >= 0x7f && code < 0xa0) || /\p{M}/u.test(char) || code === 0x200b) continue
    columns += isWide(code) ? 2 : 1
  }
  return columns
}

/** The rows a line of `columns` wide text takes (a line that fills its last row exactly takes no more). */
const rowsOf = (textWidth: number, columns: number): number => Math.max(1, Math.ceil(textWidth / columns))

/** The end of `text` that fits in `rows` rows (the start is cut). */
const lastRows = (text: string, rows: number, columns: number): string => {
  const chars = [...text]
  let kept = 0
  let used = 0
  while (kept < chars.length && used + width(chars[chars.length - 1 - kept]!) <= rows * columns) {
    used += width(chars[chars.length - 1 - kept]!)
    kept++
  }
  return chars.slice(chars.length - kept).join("")
}

/**
 * The area for a terminal `columns` wide and `height` rows high. The unfinished answer line shows
 * its end only when the whole would not fit on the screen with the rest (the area must stay on
 * screen to be redrawn). An input row whose text fills its last terminal row exactly gets an empty
 * row after it, where the cursor can stand.
 *
 * @category Layout
 */
export const layout = (parts: Parts, columns: number, height: number): Layout => {
  const cols = Math.max(1, columns)
  const written: Array<string> = []
  let rows = 0
  const plain = (line: string) => {
    written.push(line)
    rows += rowsOf(width(line), cols)
  }
  if (parts.status !== undefined) plain(parts.status)
  let cursorRow = 0
  let cursorColumn = 0
  if (parts.input !== undefined) {
    const { continuation, cursor, prompt, text } = parts.input
    const before = text.slice(0, cursor).split("\n")
    text.split("\n").forEach((line, i) => {
      const prefix = i === 0 ? prompt : continuation
      const lineWidth = width(prefix + line)
      if (i === before.length - 1) {
        const at = width(prefix + before[i]!)
        cursorRow = rows + Math.floor(at / cols)
        cursorColumn = at % cols
      }
      written.push(lineWidth > 0 && lineWidth % cols === 0 ? `${prefix}${line}\n` : `${prefix}${line}`)
      rows += Math.floor(lineWidth / cols) + 1
    })
  }
  for (const line of parts.menu ?? []) plain(line)
  for (const line of parts.queued) plain(line)
  if (parts.note !== undefined) plain(parts.note)
  if (parts.mode !== undefined && parts.input !== undefined) plain(parts.mode)
  if (parts.partial !== "") {
    const room = Math.max(1, height - rows - 1)
    const partial = rowsOf(width(parts.partial), cols) > room ? lastRows(parts.partial, room, cols) : parts.partial
    const partialRows = rowsOf(width(partial), cols)
    written.unshift(partial)
    rows += partialRows
    cursorRow += partialRows
  }
  if (parts.input === undefined) {
    cursorRow = rows - 1
    cursorColumn = 0
  }
  return { text: written.join("\n"), rows, cursorRow, cursorColumn }
}

/**
 * Takes the area off the screen, from the cursor (where {@link draw} left it): up to its first row,
 * then clear to the end of the screen.
 *
 * @category Escapes
 */
export const clear = (drawn: Layout): string => `${drawn.cursorRow > 0 ? `\x1b[${drawn.cursorRow}A` : ""}\r\x1b[J`

/**
 * Writes the area from the start of a row and puts the cursor in place.
 *
 * @category Escapes
 */
export const draw = (area: Layout): string => {
  const up = area.rows - 1 - area.cursorRow
  return `${area.text}${up > 0 ? `\x1b[${up}A` : ""}\r${area.cursorColumn > 0 ? `\x1b[${area.cursorColumn}C` : ""}`
}

/** The most queued prompts listed one per row; beyond it the middle ones are counted. @category Constants */
export const MAX_QUEUED_ROWS = 5

/** `text` cut to `columns` columns, with an ellipsis when cut. */
const fit = (text: string, columns: number): string => {
  if (width(text) <= columns) return text
  let out = ""
  for (const char of text) {
    if (width(out + char) > columns - 1) break
    out += char
  }
  return `${out}…`
}

/**
 * The rows of the queued prompts, next to run first, dim, each on one row (its preview cut to the
 * width); the last (the one ↑ pulls back) says so. Past {@link MAX_QUEUED_ROWS}, the first ones,
 * a count of the rest, and the last.
 *
 * @category Layout
 */
export const queuedRows = (
  previews: ReadonlyArray<string>,
  columns: number,
  style: Pick<Style.Style, "dim">
): Array<string> => {
  if (previews.length === 0) return []
  const hint = " (↑ to edit)"
  const row = (preview: string, last: boolean) =>
    style.dim(last ? `${fit(`  > ${preview}`, columns - 1 - hint.length)}${hint}` : fit(`  > ${preview}`, columns - 1))
  if (previews.length <= MAX_QUEUED_ROWS) return previews.map((p, i) => row(p, i === previews.length - 1))
  const head = previews.slice(0, MAX_QUEUED_ROWS - 2).map((p) => row(p, false))
  const hidden = previews.length - MAX_QUEUED_ROWS + 1
  return [...head, style.dim(`  … ${hidden} more`), row(previews.at(-1)!, true)]
}
