/**
 * A request body as JSON text, byte for byte what `JSON.stringify` makes of it, with each message
 * serialised once: a message's JSON is kept (by its param object, which `Message.toParam` caches
 * per message and `PromptCaching` copies before marking), so a round serialises only what is new
 * since the round before, not the whole growing history.
 *
 * @since 0.1.0
 */

const cache = new WeakMap<object, string>()

const jsonOf = (param: object): string => {
  let json = cache.get(param)
  if (json === undefined) {
    json = JSON.stringify(param)
    cache.set(param, json)
  }
  return json
}

/**
 * Stands for the messages in the body's JSON. Fixed, so that a body is the same bytes in every
 * process (no clock or random draw); a body that holds this string elsewhere is stringified whole.
 */
const PLACE = "\u0000keel-request-messages\u0000"
const QUOTED = JSON.stringify(PLACE)

/**
 * `JSON.stringify(body)`, reusing each message's JSON from earlier requests. Message params must not
 * change once sent (none does: they are built per message and copied to be marked).
 *
 * @category Conversions
 */
export const stringify = (body: { readonly messages: ReadonlyArray<object> }): string => {
  if (body.messages.length === 0) return JSON.stringify(body)
  // The body with a placeholder for its messages, its keys in the same order.
  const head = JSON.stringify({ ...body, messages: PLACE })
  const at = head.indexOf(QUOTED)
  if (at === -1 || head.indexOf(QUOTED, at + 1) !== -1) return JSON.stringify(body)
  const parts = new Array<string>(body.messages.length)
  for (let i = 0; i < parts.length; i++) parts[i] = jsonOf(body.messages[i]!)
  return `${head.slice(0, at)}[${parts.join(",")}]${head.slice(at + QUOTED.length)}`
}
