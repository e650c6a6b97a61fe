/**
 * Where two request bodies first differ: the JSON path of the first differing value (`system[1].text`,
 * `messages[3].content[0].input.path`, `tools`), both values, and a readable diff of them (for
 * text, the first differing lines with two lines of context; otherwise the two values as JSON).
 *
 * @since 0.1.0
 */

/** The first difference between two JSON values. @category Models */
export interface Difference {
  /** The JSON path of the first differing value (`$` for the whole body). */
  readonly path: string
  /** The value recorded (`undefined` when the key was absent). */
  readonly expected: unknown
  /** The value now (`undefined` when the key is absent). */
  readonly actual: unknown
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const keyPath = (path: string, key: string): string =>
  /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`

/**
 * The first difference between `expected` and `actual` (JSON values), depth first in key order of
 * `expected` (then keys only `actual` has), or `undefined` when they are equal.
 *
 * @category Comparing
 */
export const first = (expected: unknown, actual: unknown, path = "$"): Difference | undefined => {
  if (Object.is(expected, actual)) return undefined
  if (Array.isArray(expected) && Array.isArray(actual)) {
    const n = Math.min(expected.length, actual.length)
    for (let i = 0; i < n; i++) {
      const d = first(expected[i], actual[i], `${path}[${i}]`)
      if (d !== undefined) return d
    }
    if (expected.length === actual.length) return undefined
    return { path: `${path}[${n}]`, expected: expected[n], actual: actual[n] }
  }
  if (isObject(expected) && isObject(actual)) {
    for (const key of Object.keys(expected)) {
      const d = first(expected[key], actual[key], keyPath(path, key))
      if (d !== undefined) return d
    }
    for (const key of Object.keys(actual)) {
      if (!(key in expected)) return { path: keyPath(path, key), expected: undefined, actual: actual[key] }
    }
    return undefined
  }
  return { path, expected, actual }
}

const show = (u: unknown): string => (u === undefined ? "(absent)" : JSON.stringify(u, null, 2))

/**
 * A readable diff of a {@link Difference}: `-` lines recorded, `+` lines now. Text values show the
 * first differing lines with up to two lines of context before them; long values are cut.
 *
 * @category Formatting
 */
export const render = (difference: Difference, maxLines = 12): string => {
  const { actual, expected } = difference
  const a = typeof expected === "string" ? expected.split("\n") : show(expected).split("\n")
  const b = typeof actual === "string" ? actual.split("\n") : show(actual).split("\n")
  let at = 0
  while (at < a.length && at < b.length && a[at] === b[at]) at++
  let endA = a.length
  let endB = b.length
  while (endA > at && endB > at && a[endA - 1] === b[endB - 1]) {
    endA--
    endB--
  }
  const out: Array<string> = []
  for (let i = Math.max(0, at - 2); i < at; i++) out.push(`  ${a[i]}`)
  const cut = (lines: ReadonlyArray<string>, sign: string) => {
    const shown = lines.slice(0, maxLines)
    for (const line of shown) out.push(`${sign} ${line}`)
    if (lines.length > shown.length) out.push(`${sign} … ${lines.length - shown.length} more lines`)
  }
  cut(a.slice(at, endA), "-")
  cut(b.slice(at, endB), "+")
  return out.join("\n")
}
