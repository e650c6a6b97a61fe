/** Summaries of repeated measurements: median and spread, as the bench table prints them. */

/** The median, min and max of some runs' figures (and how many runs). */
export interface Cell {
  readonly median: number
  readonly min: number
  readonly max: number
  readonly n: number
}

/** The median of `xs` (the mean of the middle two for an even count). */
export const median = (xs: ReadonlyArray<number>): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** The {@link Cell} of `xs` (which must not be empty). */
export const cell = (xs: ReadonlyArray<number>): Cell => {
  if (xs.length === 0) throw new Error("no measurements")
  return { median: median(xs), min: Math.min(...xs), max: Math.max(...xs), n: xs.length }
}
