/**
 * A session's transcript walked in order: its entries grouped into turns, and what each turn
 * recorded (the model's answers with the conversation each answered, the tool results, compactions,
 * model switches), with the token totals when it started and when it ended. The read model and
 * every export are projections of this walk, so they agree on where a turn starts and which answer
 * a result belongs to; nothing here reads anything but the entries.
 *
 * Where a turn starts: at the `user` entry its `envelope` names (the envelope follows it). A
 * transcript written before envelopes (or the part of one before its first envelope, such as a
 * fork's carried history) has none: there each prompt starts a turn (a user message without tool
 * results, other than the continuation after an answer cut at the output limit). An envelope that
 * names no entry of its own starts a turn where it is.
 *
 * What is new in an entry: a `user`/`assistant` entry appends a message (an answer, always new); a
 * `rewrite` replaces the conversation (a stage or a compaction), and the messages it writes inline
 * are new only where they carry an answer not seen before (by message id) or tool results not seen
 * before (by `tool_use_id`); the rest are old messages rewritten (snipped, cleared, folded).
 *
 * @since 0.1.0
 */
import * as SummaryPrompt from "../context/SummaryPrompt.js"
import { AssistantMessage, type Message, TextBlock, type ToolResultBlock, UserMessage } from "../message/Message.js"
import type * as Action from "../action/Action.js"
import type { PerModel } from "../session/TokenUsage.js"
import * as Transcript from "../session/Transcript.js"
import type * as TranscriptEntry from "../session/TranscriptEntry.js"
import type * as TurnEnvelope from "../session/TurnEnvelope.js"
import * as TurnPolicy from "../turn/TurnPolicy.js"

/** What a turn recorded, in order. @category Models */
export type Event =
  /** An answer of the model; `conversation.slice(0, position)` is what it answered. */
  | {
    readonly _tag: "Answer"
    readonly message: AssistantMessage
    readonly conversation: ReadonlyArray<Message>
    readonly position: number
    readonly at: string
  }
  /** Tool results recorded for the first time. */
  | { readonly _tag: "Results"; readonly results: ReadonlyArray<ToolResultBlock>; readonly at: string }
  /** User text inside a turn that does not start one (a continuation request, text after results). */
  | { readonly _tag: "UserText"; readonly text: string; readonly at: string }
  /** The conversation was replaced; `summary` is a compaction's summary text. */
  | {
    readonly _tag: "Rewrite"
    readonly entry: typeof TranscriptEntry.RewriteEntry.Type
    readonly summary: string | undefined
    readonly at: string
  }
  /** The model of the session's calls changed. */
  | { readonly _tag: "Model"; readonly model: string; readonly fallback: boolean; readonly at: string }

/** One turn as the transcript recorded it. @category Models */
export interface Turn {
  /** From 1, in the order of the file. */
  readonly index: number
  /** The envelope's turn id, else the uuid of the entry that started the turn. */
  readonly turnId: string
  /** The uuid of the `user` entry of its prompt, if one started it. */
  readonly userEntry: string | undefined
  /** The prompt: the envelope's effective text (as typed, without attached files), else the user message's text. */
  readonly prompt: string
  readonly envelope: TurnEnvelope.TurnEnvelope | undefined
  readonly events: ReadonlyArray<Event>
  /** The working directory its entries were written in. */
  readonly cwd: string
  readonly startedAt: string
  readonly endedAt: string
  /** The session's token totals per model when the turn started, and at its last `usage` entry. */
  readonly usageBefore: PerModel
  readonly usageAfter: PerModel
}

/** A transcript walked. @category Models */
export interface Walk {
  readonly turns: ReadonlyArray<Turn>
  /** Every action event, in order (see `Action.pendingAfter`). */
  readonly actions: ReadonlyArray<Action.Event>
  /** The first and last entries' timestamps. */
  readonly startedAt: string | undefined
  readonly updatedAt: string | undefined
}

/** The text blocks of a user message that are not tool results. */
const userTexts = (message: UserMessage): ReadonlyArray<string> =>
  typeof message.content === "string"
    ? [message.content]
    : message.content.flatMap((b) => (b instanceof TextBlock ? [b.text] : []))

/** A compaction's summary in the messages a rewrite wrote. */
const summaryOf = (entry: typeof TranscriptEntry.RewriteEntry.Type): string | undefined => {
  for (const op of entry.ops) {
    if (!("message" in op) || !(op.message instanceof UserMessage)) continue
    for (const text of userTexts(op.message)) {
      const summary = SummaryPrompt.summaryIn(text)
      if (summary !== undefined) return summary
    }
  }
  return undefined
}

/** Whether a user message starts a turn in a transcript without envelopes. */
const isLegacyPrompt = (message: Message): boolean => {
  const text = Transcript.promptText(message)
  return text !== undefined && text !== TurnPolicy.RESUME_PROMPT
}

/** The uuids of the `user` entries that envelopes name, and the index of the first such entry. */
const envelopeStarts = (entries: ReadonlyArray<TranscriptEntry.Entry>) => {
  const named = new Set<string>()
  for (const e of entries) if (e.type === "envelope" && e.user.entry !== undefined) named.add(e.user.entry)
  const first = entries.findIndex((e) => e.type === "user" && named.has(e.uuid))
  return { named, first: first === -1 ? entries.length : first }
}

