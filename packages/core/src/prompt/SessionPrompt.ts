/**
 * A session's system prompt: the one its options give, or the `ContextAssembly`'s, with
 * `appendSystemPrompt` as its last section. Resolved once, at the first turn, and kept for the
 * session: git runs once, and nothing in it changes between requests, so the prompt cache holds.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type { ModelRequest } from "../model/ModelRequest.js"
import type { ContextAssembly } from "./ContextAssembly.js"
import * as SystemPrompt from "./SystemPrompt.js"

/** The prompt in its two parts, and the request fields it becomes. @category Models */
export interface Resolved {
  readonly prompt: SystemPrompt.SystemPrompt
  readonly request: Pick<ModelRequest, "system" | "systemStableBlocks">
}

/** What a session's prompt is made from. @category Models */
export interface Options {
  readonly cwd: string
  /** The session's model: the assembled environment names it. */
  readonly model?: string | undefined
  readonly systemPrompt?: ModelRequest["system"] | SystemPrompt.SystemPrompt | undefined
  readonly appendSystemPrompt?: string | undefined
}

/** The prompt for `options` (a string or blocks given by the embedder go as given). @category Constructors */
export const resolve = (options: Options, assembly: ContextAssembly["Type"]): Effect.Effect<Resolved> =>
  Effect.map(
    options.systemPrompt !== undefined
      ? Effect.succeed(options.systemPrompt)
      : assembly.assemble(options.cwd, { model: options.model }),
    (prompt): Resolved => {
      const twoPart = prompt instanceof SystemPrompt.SystemPrompt ? prompt : SystemPrompt.custom(prompt)
      if (options.appendSystemPrompt !== undefined) {
        const appended = SystemPrompt.append(twoPart, options.appendSystemPrompt)
        return { prompt: appended, request: SystemPrompt.toRequest(appended) }
      }
      const request = prompt instanceof SystemPrompt.SystemPrompt ? SystemPrompt.toRequest(prompt) : { system: prompt }
      return { prompt: twoPart, request }
    }
  )
