/**
 * The REPL's input line as data: the text (several lines once it holds a newline), the cursor,
 * the history being browsed, and whether the text is a queued prompt the user pulled back to edit.
 * Pure transitions for every edit the keyboard makes (Emacs keys, history on ↑/↓, which move
 * between the lines of a multi-line text first), so the terminal part only maps keys to them.
 *
 * @since 0.1.0
 */

/** The most history entries kept. @category Constants */
export const HISTORY_SIZE = 1_000

/** The input line. @category Models */
export interface InputLine {
  readonly text: string
  /** Where the cursor is: an index into `text`. */
  readonly cursor: number
  /** The text is a queued prompt pulled back for editing (Esc drops it). */
  readonly pulledBack: boolean
  /** Earlier entries, newest first. */
  readonly history: ReadonlyArray<string>
  /** The entry shown: -1 for the text being written, else an index into `history`. */
  readonly browsing: number
  /** The text being written (and whether it was pulled back), kept while history is browsed. */
  readonly draft: { readonly text: string; readonly pulledBack: boolean }
}

/** An empty line over `history` (oldest first, as `History.load` returns it). @category Constructors */
export const make = (history: ReadonlyArray<string>): InputLine => ({
  ...cleared,
  history: [...history].reverse().slice(0, HISTORY_SIZE),
  browsing: -1
})

const cleared = { text: "", cursor: 0, pulledBack: false, draft: { text: "", pulledBack: false } }

/** The same history, nothing written. @category Transitions */
export const clear = (line: InputLine): InputLine => ({ ...line, ...cleared, browsing: -1 })

/** `text` in the line, the cursor at its end; `pulledBack` for a queued prompt taken back. @category Transitions */
export const set = (line: InputLine, text: string, pulledBack = false): InputLine => ({
  ...line,
  text,
  cursor: text.length,
  pulledBack,
  browsing: -1,
  draft: { text, pulledBack }
})

/**
 * The line after `text` was submitted: empty, and `text` the newest history entry (an older copy
 * of it is dropped).
 *
 * @category Transitions
 */
export const submitted = (line: InputLine, text: string): InputLine => ({
  ...line,
  ...cleared,
  browsing: -1,
  history: [text, ...line.history.filter((entry) => entry !== text)].slice(0, HISTORY_SIZE)
})

/** The text changed to `text`, the cursor at `cursor` (an entry of history being browsed is edited in place). */
const edit = (line: InputLine, text: string, cursor: number): InputLine => ({ ...line, text, cursor })

/** Inserts `text` at the cursor. @category Transitions */
export const insert = (line: InputLine, text: string): InputLine =>
  edit(line, line.text.slice(0, line.cursor) + text + line.text.slice(line.cursor), line.cursor + text.length)

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff

/** The index one character (code point) before `at`. */
const before = (text: string, at: number): number =>
  at >= 2 && isLow(text.charCodeAt(at - 1)) && isHigh(text.charCodeAt(at - 2)) ? at - 2 : Math.max(0, at - 1)

/** The index one character (code point) after `at`. */
const after = (text: string, at: number): number =>
  at + 1 < text.length && isHigh(text.charCodeAt(at)) && isLow(text.charCodeAt(at + 1)) ? at + 2 : Math.min(text.length, at + 1)

/** Deletes `[from, to)`, the cursor at `from`. */
const cut = (line: InputLine, from: number, to: number): InputLine =>
  from >= to ? line : edit(line, line.text.slice(0, from) + line.text.slice(to), from)

/** Replaces the `length` characters before the cursor with `text` (a completion). @category Transitions */
export const replaceBefore = (line: InputLine, length: number, text: string): InputLine =>
  insert(cut(line, Math.max(0, line.cursor - length), line.cursor), text)

/** Deletes the character before the cursor (Backspace). @category Transitions */
export const backspace = (line: InputLine): InputLine => cut(line, before(line.text, line.cursor), line.cursor)

/** Deletes the character under the cursor (Delete, Ctrl+D). @category Transitions */
export const deleteForward = (line: InputLine): InputLine => cut(line, line.cursor, after(line.text, line.cursor))

/** One character left (←, Ctrl+B). @category Transitions */
export const left = (line: InputLine): InputLine => ({ ...line, cursor: before(line.text, line.cursor) })

/** One character right (→, Ctrl+F). @category Transitions */
export const right = (line: InputLine): InputLine => ({ ...line, cursor: after(line.text, line.cursor) })

