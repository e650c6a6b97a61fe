/** The bench runner's side of bench/serve.ts's log: clearing it before a run, reading it after. */

/** One Messages request the server answered: body arrival and response flush, epoch ms. */
export interface Exchange {
  readonly at: number
  readonly bytes: number
  readonly model: string
  readonly finish?: number
}

/** The server's log since the last {@link reset}. */
export interface Log {
  readonly exchanges: ReadonlyArray<Exchange>
  readonly firstBody?: string
  readonly lastBody?: string
}

/** Clears the server's log. */
export const reset = async (url: string): Promise<void> => {
  await (await fetch(`${url}/__bench/reset`, { method: "POST" })).text()
}

/** The server's log. */
export const read = async (url: string): Promise<Log> => (await fetch(`${url}/__bench/log`)).json() as Promise<Log>

/**
 * Turnarounds of a loop run in ms: for k = 1.., the time from the server flushing response k to
 * request k+1's body having arrived (the client's whole work between two model calls).
 */
export const turnarounds = (log: Log): Array<number> => {
  const out: Array<number> = []
  for (let k = 1; k < log.exchanges.length; k++) {
    const finish = log.exchanges[k - 1]!.finish
    if (finish === undefined) throw new Error(`response ${k} was not flushed`)
    out.push(log.exchanges[k]!.at - finish)
  }
  return out
}
