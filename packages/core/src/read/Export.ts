/**
 * A session's exports, each a self-contained file projected from its transcript (the recorded
 * facts; never a live session), as `keel export` writes them:
 * - `handoff` (`Handoff`): what another agent or a person needs to continue: the goal, a summary,
 *   the open items, the files touched. Markdown, or JSON with `json`.
 * - `replay` (`ReplayCase`): the envelopes and system prompts, and per turn the model requests as
 *   recorded, the answers and the tool results. JSON.
 * - `review` (`Review`): every tool call with its input, output, permission decision, and the
 *   diffs of the files it changed. JSON.
 *
 * JSON exports are the schemas' encoded form, indented, with a newline at the end; each starts
 * with its `kind` (`keel/handoff`, `keel/replay-case`, `keel/review`) and `format`.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as BashGrammar from "../permission/BashGrammar.js"
import { SessionStore } from "../session/SessionStore.js"
import type * as Transcript from "../session/Transcript.js"
import type { LoadError } from "../session/TranscriptError.js"
import * as Handoff from "./Handoff.js"
import * as ReadModel from "./ReadModel.js"
import * as ReplayCase from "./ReplayCase.js"
import * as Review from "./Review.js"

/** The export formats. @category Schemas */
export const Format = Schema.Literal("handoff", "replay", "review")
/** @category Models */
export type Format = typeof Format.Type

/** Every format, for usage lines. @category Constants */
export const FORMATS: ReadonlyArray<Format> = Format.literals

/** An export, ready to write. @category Models */
export interface Rendered {
  readonly text: string
  readonly mediaType: "application/json" | "text/markdown"
}

/** What rendering can be given. @category Models */
export interface Options extends ReadModel.Options {
  /** The handoff as JSON rather than Markdown (the other formats are always JSON). */
  readonly json?: boolean | undefined
}

const json = <A, I>(schema: Schema.Schema<A, I>, value: A): Rendered => ({
  text: `${JSON.stringify(Schema.encodeSync(schema)(value), null, 2)}\n`,
  mediaType: "application/json"
})

/**
 * The export of a transcript (`Transcript.parseEntries`) in `format`: a pure function of its
 * entries (Bash calls' decisions are explained on the bash grammar: run after `BashGrammar.ready`).
 *
 * @category Rendering
 */
export const render = (decoded: Transcript.Decoded, format: Format, options: Options = {}): Rendered => {
  const model = ReadModel.make(decoded, options)
  switch (format) {
    case "handoff": {
      const handoff = Handoff.make(model)
      return options.json === true
        ? json(Handoff.Handoff, handoff)
        : { text: Handoff.toMarkdown(handoff), mediaType: "text/markdown" }
    }
    case "replay":
      return json(ReplayCase.ReplayCase, ReplayCase.make(decoded, ReadModel.headerOf(model)))
    case "review":
      return json(Review.Review, Review.make(model))
  }
}

/**
 * The export of session `sessionId` of `cwd`, read from the `SessionStore`.
 *
 * @category Loading
 */
export const load = (
  sessionId: string,
  format: Format,
  options: Options & { readonly cwd: string }
): Effect.Effect<Rendered, LoadError, SessionStore> =>
  Effect.flatMap(
    Effect.zipRight(BashGrammar.ready, SessionStore),
    (store) => Effect.map(store.loadEntries(options.cwd, sessionId), (d) => render(d, format, options))
  )
