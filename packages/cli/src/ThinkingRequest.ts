/**
 * A stream-json host's `set_max_thinking_tokens` control request (the Agent SDK's
 * `setMaxThinkingTokens()`): `max_thinking_tokens` changes later turns' thinking (0 off, `null` the
 * model's default, any other number the budget; the effort is kept). A `thinking_display` is refused:
 * Keel streams thinking as the API returns it.
 *
 * @since 0.1.0
 */
import { type Session, Thinking } from "@keel/core"
import * as Effect from "effect/Effect"

/**
 * Applies the request's fields to `session`; the refusal's text when they are not valid (nothing
 * changed then), else `undefined`.
 *
 * @category Answering
 */
export const setMaxThinkingTokens = (
  session: Session.Service,
  request: Record<string, unknown>
): Effect.Effect<string | undefined> => {
  const tokens = request.max_thinking_tokens
  if (tokens !== null && !(typeof tokens === "number" && Number.isInteger(tokens) && tokens >= 0)) {
    return Effect.succeed(
      `set_max_thinking_tokens's max_thinking_tokens must be a whole number of tokens, 0 or more, or null; got ${JSON.stringify(tokens)}`
    )
  }
  const display = request.thinking_display
  if (display !== undefined && display !== null) {
    return Effect.succeed(
      `set_max_thinking_tokens's thinking_display ${JSON.stringify(display)} is not supported by Keel (thinking is streamed as the API returns it)`
    )
  }
  return Effect.as(
    Effect.flatMap(session.thinking, (setting) => session.setThinking(Thinking.withMaxThinkingTokens(setting, tokens))),
    undefined
  )
}
