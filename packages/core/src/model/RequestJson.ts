/**
 * A request body as JSON text, byte for byte what `JSON.stringify` makes of it, with what repeats
 * from one request to the next serialised once: a message's JSON is kept (by its param object, which
 * `Message.toParam` caches per message and `PromptCaching` copies before marking), and so is that of
 * the body's other arrays (the tool definitions and the system blocks, the same objects in every
 * request of a turn, `PromptCaching`'s marked copies included), so a round serialises only what is
 * new since the round before, not the whole growing history nor the ~30 KB of tools and prompt.
 *
 * @since 0.1.0
 */

const cache = new WeakMap<object, string>()

/** `JSON.stringify(value)`, kept per object: the objects given must not change once serialised. */
const jsonOf = (value: object): string => {
  let json = cache.get(value)
  if (json === undefined) {
    json = JSON.stringify(value)
    cache.set(value, json)
  }
  return json
}

/** The JSON of one element of the messages array, as `JSON.stringify` writes it. */
const elementJson = (message: unknown): string =>
  typeof message === "object" && message !== null ? jsonOf(message) : JSON.stringify(message) ?? "null"

/**
 * The previous request's messages and the JSON text of all of them but the last (`[` and the
 * messages, comma-separated, without the closing bracket): the next request of a turn repeats them
 * (its last one is the previous request's last, unmarked: see `PromptCaching`) and adds its own.
 */
let previous: { readonly messages: ReadonlyArray<unknown>; readonly count: number; readonly json: string } | undefined

/**
 * The JSON of the messages array: the previous request's text for the messages it shares with this
 * one (the same objects, in the same places), then each further message's JSON from the cache. With
 * where, in it, the text of all but the last message ends (the next request's prefix).
 */
const messagesJson = (messages: ReadonlyArray<unknown>): { readonly json: string; readonly prefixEnd: number } => {
  let from = 0
  let json = "["
  if (previous !== undefined && previous.count < messages.length) {
    const shared = previous.messages
    let i = 0
    while (i < previous.count && shared[i] === messages[i]) i++
    if (i === previous.count) {
      from = i
      json = previous.json
    }
  }
  let prefixEnd = json.length
  for (let i = from; i < messages.length; i++) {
    if (i === messages.length - 1) prefixEnd = json.length
    json += (i === 0 ? "" : ",") + elementJson(messages[i])
  }
  return { json: `${json}]`, prefixEnd }
}

/**
 * `JSON.stringify(body)`, reusing the JSON of each message and of the body's other arrays (tools,
 * system) from earlier requests. None of these may change once sent (none does: message params are
 * built per message and copied to be marked; the tool definitions and system blocks are built once
 * per session or turn and copied to be marked). The body's own keys are written in its order, as
 * `JSON.stringify` writes them; a body with a `toJSON` is stringified whole.
 *
 * @category Conversions
 */
export const stringify = (body: { readonly messages: ReadonlyArray<object> }): string => {
  if (typeof (body as { toJSON?: unknown }).toJSON === "function") return JSON.stringify(body)
  let out = ""
  let messages: { readonly at: number; readonly value: ReadonlyArray<unknown>; readonly prefixEnd: number } | undefined
  for (const key of Object.keys(body)) {
    const value = (body as unknown as Record<string, unknown>)[key]
    let json: string | undefined
    if (!Array.isArray(value)) json = JSON.stringify(value)
    else if (key !== "messages") json = jsonOf(value)
    else {
      const made = messagesJson(value)
      json = made.json
      messages = { at: out.length + JSON.stringify(key).length + 2, value, prefixEnd: made.prefixEnd }
    }
    // Left out, as `JSON.stringify` leaves out undefined, functions and symbols.
    if (json === undefined) continue
    out += `${out.length === 0 ? "{" : ","}${JSON.stringify(key)}:${json}`
  }
  const json = out.length === 0 ? "{}" : `${out}}`
  if (messages !== undefined && messages.value.length > 0) {
    // A slice of the finished body: V8 flattens the body (as writing it to the socket would, once)
    // and the slice shares its text, so the next request's messages start from it without a copy.
    previous = {
      messages: messages.value,
      count: messages.value.length - 1,
      json: json.slice(messages.at, messages.at + messages.prefixEnd)
    }
  }
  return json
}