interface Open {
  index: number
  turnId: string
  userEntry: string | undefined
  prompt: string
  envelope: TurnEnvelope.TurnEnvelope | undefined
  events: Array<Event>
  cwd: string
  startedAt: string
  endedAt: string
  usageBefore: PerModel
  usageAfter: PerModel
}

/**
 * Walks a transcript's entries (`Transcript.parseEntries`, in file order) into turns.
 *
 * @category Constructors
 */
export const walk = (entries: ReadonlyArray<TranscriptEntry.Entry>): Walk => {
  const { first, named } = envelopeStarts(entries)
  const turns: Array<Open> = []
  const actions: Array<Action.Event> = []
  const answered = new Set<string>()
  const resulted = new Set<string>()
  let conversation: Array<Message> = []
  let usage: PerModel = new Map()
  let current: Open | undefined

  const start = (entry: TranscriptEntry.Entry, prompt: string, userEntry: string | undefined): Open => {
    current = {
      index: turns.length + 1,
      turnId: entry.uuid,
      userEntry,
      prompt,
      envelope: undefined,
      events: [],
      cwd: entry.cwd,
      startedAt: entry.timestamp,
      endedAt: entry.timestamp,
      usageBefore: usage,
      usageAfter: usage
    }
    turns.push(current)
    return current
  }
  const turnFor = (entry: TranscriptEntry.Entry): Open => current ?? start(entry, "", undefined)
  /** Tool results of `message` not recorded before. */
  const newResults = (message: UserMessage): ReadonlyArray<ToolResultBlock> =>
    message.toolResults.filter((r) => {
      if (resulted.has(r.tool_use_id)) return false
      resulted.add(r.tool_use_id)
      return true
    })
  /**
   * Whether `message` is an answer not seen before: an appended one always is; one a rewrite wrote
   * inline is when its id is new (an old answer rewritten keeps its id; one without an id is old).
   */
  const isNewAnswer = (message: AssistantMessage, appended: boolean): boolean => {
    if (message.id === undefined) return appended
    if (answered.has(message.id) && !appended) return false
    answered.add(message.id)
    return true
  }

  entries.forEach((entry, i) => {
    switch (entry.type) {
      case "user": {
        const message = entry.message
        conversation.push(message)
        const starts = i < first ? isLegacyPrompt(message) : named.has(entry.uuid)
        if (starts) {
          start(entry, Transcript.promptText(message) ?? "", entry.uuid)
          break
        }
        const turn = turnFor(entry)
        const results = newResults(message)
        if (results.length > 0) turn.events.push({ _tag: "Results", results, at: entry.timestamp })
        for (const text of userTexts(message)) turn.events.push({ _tag: "UserText", text, at: entry.timestamp })
        break
      }
      case "assistant": {
        const position = conversation.length
        conversation.push(entry.message)
        if (isNewAnswer(entry.message, true)) {
          turnFor(entry).events.push({ _tag: "Answer", message: entry.message, conversation, position, at: entry.timestamp })
        }
        break
      }
      case "rewrite": {
        const rewritten: Array<Message> = []
        const turn = turnFor(entry)
        turn.events.push({ _tag: "Rewrite", entry, summary: summaryOf(entry), at: entry.timestamp })
        for (const op of entry.ops) {
          if ("keep" in op) {
            for (let k = op.keep[0]; k < op.keep[1]; k++) rewritten.push(conversation[k]!)
            continue
          }
          const message = op.message
          if (message instanceof AssistantMessage && isNewAnswer(message, false)) {
            turn.events.push({ _tag: "Answer", message, conversation: rewritten, position: rewritten.length, at: entry.timestamp })
          } else if (message instanceof UserMessage) {
            const results = newResults(message)
            if (results.length > 0) turn.events.push({ _tag: "Results", results, at: entry.timestamp })
          }
          rewritten.push(message)
        }
        conversation = rewritten
        break
      }
      case "model":
        if (current !== undefined) {
          current.events.push({ _tag: "Model", model: entry.model, fallback: entry.fallback, at: entry.timestamp })
        }
        break
      case "usage":
        usage = new Map(Object.entries(entry.models))
        if (current !== undefined) current.usageAfter = usage
        break
      case "envelope": {
        const envelope: TurnEnvelope.TurnEnvelope = {
          format: entry.format,
          turnId: entry.turnId,
          systemPrompt: entry.systemPrompt,
          context: entry.context,
          routing: entry.routing,
          toolPolicy: entry.toolPolicy,
          user: entry.user,
          ...(entry.outputSchema !== undefined ? { outputSchema: entry.outputSchema } : {}),
          ...(entry.metadata !== undefined ? { metadata: entry.metadata } : {})
        }
        const own = current !== undefined && current.envelope === undefined &&
          (entry.user.entry === undefined || entry.user.entry === current.userEntry)
        const turn = own ? current! : start(entry, entry.user.text, undefined)
        turn.envelope = envelope
        turn.turnId = entry.turnId
        turn.prompt = entry.user.text
        break
      }
      case "action":
        actions.push(entry.action)
        break
      case "file_state":
      case "origin":
      case "queue":
      case "goal":
      case "system_prompt":
        break
    }
    if (current !== undefined) current.endedAt = entry.timestamp
  })

  return {
    turns,
    actions,
    startedAt: entries[0]?.timestamp,
    updatedAt: entries.at(-1)?.timestamp
  }
}
