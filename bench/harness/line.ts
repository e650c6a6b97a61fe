/** A line of the bench table: what was measured for each client, the ratio, the goal and whether it is met. */
import type { Client } from "./clients.js"
import type { Cell } from "./stats.js"

/** One line of the table. */
export interface Line {
  /** The row it belongs to (KEEL_BENCH_ROWS picks rows by this). */
  readonly row: string
  readonly label: string
  /** The unit of the cells: "ms", "MB", "KB/event", "×". */
  readonly unit: string
  readonly cells: Partial<Record<Client, Cell>>
  /** The ratio printed (keel's median over `ratioTo`'s), when there is one. */
  readonly ratio?: number
  /** What the ratio is taken against: "raw" (the default), "floor", or a word for a self-ratio. */
  readonly ratioTo?: string
  /** The goal, as printed ("≤ 1.1×"), or "" for a line that only informs. */
  readonly goal: string
  readonly met?: boolean
  /** A short note printed under the table. */
  readonly note?: string
}

/** A ratio line: keel's median over `to`'s, met when it is at most `limit`. */
export const ratioLine = (
  row: string,
  label: string,
  unit: string,
  cells: Partial<Record<Client, Cell>>,
  limit: number | undefined,
  to: Client = "raw"
): Line => {
  const keel = cells.keel
  const other = cells[to]
  const ratio = keel !== undefined && other !== undefined ? keel.median / other.median : undefined
  return {
    row,
    label,
    unit,
    cells,
    ...(ratio !== undefined ? { ratio } : {}),
    ratioTo: to,
    goal: limit === undefined ? "" : `≤ ${limit}×`,
    ...(limit !== undefined && ratio !== undefined ? { met: ratio <= limit } : {})
  }
}

/** The context rows run in. */
export interface Context {
  readonly url: string
  /** The working directory of the measured processes (holds the loop's files). */
  readonly workspace: string
  /** keel's captured first request, for the raw and floor scripts. */
  readonly request: string
  /** Timed runs per client (rows with slow runs use fewer, see each row). */
  readonly runs: number
  /** Untimed runs per client before the timed ones. */
  readonly warmups: number
  /** Progress output (stderr). */
  readonly log: (line: string) => void
}
