/**
 * The text of a headless xterm's buffer (scrollback and screen) as `tmux capture-pane -p -J -S -`
 * gives it: one line per row, a row wrapped onto the next joined with it, cells never written left
 * out at the end of a row (a written space stays); optionally with SGR escapes for colours and
 * styles (`-e`).
 */
import type { IBuffer, IBufferCell, IBufferLine } from "@xterm/headless"

/** The SGR parameters of a colour: `base` 30 for the foreground, 40 for the background. */
const colour = (base: 30 | 40, mode: "default" | "palette" | "rgb", value: number): Array<number> => {
  if (mode === "default") return []
  if (mode === "rgb") return [base + 8, 2, (value >> 16) & 0xff, (value >> 8) & 0xff, value & 0xff]
  if (value < 8) return [base + value]
  if (value < 16) return [base + 60 + value - 8]
  return [base + 8, 5, value]
}

const fgMode = (c: IBufferCell) => (c.isFgRGB() ? "rgb" : c.isFgPalette() ? "palette" : "default")
const bgMode = (c: IBufferCell) => (c.isBgRGB() ? "rgb" : c.isBgPalette() ? "palette" : "default")

/** The SGR parameters that set a cell's style from a reset (empty for the default style). */
const style = (c: IBufferCell): Array<number> => [
  ...(c.isBold() ? [1] : []),
  ...(c.isDim() ? [2] : []),
  ...(c.isItalic() ? [3] : []),
  ...(c.isUnderline() ? [4] : []),
  ...(c.isBlink() ? [5] : []),
  ...(c.isInverse() ? [7] : []),
  ...(c.isInvisible() ? [8] : []),
  ...(c.isStrikethrough() ? [9] : []),
  ...colour(30, fgMode(c), c.getFgColor()),
  ...colour(40, bgMode(c), c.getBgColor())
]

/** One row with SGR escapes: a style change emits a reset and the new style; a styled end resets. */
const styledRow = (line: IBufferLine, cell: IBufferCell, trimmed: number): string => {
  let out = ""
  let current = ""
  for (let x = 0; x < trimmed; x++) {
    line.getCell(x, cell)
    if (cell.getWidth() === 0) continue // the second half of a wide character
    const params = style(cell).join(";")
    if (params !== current) {
      out += params === "" ? "\x1b[0m" : `\x1b[0;${params}m`
      current = params
    }
    out += cell.getChars() === "" ? " " : cell.getChars()
  }
  return current === "" ? out : `${out}\x1b[0m`
}

/** The number of a row's cells up to its last written one (as xterm trims rows). */
const trimmedCells = (line: IBufferLine, cell: IBufferCell): number => {
  let end = line.length
  while (end > 0 && line.getCell(end - 1, cell)?.getChars() === "") end--
  return end
}

/** The buffer's text, every row of its scrollback and screen, each ending in a line break. */
export const capture = (buffer: IBuffer, options: { readonly escapes?: boolean } = {}): string => {
  const cell = buffer.getNullCell()
  const rows: Array<string> = []
  for (let y = 0; y < buffer.length; y++) {
    const line = buffer.getLine(y)
    if (line === undefined) continue
    const text = options.escapes === true ? styledRow(line, cell, trimmedCells(line, cell)) : line.translateToString(true)
    if (line.isWrapped && rows.length > 0) rows[rows.length - 1] += text
    else rows.push(text)
  }
  return rows.map((r) => `${r}\n`).join("")
}
