/**
 * What the kernel asks of a model: one Messages API request, plus where it comes from.
 *
 * @since 0.1.0
 */
import type Anthropic from "@anthropic-ai/sdk"
import type * as Tracer from "effect/Tracer"
import type { Message } from "../message/Message.js"
import type { Setting as ThinkingSetting } from "./Thinking.js"

/**
 * Who is asking. `foreground` is the user's turn; `background` is work the user did not ask for
 * directly (a compaction summary, a title), which resilience layers may treat more conservatively.
 *
 * @category Models
 */
export type QuerySource = "foreground" | "background"

/** A tool as the API sees it: name, description and JSON Schema of its input. @category Models */
export interface ToolDefinition {
  readonly name: string
  readonly description: string
  readonly input_schema: Anthropic.Messages.Tool.InputSchema
  /** A prompt-cache breakpoint after this tool (see `PromptCaching`). */
  readonly cache_control?: { readonly type: "ephemeral"; readonly ttl?: "5m" | "1h" }
}

/** One request to the model. @category Models */
export interface ModelRequest {
  readonly model: string
  readonly messages: ReadonlyArray<Message>
  readonly max_tokens: number
  readonly system?: string | ReadonlyArray<Anthropic.Messages.TextBlockParam>
  /**
   * How many leading blocks of `system` are its stable part (the base instructions, the same in
   * every session); the blocks after them are the session's own (project instructions, git,
   * environment). The prompt caching layer closes the stable part with a breakpoint. Absent: all
   * of `system` is stable. Not sent to the API.
   */
  readonly systemStableBlocks?: number
  readonly tools?: ReadonlyArray<ToolDefinition>
  readonly source: QuerySource
  /** Further Messages API body parameters (temperature, metadata, ...), passed through; they win over `thinking`'s. */
  readonly params?: Readonly<Record<string, unknown>>
  /**
   * The session's thinking and effort setting, resolved for `model` when the request is sent (see
   * `Thinking.resolve`), so a fallback model gets its own form. Absent: no thinking parameters.
   */
  readonly thinking?: ThinkingSetting | undefined
  /**
   * The `max_tokens` of this request on another model (each model's default unless the user set
   * one, see `ModelCapabilities.maxTokensFor`): a layer that switches `model` (`Fallback`) sets
   * `max_tokens` from it. Absent: `max_tokens` stays. Not sent to the API.
   */
  readonly maxTokensFor?: ((model: string) => number) | undefined
  /**
   * After this many consecutive `Overloaded` failures the retry layer stops and fails, so that the
   * fallback layer above it can switch models. Set by the fallback layer when it has a model to
   * switch to; unset, overloads are retried within the ordinary budget.
   */
  readonly overloadBudget?: number
  /**
   * The index of the message whose last block takes the conversation's cache breakpoint (default:
   * the last message). A request that extends a conversation only to ask one thing of it (a
   * compaction summary) sets it to where the conversation's previous request ended: it then reads
   * that request's cached prefix, byte for byte, and writes no cache for what follows. A request
   * that sets it is marked whatever its source (see `PromptCaching`). Not sent to the API.
   */
  readonly cacheTailAt?: number | undefined
  /**
   * The span of the model call this request is for: the parent of the spans the layers below make
   * (the retry layer's, an attempt each). Not sent to the API.
   */
  readonly span?: Tracer.AnySpan
}
