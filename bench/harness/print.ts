/** Printing the bench table: one line per measured figure, medians with their spread, ratio, goal, met. */
import type { Client } from "./clients.js"
import type { Line } from "./line.js"
import type { Cell } from "./stats.js"

const digits = (unit: string, x: number) => (unit === "×" || x < 10 ? 2 : x < 100 ? 1 : 0)

const fmt = (unit: string, c: Cell | undefined): string => {
  if (c === undefined) return "—"
  const d = digits(unit, c.median)
  return `${c.median.toFixed(d)} (${c.min.toFixed(d)}–${c.max.toFixed(d)})`
}

/** The table as text. */
export const table = (lines: ReadonlyArray<Line>): string => {
  const header = ["", "unit", "keel", "raw SDK", "floor", "ratio", "goal", "met"]
  const rows = lines.map((l) => [
    l.label,
    l.unit,
    ...(["keel", "raw", "floor"] as const).map((c: Client) => fmt(l.unit, l.cells[c])),
    l.ratio === undefined ? "—" : `${l.ratio.toFixed(2)}×${l.ratioTo === "raw" || l.ratioTo === undefined ? "" : ` (${l.ratioTo})`}`,
    l.goal === "" ? "" : l.goal,
    l.met === undefined ? "" : l.met ? "met" : "NOT met"
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const render = (r: ReadonlyArray<string>) =>
    r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ")
  const notes = lines.flatMap((l) => (l.note === undefined ? [] : [`- ${l.note}`]))
  return [render(header), ...rows.map(render), ...(notes.length > 0 ? ["", ...notes] : [])].join("\n")
}
