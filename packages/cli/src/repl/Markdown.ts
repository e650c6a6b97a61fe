/**
 * Markdown for the terminal, as the answer streams: each complete line is rendered as soon as its
 * newline arrives (headings as their text alone, bold, without their `#` markers; lists, emphasis,
 * inline code, links, tables drawn with box characters, by marked + marked-terminal), code
 * blocks line by line with syntax highlighting (cli-highlight, the highlighter marked-terminal
 * uses) and without their fences, tables once their last row is in. Without colours the same
 * layout comes out as plain text.
 *
 * @since 0.1.0
 */
import { highlight, supportsLanguage } from "cli-highlight"
import { Marked, type MarkedExtension } from "marked"
import { markedTerminal } from "marked-terminal"
import { stripVTControlCharacters } from "node:util"

/** Renders one block of Markdown (a line, or a table) to terminal text, without trailing newlines. @category Models */
export type BlockRenderer = (markdown: string) => string

/** The escapes a heading of `depth` is drawn with: bold, and underlined for the first two levels. */
const headingStyle = (depth: number): readonly [string, string] =>
  depth <= 2 ? ["\x1b[1m\x1b[4m", "\x1b[24m\x1b[22m"] : ["\x1b[1m", "\x1b[22m"]

/**
 * Headings as their text alone on its line, without the `#` markers marked-terminal writes (its
 * `showSectionPrefix` also keeps only two styles: the first level and the rest).
 */
const headings: MarkedExtension = {
  renderer: {
    heading(token) {
      const [open, close] = headingStyle(token.depth)
      return `${open}${this.parser.parseInline(token.tokens)}${close}\n\n`
    }
  }
}

/** A renderer over marked + marked-terminal; without `color`, the same text minus the escapes. @category Constructors */
export const blockRenderer = (options: { readonly color: boolean; readonly width: number }): BlockRenderer => {
  const marked = new Marked(
    markedTerminal({
      width: Math.max(20, options.width),
      reflowText: false,
      tab: 2,
      emoji: false,
      showSectionPrefix: false
    }) as MarkedExtension,
    headings
  )
  return (markdown) => {
    const out = (marked.parse(markdown, { async: false }) as string).replace(/\s+$/, "")
    return options.color ? out : stripVTControlCharacters(out)
  }
}

/** Highlights one line of code in `language` (plain when colours are off or the language is unknown). @category Constructors */
export const codeHighlighter = (color: boolean) => (line: string, language: string): string => {
  if (!color || language === "" || !supportsLanguage(language)) return line
  try {
    return highlight(line, { language, ignoreIllegals: true })
  } catch {
    return line
  }
}

const FENCE = /^\s*(`{3,}|~{3,})\s*([\w#+.-]*)/
const TABLE_ROW = /^\s*\|/
const ORDERED_ITEM = /^\s*(\d{1,9}[.)])\s+(.*)$/

/**
 * The rendering state of one streamed answer: `push` text as it arrives and print what it returns;
 * `end` flushes the last line.
 *
 * @category Models
 */
export class MarkdownStream {
  private pending = ""
  private fence: { readonly marker: string; readonly language: string } | undefined = undefined
  private table: Array<string> = []
  private blank = true

  constructor(
    private readonly render: BlockRenderer,
    private readonly highlightLine: (line: string, language: string) => string,
    private readonly paintCode: (text: string) => string = (text) => text
  ) {}

  /** Adds streamed text; returns the rendered complete lines (ending with a newline), or "". */
  push(text: string): string {
    this.pending += text
    const last = this.pending.lastIndexOf("\n")
    if (last < 0) return ""
    const lines = this.pending.slice(0, last).split("\n")
    this.pending = this.pending.slice(last + 1)
    let out = ""
    for (const line of lines) out += this.line(line)
    return out
  }

  /** The text of the line still coming (not rendered yet; shown raw until its newline arrives). */
  partial(): string {
    return this.pending
  }

  /** Flushes what is left (a last line without newline, an open table); returns its rendering. */
  end(): string {
    let out = ""
    if (this.pending !== "") out += this.line(this.pending)
    this.pending = ""
    out += this.flushTable()
    this.fence = undefined
    this.blank = true
    return out
  }

  private line(line: string): string {
    if (this.fence !== undefined) {
      const close = line.trim()
      if (close.startsWith(this.fence.marker) && close.replace(/[`~]/g, "") === "") {
        this.fence = undefined
        return ""
      }
      return `  ${this.paintCode(this.highlightLine(line, this.fence.language))}\n`
    }
    if (TABLE_ROW.test(line)) {
      this.table.push(line)
      return ""
    }
    let out = this.flushTable()
    const fence = FENCE.exec(line)
    if (fence !== null) {
      this.fence = { marker: fence[1]!, language: fence[2] ?? "" }
      return out
    }
    if (line.trim() === "") {
      if (!this.blank) out += "\n"
      this.blank = true
      return out
    }
    this.blank = false
    const indent = /^\s*/.exec(line)![0]
    // An ordered item keeps its own number (rendered alone, every item would be "1.").
    const ordered = ORDERED_ITEM.exec(line)
    if (ordered !== null) return out + indent + ordered[1] + " " + this.render(ordered[2]!).replace(/^\s+/, "") + "\n"
    return out + indent + this.render(line.slice(indent.length)).replace(/^\s+/, "") + "\n"
  }

  private flushTable(): string {
    if (this.table.length === 0) return ""
    const table = this.table.join("\n")
    this.table = []
    this.blank = false
    return this.render(table) + "\n"
  }
}
