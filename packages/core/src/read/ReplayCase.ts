/**
 * The replay case: what a session's turns were built from and what the model answered, for a
 * replayer to run the same turns again against a scripted model and compare. Projected from the
 * transcript's entries (see `Facts`), never from a live session:
 * - the system prompts sent, by sha256 (`system_prompt` entries), and each turn's envelope
 *   (`TurnEnvelope`: routing, tool policy, context snapshot, effective user message, metadata);
 * - per turn, each model request in order: the conversation it sent (as recorded, after the
 *   stages and compactions that rewrote it), the answer as recorded (content, model, stop reason,
 *   usage), and the results of the answer's tool calls.
 *
 * What is not in it yet: the raw model streams (the SSE events with their timing) are not
 * recorded; the answers are the final messages the turn loop assembled from them. The
 * record/replay issue adds a journal of the streams; until then a replayer scripts each answer as
 * one reply. The requests of a compaction's summary (a model call outside the conversation) are not
 * recorded either, and prompt-cache breakpoints, which the transcript does not hold, are not shown.
 *
 * To keep a long session's case linear in size, each request's conversation is given as a change
 * of the one before it (in the order of the case): the first `keep` messages of the previous
 * request's conversation, then `append`. {@link conversations} expands them.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { AssistantMessage, Message, ToolResultBlock } from "../message/Message.js"
import type * as Transcript from "../session/Transcript.js"
import * as TurnEnvelope from "../session/TurnEnvelope.js"
import * as Facts from "./Facts.js"
import * as ReadModel from "./ReadModel.js"

/** The case's kind and format. @category Constants */
export const KIND = "keel/replay-case"
/** @category Constants */
export const FORMAT = 1

/** What the case holds of the model's output. @category Constants */
export const RECORDED_NOTE = "Model streams are not recorded yet (the record/replay journal adds them): each response " +
  "is the final assistant message as the transcript holds it, to be replayed as one scripted reply."

/** One model request: the conversation sent, the answer, the results of its tool calls. @category Schemas */
export const Request = Schema.Struct({
  /** The conversation sent: the previous request's first `keep` messages, then `append`. */
  messages: Schema.Struct({ keep: Schema.Int, append: Schema.Array(Message) }),
  response: AssistantMessage,
  /** The results of the response's tool calls, in `tool_use` order (as first recorded). */
  toolResults: Schema.Array(ToolResultBlock)
})

/** One turn. @category Schemas */
export const Turn = Schema.Struct({
  index: Schema.Int,
  turnId: Schema.String,
  prompt: Schema.String,
  envelope: Schema.NullOr(TurnEnvelope.TurnEnvelope),
  requests: Schema.Array(Request)
})

/** The replay case. @category Schemas */
export const ReplayCase = Schema.Struct({
  kind: Schema.Literal(KIND),
  format: Schema.Literal(FORMAT),
  session: ReadModel.Header,
  recorded: Schema.Struct({ modelStreams: Schema.Boolean, note: Schema.String }),
  /** The system prompts sent, by the sha256 envelopes name. */
  systemPrompts: Schema.Record({ key: Schema.String, value: TurnEnvelope.SystemPromptRecord }),
  turns: Schema.Array(Turn)
})

/** @category Models */
export type ReplayCase = typeof ReplayCase.Type

/** How many leading messages two conversations share (the same objects: a rewrite keeps them). */
const shared = (a: ReadonlyArray<Message>, b: ReadonlyArray<Message>): number => {
  let n = 0
  while (n < a.length && n < b.length && a[n] === b[n]) n++
  return n
}

/**
 * The replay case of a transcript (`Transcript.parseEntries`); `header` is the read model's.
 *
 * @category Constructors
 */
export const make = (decoded: Transcript.Decoded, header: typeof ReadModel.Header.Type): ReplayCase => {
  const walk = Facts.walk(decoded.entries)
  const results = new Map<string, ToolResultBlock>()
  for (const turn of walk.turns) {
    for (const e of turn.events) if (e._tag === "Results") for (const r of e.results) results.set(r.tool_use_id, r)
  }
  let previous: ReadonlyArray<Message> = []
  const turns = walk.turns.map((turn): typeof Turn.Type => ({
    index: turn.index,
    turnId: turn.turnId,
    prompt: turn.prompt,
    envelope: turn.envelope ?? null,
    requests: turn.events.flatMap((e) => {
      if (e._tag !== "Answer") return []
      const sent = e.conversation.slice(0, e.position)
      const keep = shared(previous, sent)
      previous = sent
      return [{
        messages: { keep, append: sent.slice(keep) },
        response: e.message,
        toolResults: e.message.toolUses.flatMap((u) => results.get(u.id) ?? [])
      }]
    })
  }))
  return {
    kind: KIND,
    format: FORMAT,
    session: header,
    recorded: { modelStreams: false, note: RECORDED_NOTE },
    systemPrompts: Object.fromEntries(decoded.loaded.prompts),
    turns
  }
}

/**
 * Each request's whole conversation, in the order of the case (turn by turn, request by request).
 *
 * @category Accessors
 */
export const conversations = (replay: ReplayCase): ReadonlyArray<ReadonlyArray<Message>> => {
  const out: Array<ReadonlyArray<Message>> = []
  let previous: ReadonlyArray<Message> = []
  for (const turn of replay.turns) {
    for (const request of turn.requests) {
      previous = [...previous.slice(0, request.messages.keep), ...request.messages.append]
      out.push(previous)
    }
  }
  return out
}
