/**
 * The live slash-command menu: while the input line holds only `/` and a partial command name, the
 * commands that match (the session's, the REPL's own, the Markdown ones) are listed under the line
 * with their descriptions, names that start with what is typed first, then names that contain it.
 * ↑/↓ choose, Tab or Enter complete, Esc closes it until the text changes. Pure: the matches and
 * the rows to show; `TerminalInput` keeps which one is chosen.
 *
 * @since 0.1.0
 */
import type { SlashCommand } from "@keel/core"
import * as Footer from "./Footer.js"
import type * as Style from "./Style.js"

/** One command of the menu. @category Models */
export interface Item {
  /** The name with its slash. */
  readonly name: string
  readonly argumentHint?: string | undefined
  readonly description: string
}

/** The most rows the menu takes; the chosen one is always among them. @category Constants */
export const MAX_ROWS = 8

/** The widest the name column gets (a longer name and argument hint is cut). @category Constants */
export const MAX_NAME_COLUMNS = 28

/** The items of `commands`, in their order, each name once (the first wins). @category Constructors */
export const items = (commands: ReadonlyArray<SlashCommand.Command>): ReadonlyArray<Item> => {
  const seen = new Set<string>()
  const out: Array<Item> = []
  for (const c of commands) {
    if (seen.has(c.name)) continue
    seen.add(c.name)
    out.push({ name: `/${c.name}`, argumentHint: c.argumentHint, description: c.description })
  }
  return out
}

/**
 * The items the menu shows for the input `text`: none unless it is a single `/word` with no space;
 * names starting with it first, then names containing it.
 *
 * @category Matching
 */
export const matching = (all: ReadonlyArray<Item>, text: string): ReadonlyArray<Item> => {
  if (!/^\/[^\s/]*$/.test(text)) return []
  const typed = text.slice(1).toLowerCase()
  const starts = all.filter((i) => i.name.slice(1).toLowerCase().startsWith(typed))
  const contains = all.filter((i) => !i.name.slice(1).toLowerCase().startsWith(typed) && i.name.toLowerCase().includes(typed))
  return [...starts, ...contains]
}

/** `text` cut to `columns` columns, with an ellipsis when cut. */
const fit = (text: string, columns: number): string => {
  if (Footer.width(text) <= columns) return text
  let out = ""
  for (const char of text) {
    if (Footer.width(out + char) > columns - 1) break
    out += char
  }
  return `${out}…`
}

/**
 * The menu's rows for a terminal `columns` wide: each a name (with its argument hint) in a column,
 * then its description, dim; the chosen one marked `›` and in cyan. At most {@link MAX_ROWS},
 * scrolled so the chosen one shows.
 *
 * @category Rendering
 */
export const rows = (
  shown: ReadonlyArray<Item>,
  selected: number,
  columns: number,
  style: Pick<Style.Style, "dim" | "cyan" | "bold">
): Array<string> => {
  if (shown.length === 0) return []
  const first = Math.min(Math.max(0, selected - MAX_ROWS + 1), Math.max(0, shown.length - MAX_ROWS))
  const window = shown.slice(first, first + MAX_ROWS)
  const label = (i: Item) => `${i.name}${i.argumentHint !== undefined ? ` ${i.argumentHint}` : ""}`
  const nameWidth = Math.min(Math.max(...window.map((i) => Footer.width(label(i)))), MAX_NAME_COLUMNS, Math.floor(columns / 2))
  return window.map((item, k) => {
    const chosen = first + k === selected
    const name = fit(label(item), nameWidth).padEnd(nameWidth)
    const room = Math.max(0, columns - 1 - 4 - nameWidth - 2)
    const description = room > 0 ? `  ${fit(item.description, room)}` : ""
    return chosen
      ? `${style.cyan(`  › ${name}`)}${style.dim(description)}`
      : `    ${name}${style.dim(description)}`
  })
}