/** The start of the cursor's line. */
const lineStart = (line: InputLine): number => line.text.lastIndexOf("\n", line.cursor - 1) + 1

/** The end of the cursor's line. */
const lineEnd = (line: InputLine): number => {
  const end = line.text.indexOf("\n", line.cursor)
  return end === -1 ? line.text.length : end
}

/** The start of the cursor's line (Home, Ctrl+A). @category Transitions */
export const home = (line: InputLine): InputLine => ({ ...line, cursor: lineStart(line) })

/** The end of the cursor's line (End, Ctrl+E). @category Transitions */
export const end = (line: InputLine): InputLine => ({ ...line, cursor: lineEnd(line) })

/** The start of the word before the cursor (spaces skipped first). */
const wordBefore = (line: InputLine): number => {
  let at = line.cursor
  while (at > 0 && /\s/.test(line.text[at - 1]!)) at--
  while (at > 0 && !/\s/.test(line.text[at - 1]!)) at--
  return at
}

/** The end of the word after the cursor (spaces skipped first). */
const wordAfter = (line: InputLine): number => {
  let at = line.cursor
  while (at < line.text.length && /\s/.test(line.text[at]!)) at++
  while (at < line.text.length && !/\s/.test(line.text[at]!)) at++
  return at
}

/** One word left (Alt+B, Ctrl+←). @category Transitions */
export const wordLeft = (line: InputLine): InputLine => ({ ...line, cursor: wordBefore(line) })

/** One word right (Alt+F, Ctrl+→). @category Transitions */
export const wordRight = (line: InputLine): InputLine => ({ ...line, cursor: wordAfter(line) })

/** Deletes the word before the cursor (Ctrl+W, Alt+Backspace). @category Transitions */
export const deleteWordBack = (line: InputLine): InputLine => cut(line, wordBefore(line), line.cursor)

/** Deletes the word after the cursor (Alt+D). @category Transitions */
export const deleteWordForward = (line: InputLine): InputLine => cut(line, line.cursor, wordAfter(line))

/** Deletes to the end of the cursor's line (Ctrl+K). @category Transitions */
export const killToEnd = (line: InputLine): InputLine => cut(line, line.cursor, lineEnd(line))

/** Deletes to the start of the cursor's line (Ctrl+U). @category Transitions */
export const killToStart = (line: InputLine): InputLine => cut(line, lineStart(line), line.cursor)

/** The cursor moved to line `row` of the text, as near its column as that line allows. */
const toRow = (line: InputLine, row: number): InputLine => {
  const column = line.cursor - lineStart(line)
  const lines = line.text.split("\n")
  const start = lines.slice(0, row).reduce((sum, l) => sum + l.length + 1, 0)
  return { ...line, cursor: start + Math.min(column, lines[row]!.length) }
}

/** The row of the text the cursor is on, from 0. */
const rowOf = (line: InputLine): number => line.text.slice(0, line.cursor).split("\n").length - 1

/** History entry `browsing` shown (-1: the draft), the cursor at its end. */
const browse = (line: InputLine, browsing: number): InputLine => {
  const draft = line.browsing === -1 ? { text: line.text, pulledBack: line.pulledBack } : line.draft
  const text = browsing === -1 ? draft.text : line.history[browsing]!
  return { ...line, text, cursor: text.length, browsing, draft, pulledBack: browsing === -1 && draft.pulledBack }
}

/**
 * ↑: the line above in a multi-line text, else the previous history entry (the text being written
 * is kept, and comes back on ↓).
 *
 * @category Transitions
 */
export const up = (line: InputLine): InputLine => {
  const row = rowOf(line)
  if (row > 0) return toRow(line, row - 1)
  return line.browsing + 1 < line.history.length ? browse(line, line.browsing + 1) : line
}

/** ↓: the line below in a multi-line text, else the next history entry, then the draft. @category Transitions */
export const down = (line: InputLine): InputLine => {
  const row = rowOf(line)
  if (row < line.text.split("\n").length - 1) return toRow(line, row + 1)
  return line.browsing > -1 ? browse(line, line.browsing - 1) : line
}

/** The cursor's line up to the cursor (what completion completes). @category Getters */
export const beforeCursor = (line: InputLine): string => line.text.slice(lineStart(line), line.cursor)

/** Whether nothing is written (spaces count as nothing). @category Getters */
export const isBlank = (line: InputLine): boolean => line.text.trim() === ""
