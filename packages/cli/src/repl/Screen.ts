/**
 * The REPL's terminal while it is live: what is printed scrolls up as usual, and the live area
 * (`Footer`: the answer's unfinished line, the working indicator, the input line, the queued
 * prompts) stays below it. Every change takes the area off the screen, prints what is new and
 * draws the area again, in one write; changes made in a `batch` make one write together.
 *
 * @since 0.1.0
 */
import * as Footer from "./Footer.js"

/** The terminal written to. @category Models */
export interface Terminal {
  readonly write: (text: string) => void
  readonly columns: () => number
  readonly rows: () => number
}

/** The live terminal. @category Models */
export interface Screen {
  /** Prints `text` above the area (a line not ended yet shows in the area until it is). */
  readonly write: (text: string) => void
  /** Changes parts of the area. */
  readonly set: (change: Partial<Footer.Parts>) => void
  /** Runs `f`, whose writes and changes are drawn once, at its end. */
  readonly batch: <A>(f: () => A) => A
  /** Clears the terminal and draws the area again (Ctrl+L). */
  readonly redraw: () => void
  /** Takes the area off the screen for good: later writes go straight to the terminal. */
  readonly close: () => void
}

/** A live screen on `terminal`. @category Constructors */
export const make = (terminal: Terminal): Screen => {
  let parts = Footer.empty
  let drawn: Footer.Layout | undefined
  let printed = ""
  // The printed text after its last newline: shown at the top of the area until its line ends.
  let unfinished = ""
  let depth = 0
  let closed = false

  const flush = () => {
    if (depth > 0 || closed) return
    const text = unfinished + printed
    const end = text.lastIndexOf("\n") + 1
    unfinished = text.slice(end)
    printed = ""
    const area = Footer.layout({ ...parts, partial: unfinished + parts.partial }, terminal.columns(), terminal.rows())
    terminal.write(`${drawn !== undefined ? Footer.clear(drawn) : ""}${text.slice(0, end)}${Footer.draw(area)}`)
    drawn = area
  }
  const batch = <A>(f: () => A): A => {
    depth++
    try {
      return f()
    } finally {
      depth--
      flush()
    }
  }
  return {
    write: (text) => {
      if (closed) return terminal.write(text)
      printed += text
      flush()
    },
    set: (change) => {
      parts = { ...parts, ...change }
      flush()
    },
    batch,
    redraw: () => {
      if (closed) return
      terminal.write("\x1b[H\x1b[2J")
      drawn = undefined
      flush()
    },
    close: () => {
      if (closed) return
      const rest = unfinished + printed
      terminal.write(`${drawn !== undefined ? Footer.clear(drawn) : ""}${rest}${rest === "" || rest.endsWith("\n") ? "" : "\n"}`)
      closed = true
      drawn = undefined
    }
  }
}
