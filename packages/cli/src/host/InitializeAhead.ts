/**
 * The host's `initialize`, read before the session is built: the Claude Agent SDK sends it as its
 * first stdin line, and some of its options shape the session itself (its `agents` are `Task`'s
 * agent types and the `system`/`init` list, fixed when the tools are built). The line is read
 * ahead and given back, so it is still answered in its place (`HostRequests`).
 *
 * @since 0.1.0
 */

/** What was read ahead: the input (the lines read ahead first), and the first line's `initialize`. @category Models */
export interface Ahead {
  readonly lines: AsyncIterable<string>
  /** The first non-blank line's `initialize` request, when it is one. */
  readonly initialize?: {
    readonly requestId: string
    readonly request: Readonly<Record<string, unknown>>
  } | undefined
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The `initialize` control request of a line, if it is one. */
const initializeOf = (line: string): Ahead["initialize"] => {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    return undefined
  }
  if (!isRecord(value) || value.type !== "control_request" || typeof value.request_id !== "string") return undefined
  const request = value.request
  return isRecord(request) && request.subtype === "initialize" ? { requestId: value.request_id, request } : undefined
}

/**
 * Reads `input` up to its first non-blank line (or its end), and gives it back whole, with that
 * line's `initialize` when it is one.
 *
 * @category Reading
 */
export const read = async (input: AsyncIterable<string>): Promise<Ahead> => {
  const iterator = input[Symbol.asyncIterator]()
  const taken: Array<string> = []
  let initialize: Ahead["initialize"]
  for (;;) {
    const next = await iterator.next()
    if (next.done === true) break
    taken.push(next.value)
    if (next.value.trim() === "") continue
    initialize = initializeOf(next.value)
    break
  }
  // Not an async generator: its `return` would wait for the pending read, so an interrupted reader
  // could not stop reading stdin. This one hands `return` to the input's iterator at once.
  const replay: AsyncIterator<string> = {
    next: () => {
      const line = taken.shift()
      return line !== undefined ? Promise.resolve({ done: false, value: line }) : iterator.next()
    },
    return: (value?: unknown) => {
      taken.length = 0
      return iterator.return !== undefined
        ? iterator.return(value)
        : Promise.resolve({ done: true, value: undefined })
    }
  }
  return { lines: { [Symbol.asyncIterator]: () => replay }, initialize }
}

/** Whether a value of the request sets something (not absent, `null`, or an empty object). */
const isSet = (value: unknown): boolean => value !== undefined && value !== null && !(isRecord(value) && Object.keys(value).length === 0)

/**
 * The run options the read-ahead `initialize` sets: its `agents` (the Agent SDK's `agents` option).
 *
 * @category Reading
 */
export const runOptions = (ahead: Ahead): { readonly agents?: unknown; readonly agentsOrigin?: string } =>
  ahead.initialize !== undefined && isSet(ahead.initialize.request.agents)
    ? { agents: ahead.initialize.request.agents, agentsOrigin: "initialize agents" }
    : {}

/**
 * Why the read-ahead `initialize` cannot be used with these flags, if it cannot: its `agents` and
 * `--agents` both define agents (give them in one place).
 *
 * @category Reading
 */
export const conflict = (ahead: Ahead, flags: { readonly agents?: string | undefined }): string | undefined =>
  flags.agents !== undefined && runOptions(ahead).agents !== undefined
    ? "--agents and the initialize request's agents both define agents; give them in one place"
    : undefined
