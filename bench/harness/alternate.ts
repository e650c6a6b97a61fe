/**
 * Interleaved runs: after `warmups` untimed runs of each contestant, `runs` rounds in which every
 * contestant runs once, the order rotating by one each round (ABC, BCA, CAB, ...), so that a burst
 * of load from the machine's other users, or a warm cache one of them leaves, spreads over all.
 */
export const alternate = async <K extends string, T>(
  contestants: ReadonlyArray<readonly [K, () => Promise<T>]>,
  runs: number,
  warmups: number,
  progress?: (name: K, i: number) => void
): Promise<Record<K, Array<T>>> => {
  const results = {} as Record<K, Array<T>>
  for (const [name] of contestants) results[name] = []
  for (let w = 0; w < warmups; w++) for (const [name, once] of contestants) {
    progress?.(name, -1)
    await once()
  }
  for (let i = 0; i < runs; i++) {
    for (let j = 0; j < contestants.length; j++) {
      const [name, once] = contestants[(i + j) % contestants.length]!
      progress?.(name, i)
      results[name].push(await once())
    }
  }
  return results
}
