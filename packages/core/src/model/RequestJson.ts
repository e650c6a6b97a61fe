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

/** The JSON of the messages array, each message's from the cache. */
const messagesJson = (messages: ReadonlyArray<object>): string => {
  const parts = new Array<string>(messages.length)
  for (let i = 0; i < parts.length; i++) {
    const message = messages[i]
    // What `JSON.stringify` does with an element that is not an object (`null` for undefined).
    parts[i] = typeof message === "object" && message !== null ? jsonOf(message) : JSON.stringify(message) ?? "null"
  }
  return `[${parts.join(",")}]`
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
  for (const key of Object.keys(body)) {
    const value = (body as unknown as Record<string, unknown>)[key]
    const json = Array.isArray(value)
      ? (key === "messages" ? messagesJson(value) : jsonOf(value))
      : JSON.stringify(value)
    // Left out, as `JSON.stringify` leaves out undefined, functions and symbols.
    if (json === undefined) continue
    out += `${out.length === 0 ? "{" : ","}${JSON.stringify(key)}:${json}`
  }
  return out.length === 0 ? "{}" : `${out}}`
}
