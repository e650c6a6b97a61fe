/**
 * The microcompact stage: clears the content of old results of the file and shell tools (Read,
 * Bash, Grep, Glob, Edit, Write), all but the most recent 5, replacing it with a short marker, when
 * the conversation passes a threshold or after an idle gap of 60 minutes since the last call (the
 * prompt cache has expired by then, so clearing costs no cache). It never touches a result the model
 * has not seen yet (those in the last message), and never removes a block: every `tool_use` keeps
 * its `tool_result`.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { AssistantMessage, type Message, ToolResultBlock, ToolUseBlock, UserMessage } from "../message/Message.js"
import { id as stageId, type Stage, type StageContext } from "../turn/Stage.js"
import * as StageMemory from "../turn/StageMemory.js"
import * as TokenEstimate from "./TokenEstimate.js"

/**
 * Copies of messages this stage already holds, with a tool result's content replaced by a string:
 * made without validating again what was validated when made.
 */
const unchecked = { disableValidation: true } as const

/** This stage's identity, for editing a pipeline (`Pipeline.without(Microcompact.id)`). @category Constants */
export const id = stageId("microcompact")

/** The marker that replaces a cleared result. @category Constants */
export const CLEARED = "[old tool result cleared]"

/** The tools whose old results are cleared (Claude Code's set). @category Constants */
export const DEFAULT_TOOLS: ReadonlyArray<string> = ["Read", "Bash", "Grep", "Glob", "Edit", "Write"]

/** Options; numbers default to Claude Code's. @category Models */
export interface Options {
  /** Clear when the request estimate reaches this many tokens (or this function of the model). */
  readonly triggerTokens: number | ((model: string) => number)
  /** Results kept, most recent first (5). */
  readonly keepRecent?: number | undefined
  readonly tools?: ReadonlyArray<string> | undefined
  /** Clear after this long without a call (60 minutes). */
  readonly idleGap?: Duration.DurationInput | undefined
  /**
   * Leave the conversation as it is when this holds: a compaction is due in the same preparation
   * (it replaces the conversation anyway, and its summary request should read the conversation's
   * cached prefix and see the results whole).
   */
  readonly unless?: ((messages: ReadonlyArray<Message>, context: StageContext) => boolean) | undefined
}

/**
 * The conversation with all but the `keepRecent` most recent clearable results cleared (the last
 * message's results are never counted or touched). The same array when nothing changes.
 *
 * @category Combinators
 */
export const clear = (
  messages: ReadonlyArray<Message>,
  options: { readonly keepRecent: number; readonly tools: ReadonlyArray<string> }
): { readonly messages: ReadonlyArray<Message>; readonly cleared: number } => {
  const tools = new Set(options.tools)
  const clearable = new Set<string>()
  for (const m of messages) {
    if (!(m instanceof AssistantMessage)) continue
    for (const b of m.content) if (b instanceof ToolUseBlock && tools.has(b.name)) clearable.add(b.id)
  }
  // Walk back from the message before the last: the first `keepRecent` clearable results stay.
  let kept = 0
  let cleared = 0
  let out: Array<Message> | undefined
  for (let i = messages.length - 2; i >= 0; i--) {
    const m = messages[i]!
    if (!(m instanceof UserMessage) || typeof m.content === "string") continue
    let changed = false
    const content = [...m.content].reverse().map((b) => {
      if (!(b instanceof ToolResultBlock) || !clearable.has(b.tool_use_id)) return b
      if (kept < options.keepRecent) {
        kept++
        return b
      }
      if (b.content === CLEARED) return b
      changed = true
      cleared++
      return new ToolResultBlock({ ...b, content: CLEARED }, unchecked)
    }).reverse()
    if (!changed) continue
    out ??= [...messages]
    out[i] = new UserMessage({ content }, unchecked)
  }
  return { messages: out ?? messages, cleared }
}

/** The stage. @category Constructors */
export const make = (options: Options): Effect.Effect<Stage> =>
  Effect.gen(function*() {
    const idleMs = Duration.toMillis(options.idleGap ?? Duration.minutes(60))
    const settings = { keepRecent: options.keepRecent ?? 5, tools: options.tools ?? DEFAULT_TOOLS }
    return {
      id,
      run: (messages, context) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          // When the session's previous request went out (in its stage memory, dropped with it).
          const slot = yield* StageMemory.slotOf<{ lastCall: number | undefined }>(context.memory, id, () => ({ lastCall: undefined }))
          const previous = slot.lastCall
          slot.lastCall = now
          const idle = previous !== undefined && now - previous >= idleMs
          const trigger = typeof options.triggerTokens === "number" ? options.triggerTokens : options.triggerTokens(context.model)
          if (!idle && TokenEstimate.ofRequest(messages) < trigger) return { messages }
          if (options.unless?.(messages, context) === true) return { messages }
          const result = clear(messages, settings)
          if (result.cleared === 0) return { messages }
          return {
            messages: result.messages,
            report: `cleared ${result.cleared} old tool result(s)${idle ? " after an idle gap" : ""}`
          }
        })
    } satisfies Stage
  })
