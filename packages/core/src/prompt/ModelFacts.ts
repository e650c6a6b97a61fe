/**
 * What the environment section says about a model: its name and, where known, its training-data
 * cutoff, by model id (the figures Claude Code gives its models). A model the table does not know
 * is named by its id, with no cutoff.
 *
 * @since 0.1.0
 */

/** A model's name and knowledge cutoff. @category Models */
export interface ModelFacts {
  /** The model's name, e.g. `Sonnet 4.6`. */
  readonly name: string
  /** The month its knowledge stops, e.g. `August 2025`; absent when not known. */
  readonly cutoff?: string | undefined
}

/** Facts by model id part; the longest key the model id contains wins. @category Models */
export type Table = Readonly<Record<string, ModelFacts>>

/** The models Keel knows. @category Constants */
export const defaultTable: Table = {
  "claude-opus-4-7": { name: "Opus 4.7", cutoff: "January 2026" },
  "claude-opus-4-6": { name: "Opus 4.6", cutoff: "May 2025" },
  "claude-opus-4-5": { name: "Opus 4.5", cutoff: "May 2025" },
  "claude-opus-4-1": { name: "Opus 4.1", cutoff: "January 2025" },
  "claude-opus-4-0": { name: "Opus 4", cutoff: "January 2025" },
  "claude-opus-4-2025": { name: "Opus 4", cutoff: "January 2025" },
  "claude-sonnet-4-6": { name: "Sonnet 4.6", cutoff: "August 2025" },
  "claude-sonnet-4-5": { name: "Sonnet 4.5", cutoff: "January 2025" },
  "claude-sonnet-4-0": { name: "Sonnet 4", cutoff: "January 2025" },
  "claude-sonnet-4-2025": { name: "Sonnet 4", cutoff: "January 2025" },
  "claude-haiku-4-5": { name: "Haiku 4.5", cutoff: "February 2025" },
  "claude-3-7-sonnet": { name: "Claude 3.7 Sonnet" },
  "claude-3-5-haiku": { name: "Claude 3.5 Haiku" }
}

/** The facts of `model` (its id as its name when the table does not know it). @category Constructors */
export const of = (model: string, table: Table = defaultTable): ModelFacts => {
  let best: string | undefined
  for (const key of Object.keys(table)) {
    if (model.includes(key) && (best === undefined || key.length > best.length)) best = key
  }
  return best === undefined ? { name: model } : table[best]!
}
