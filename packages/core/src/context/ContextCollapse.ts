/**
 * The context collapse stage: above 60 % of the window, the conversation is folded by age, without
 * a model call. The last 5 turns stay verbatim; turns 5 to 20 back keep the user's prompt and the
 * final answer, their tool calls folded to one line each; older turns become one line each (the
 * prompt and the answer, cut). Folded turns keep the user/assistant alternation and contain no
 * tool blocks, so no `tool_use` is left unanswered. Deterministic: the same conversation always
 * folds the same way.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { AssistantMessage, type Message, TextBlock, ToolUseBlock, UserMessage } from "../message/Message.js"
import { id as stageId, type Stage } from "../turn/Stage.js"
import { turnStarts } from "./Autocompact.js"
import * as TokenEstimate from "./TokenEstimate.js"

/** This stage's identity, for editing a pipeline (`Pipeline.without(ContextCollapse.id)`). @category Constants */
export const id = stageId("context-collapse")

/** Options; numbers default to Claude Code's. @category Models */
export interface Options {
  /** The context window, or a function of the model. */
  readonly window: number | ((model: string) => number)
  /** Collapse above this fraction of the window (0.6). */
  readonly ratio?: number | undefined
  /** Turns kept verbatim (5). */
  readonly verbatimTurns?: number | undefined
  /** Turns back to which prompts and answers are kept whole (20). */
  readonly summarizedTurns?: number | undefined
}

const LINE = 200

const oneLine = (text: string, max = LINE) => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

const promptText = (m: Message): string =>
  typeof m.content === "string"
    ? m.content
    : m.content.filter((b): b is TextBlock => b instanceof TextBlock).map((b) => b.text).join("\n")

/** One line per tool call: `Read(file_path=/a)`. */
const callLine = (b: ToolUseBlock): string => {
  const input = (b.input ?? {}) as Record<string, unknown>
  const args = Object.entries(input).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`).join(", ")
  return oneLine(`${b.name}(${args})`, 160)
}

/** A turn folded: its prompt, and one answer with its tool calls on a line each (or cut to one line). */
const fold = (turn: ReadonlyArray<Message>, mode: "calls" | "line"): Array<Message> => {
  const prompt = promptText(turn[0]!)
  const answers = turn.filter((m): m is AssistantMessage => m instanceof AssistantMessage)
  const calls = answers.flatMap((a) => a.toolUses)
  const final = answers.at(-1)?.text ?? ""
  if (mode === "line") {
    const summary = `[earlier turn, collapsed] ${oneLine(final)}${calls.length > 0 ? ` (${calls.length} tool calls)` : ""}`
    return [new UserMessage({ content: oneLine(prompt) }), new AssistantMessage({ content: [new TextBlock({ text: summary })] })]
  }
  const lines = calls.map((c) => `- ${callLine(c)}`)
  const text = [
    ...(lines.length > 0 ? [`[earlier turn, tool calls folded]\n${lines.join("\n")}`] : ["[earlier turn]"]),
    ...(final.length > 0 ? [final] : [])
  ].join("\n\n")
  return [new UserMessage({ content: prompt }), new AssistantMessage({ content: [new TextBlock({ text })] })]
}

/**
 * The conversation folded by age (see the module doc); the same array when there is nothing to fold.
 *
 * @category Combinators
 */
export const collapse = (
  messages: ReadonlyArray<Message>,
  options: { readonly verbatimTurns: number; readonly summarizedTurns: number }
): { readonly messages: ReadonlyArray<Message>; readonly folded: number } => {
  const starts = turnStarts(messages)
  const firstVerbatim = starts.length - options.verbatimTurns
  if (firstVerbatim <= 0) return { messages, folded: 0 }
  const out: Array<Message> = messages.slice(0, starts[0])
  let folded = 0
  for (let t = 0; t < firstVerbatim; t++) {
    const turn = messages.slice(starts[t], starts[t + 1])
    const back = starts.length - t
    const mode = back > options.summarizedTurns ? "line" : "calls"
    const alreadyFolded = turn.length === 2 && turn[1] instanceof AssistantMessage && turn[1].toolUses.length === 0 &&
      (mode === "calls" || turn[1].text.startsWith("[earlier turn, collapsed]"))
    if (alreadyFolded) {
      out.push(...turn)
      continue
    }
    out.push(...fold(turn, mode))
    folded++
  }
  out.push(...messages.slice(starts[firstVerbatim]))
  return folded === 0 ? { messages, folded } : { messages: out, folded }
}

/** The stage. @category Constructors */
export const make = (options: Options): Stage => {
  const settings = { verbatimTurns: options.verbatimTurns ?? 5, summarizedTurns: options.summarizedTurns ?? 20 }
  const ratio = options.ratio ?? 0.6
  return {
    id,
    run: (messages, context) =>
      Effect.sync(() => {
        const window = typeof options.window === "number" ? options.window : options.window(context.model)
        if (TokenEstimate.ofRequest(messages) < window * ratio) return { messages }
        const result = collapse(messages, settings)
        return result.folded === 0
          ? { messages }
          : { messages: result.messages, report: `collapsed ${result.folded} older turn(s)` }
      })
  }
}
