/**
 * The system prompt in two parts. The stable part (the base instructions) is the same in every
 * session; the dynamic part (this session's project instructions, memory and environment) is
 * computed once per session. Each part is a list of named sections, and each section goes to the
 * API as one text block, stable blocks first, so a prompt-cache breakpoint can close the stable
 * part (see `PromptCaching`) with everything that differs between sessions after it. The tool
 * definitions travel in the request's `tools`, which the API puts before the system prompt in its
 * cache prefix: the stable prefix of a request is the tool definitions, then the base instructions.
 *
 * @since 0.1.0
 */
import type Anthropic from "@anthropic-ai/sdk"
import * as Schema from "effect/Schema"
import type { ModelRequest } from "../model/ModelRequest.js"
import { ContextSnapshot } from "./ContextSnapshot.js"

/**
 * One section of the prompt: what it holds (`base`, `custom`, `instructions`, `memory`,
 * `environment`, `append`, or an embedder's own name) and its text.
 *
 * @category Models
 */
export class Section extends Schema.Class<Section>("Section")({
  name: Schema.String,
  text: Schema.String
}) {}

/** A two-part system prompt. @category Models */
export class SystemPrompt extends Schema.Class<SystemPrompt>("SystemPrompt")({
  /** The same in every session: sent first, before the cache breakpoint. */
  stable: Schema.Array(Section),
  /** This session's: sent after the stable part, and never changed within the session. */
  dynamic: Schema.Array(Section),
  /**
   * The facts the dynamic part was built from (instruction files, environment, git), when an
   * assembly made it; not sent, recorded with each turn (see `TurnEnvelope`).
   */
  context: Schema.optional(ContextSnapshot)
}) {}

/** A prompt of these parts (and the facts its dynamic part was built from). @category Constructors */
export const make = (
  stable: ReadonlyArray<Section>,
  dynamic: ReadonlyArray<Section> = [],
  context?: ContextSnapshot | undefined
): SystemPrompt => new SystemPrompt(context === undefined ? { stable, dynamic } : { stable, dynamic, context })

/** A section. @category Constructors */
export const section = (name: string, text: string): Section => new Section({ name, text })

/**
 * A prompt that replaces the default one (`--system-prompt`, an embedder's `systemPrompt`): all of
 * it stable, a section per text block given.
 *
 * @category Constructors
 */
export const custom = (system: string | ReadonlyArray<{ readonly text: string }>): SystemPrompt =>
  make(typeof system === "string" ? [section("custom", system)] : system.map((block) => section("custom", block.text)))

/** `prompt` with `text` added as its last section (`--append-system-prompt`), in the dynamic part. @category Combinators */
export const append = (prompt: SystemPrompt, text: string): SystemPrompt =>
  make(prompt.stable, [...prompt.dynamic, section("append", text)], prompt.context)

/** What goes into a request: the `system` blocks, and how many of them are the stable part. @category Models */
export interface Rendered {
  readonly system: ReadonlyArray<Anthropic.Messages.TextBlockParam>
  /** The number of leading blocks of `system` that are the stable part (see `ModelRequest.systemStableBlocks`). */
  readonly stableBlocks: number
}

/**
 * The request's `system` blocks: a block per section, stable first; empty sections are left out
 * (the API refuses empty text blocks).
 *
 * @category Conversions
 */
export const render = (prompt: SystemPrompt): Rendered => {
  const blocks = (sections: ReadonlyArray<Section>) =>
    sections.filter((s) => s.text.length > 0).map((s): Anthropic.Messages.TextBlockParam => ({ type: "text", text: s.text }))
  const stable = blocks(prompt.stable)
  return { system: [...stable, ...blocks(prompt.dynamic)], stableBlocks: stable.length }
}

/** The request fields for `prompt`: `system` and `systemStableBlocks`. @category Conversions */
export const toRequest = (prompt: SystemPrompt): Pick<ModelRequest, "system" | "systemStableBlocks"> => {
  const rendered = render(prompt)
  return { system: rendered.system, systemStableBlocks: rendered.stableBlocks }
}

/** The whole prompt as one text, sections separated by blank lines (for display and estimates). @category Conversions */
export const text = (prompt: SystemPrompt): string =>
  [...prompt.stable, ...prompt.dynamic].map((s) => s.text).filter((t) => t.length > 0).join("\n\n")
