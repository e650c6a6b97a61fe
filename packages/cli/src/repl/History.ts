/**
 * The REPL's input history, kept across runs in `$KEEL_HOME/history.jsonl`: one JSON string a line
 * (so multi-line prompts survive), the last {@link InputLine.HISTORY_SIZE} kept. A file that
 * cannot be read or written is no history, never an error.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { HISTORY_SIZE } from "./InputLine.js"

/** The history file under `home`. @category Files */
export const file = (home: string): string => path.join(home, "history.jsonl")

/** The saved entries, oldest first (lines that are not JSON strings are skipped). @category Files */
export const load = (home: string): Array<string> => {
  let text: string
  try {
    text = fs.readFileSync(file(home), "utf8")
  } catch {
    return []
  }
  const entries: Array<string> = []
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue
    try {
      const entry: unknown = JSON.parse(line)
      if (typeof entry === "string") entries.push(entry)
    } catch {
      // a torn or foreign line: skip it
    }
  }
  return entries.slice(-HISTORY_SIZE)
}

/** Appends an entry (best effort). @category Files */
export const append = (home: string, entry: string): void => {
  try {
    fs.mkdirSync(home, { recursive: true })
    fs.appendFileSync(file(home), JSON.stringify(entry) + "\n")
  } catch {
    // history is a convenience: a read-only home must not stop the REPL
  }
}
