/**
 * The REPL's colours: on for a terminal, off when the output is not one, when `NO_COLOR` is set
 * (https://no-color.org) or `TERM=dumb`; `FORCE_COLOR` turns them on anyway.
 *
 * @since 0.1.0
 */

/** A way to colour text (the identity when colours are off). @category Models */
export type Paint = (text: string) => string

/** The REPL's palette. @category Models */
export interface Style {
  readonly color: boolean
  readonly bold: Paint
  readonly dim: Paint
  readonly italic: Paint
  readonly red: Paint
  readonly green: Paint
  readonly yellow: Paint
  readonly cyan: Paint
  readonly magenta: Paint
}

/**
 * Whether to colour output written to a stream with `isTTY`, in environment `env`.
 *
 * @category Deciding
 */
export const colorEnabled = (isTTY: boolean | undefined, env: Readonly<Record<string, string | undefined>>): boolean => {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0" && env.FORCE_COLOR !== "false") return true
  if (env.TERM === "dumb") return false
  return isTTY === true
}

const sgr = (open: number, close: number): Paint => (text) => `\x1b[${open}m${text}\x1b[${close}m`
const plain: Paint = (text) => text

/** The palette, with colours or without. @category Constructors */
export const make = (color: boolean): Style => ({
  color,
  bold: color ? sgr(1, 22) : plain,
  dim: color ? sgr(2, 22) : plain,
  italic: color ? sgr(3, 23) : plain,
  red: color ? sgr(31, 39) : plain,
  green: color ? sgr(32, 39) : plain,
  yellow: color ? sgr(33, 39) : plain,
  cyan: color ? sgr(36, 39) : plain,
  magenta: color ? sgr(35, 39) : plain
})
