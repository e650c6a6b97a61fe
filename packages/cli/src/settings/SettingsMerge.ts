/**
 * How settings from several sources add up, as in Claude Code: objects merge key by key, arrays
 * concatenate (a value already there is not repeated: permission rules, folders, hook matchers),
 * and any other value of a later (more local) source replaces an earlier one.
 *
 * @since 0.1.0
 */

const isObject = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

const concat = (a: ReadonlyArray<unknown>, b: ReadonlyArray<unknown>): Array<unknown> => {
  const seen = new Set(a.map((v) => JSON.stringify(v)))
  const out = [...a]
  for (const v of b) {
    const key = JSON.stringify(v)
    if (seen.has(key)) continue
    seen.add(key)
    out.push(v)
  }
  return out
}

/**
 * `later` merged over `earlier` (neither is changed).
 *
 * @category Merging
 */
export const merge = (earlier: unknown, later: unknown): unknown => {
  if (Array.isArray(earlier) && Array.isArray(later)) return concat(earlier, later)
  if (isObject(earlier) && isObject(later)) {
    const out: Record<string, unknown> = { ...earlier }
    for (const [key, value] of Object.entries(later)) {
      out[key] = Object.hasOwn(earlier, key) ? merge(earlier[key], value) : value
    }
    return out
  }
  return later
}

/**
 * Every one of `layers` merged over the ones before it, least local first.
 *
 * @category Merging
 */
export const mergeAll = <A extends Readonly<Record<string, unknown>>>(layers: ReadonlyArray<A>): A =>
  layers.reduce<unknown>((acc, layer) => merge(acc, layer), {}) as A
