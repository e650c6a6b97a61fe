/**
 * The tool result budget stage: a tool result over 50,000 characters (or over the smaller limit its
 * tool declares, `Tool.maxResultChars`) is saved to a file in the session's folder and replaced by a
 * preview (~2 KB) and the file's path; the results of one message are capped at 200,000 characters
 * together (the largest are replaced first). A tool that bounds its output itself (Read, declaring
 * `Infinity`) is exempt from both: its results are never replaced. Each result's tool is found from
 * the `tool_use` blocks of the assistant message before it, as the stage context's `resultLimit`
 * names each tool's limit; tools that declare none (MCP tools) get the generic threshold. Decisions are stable
 * per `tool_use_id`: a result once replaced stays replaced with the same text, and a result once
 * kept stays kept, so the prompt cache stays valid. Only messages not yet examined are looked at (the
 * pipeline's output becomes the history, so earlier ones carry their decisions already), so the stage
 * costs time in proportion to what is new; a history replaced below it (a compaction) is examined
 * again, and the standing decisions applied.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import { AssistantMessage, type Message, TextBlock, ToolResultBlock, UserMessage } from "../message/Message.js"
import { id as stageId, type Stage } from "../turn/Stage.js"
import * as StageMemory from "../turn/StageMemory.js"

/**
 * Copies of messages this stage already holds, with a tool result's content replaced by a string:
 * made without validating again what was validated when made.
 */
const unchecked = { disableValidation: true } as const

/** This stage's identity, for editing a pipeline (`Pipeline.without(ToolResultBudget.id)`). @category Constants */
export const id = stageId("tool-result-budget")

/** Options; the numbers default to Claude Code's. @category Models */
export interface Options {
  /** The folder under which each session's results are saved (`<directory>/<sessionId>/tool-results/`). */
  readonly directory: string
  readonly maxResultChars?: number | undefined
  readonly maxMessageChars?: number | undefined
  readonly previewChars?: number | undefined
}

/** The text of a result, when it is all text (images and documents are left alone). */
const textOf = (block: ToolResultBlock): string | undefined => {
  if (block.content === undefined) return ""
  if (typeof block.content === "string") return block.content
  let out = ""
  for (const part of block.content) {
    if (!(part instanceof TextBlock)) return undefined
    out += part.text
  }
  return out
}

/** The text that replaces a saved result. @category Constructors */
export const replacement = (path: string, text: string, previewChars: number): string =>
  `<persisted-output>\nOutput too large (${text.length} characters). Full output saved to: ${path}\n` +
  `Read that file (with offset and limit) for the rest.\n\nPreview (first ${previewChars} characters):\n` +
  `${text.slice(0, previewChars)}\n</persisted-output>`

/**
 * The threshold for each result of the user message at `index`, by tool_use_id: the tool's declared
 * limit capped by `max` (`Infinity` for an exempt tool), found through the assistant message before it.
 */
const thresholds = (
  messages: ReadonlyArray<Message>,
  index: number,
  max: number,
  resultLimit: ((toolName: string) => number | undefined) | undefined
): ReadonlyMap<string, number> => {
  const out = new Map<string, number>()
  const before = messages[index - 1]
  if (resultLimit === undefined || !(before instanceof AssistantMessage)) return out
  for (const use of before.toolUses) {
    const declared = resultLimit(use.name)
    if (declared !== undefined) out.set(use.id, declared === Infinity ? Infinity : Math.min(declared, max))
  }
  return out
}

/** What the stage remembers of one session, in the session's `StageMemory`; updated in place (one fiber runs a session's pipeline at a time). */
interface SessionState {
  /** How many messages of the conversation have been examined, and the last one examined (to notice a replaced history). */
  examined: number
  lastExamined: Message | undefined
  /** tool_use_id → the replacement text, or `null` when the result was kept. */
  readonly decisions: Map<string, string | null>
}

/** The stage, saving through the `FileSystem` and `Path` in context. @category Constructors */
export const make = (options: Options): Effect.Effect<Stage, never, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const maxResult = options.maxResultChars ?? 50_000
    const maxMessage = options.maxMessageChars ?? 200_000
    const preview = options.previewChars ?? 2_000

    /** Saves `text` for `toolUseId`; the replacement text (or a note that saving failed, with the preview). */
    const save = (sessionId: string, toolUseId: string, text: string) =>
      Effect.gen(function*() {
        const dir = path.join(options.directory, sessionId, "tool-results")
        const file = path.join(dir, `${toolUseId.replace(/[^A-Za-z0-9_-]/g, "_")}.txt`)
        const saved = yield* Effect.either(
          Effect.zipRight(fs.makeDirectory(dir, { recursive: true }), fs.writeFileString(file, text))
        )
        return saved._tag === "Right"
          ? replacement(file, text, preview)
          : `${text.slice(0, preview)}\n[... ${text.length - preview} more characters cut: the full output could not be saved]`
      })

    return {
      id,
      run: (messages, context) =>
        Effect.gen(function*() {
          const state = yield* StageMemory.slotOf<SessionState>(
            context.memory,
            id,
            () => ({ examined: 0, lastExamined: undefined, decisions: new Map() })
          )
          // A history replaced from below (a compaction) is examined again from the start; decisions stand.
          if (state.examined > messages.length || messages[state.examined - 1] !== state.lastExamined) {
            state.examined = 0
          }
          const decisions = state.decisions
          let out: Array<Message> | undefined
          let replaced = 0
          // Messages examined before already carry their decisions (the pipeline's output becomes the history).
          for (let i = state.examined; i < messages.length; i++) {
            const m = messages[i]!
            if (!(m instanceof UserMessage) || typeof m.content === "string") continue
            const results = m.content.filter((b): b is ToolResultBlock => b instanceof ToolResultBlock)
            if (results.length === 0) continue
            const texts = new Map<string, string>()
            for (const r of results) {
              const text = textOf(r)
              if (text !== undefined) texts.set(r.tool_use_id, text)
            }
            const limits = thresholds(messages, i, maxResult, context.resultLimit)
            const limitOf = (id: string) => limits.get(id) ?? maxResult
            const newText = new Map<string, string>()
            let total = 0
            for (const [id, text] of texts) {
              const decided = decisions.get(id)
              if (typeof decided === "string") newText.set(id, decided)
              else if (decided === undefined && text.length > limitOf(id)) {
                newText.set(id, yield* save(context.sessionId, id, text))
                replaced++
              }
              total += newText.get(id)?.length ?? text.length
            }
            if (total > maxMessage) {
              // The largest undecided results go first, until the message fits; exempt tools' stay whole.
              const candidates = [...texts]
                .filter(([id]) => !newText.has(id) && decisions.get(id) === undefined && limitOf(id) !== Infinity)
                .sort((a, b) => b[1].length - a[1].length)
              for (const [id, text] of candidates) {
                if (total <= maxMessage) break
                const r = yield* save(context.sessionId, id, text)
                newText.set(id, r)
                total -= text.length - r.length
                replaced++
              }
            }
            for (const id of texts.keys()) if (!decisions.has(id)) decisions.set(id, newText.get(id) ?? null)
            if (newText.size === 0) continue
            const content = m.content.map((b) => {
              if (!(b instanceof ToolResultBlock)) return b
              const text = newText.get(b.tool_use_id)
              if (text === undefined || textOf(b) === text) return b
              return new ToolResultBlock({ ...b, content: text }, unchecked)
            })
            if (content.every((b, j) => b === (m.content as ReadonlyArray<unknown>)[j])) continue
            out ??= [...messages]
            out[i] = new UserMessage({ content }, unchecked)
          }
          const result = out ?? messages
          state.examined = result.length
          state.lastExamined = result[result.length - 1]
          return out === undefined
            ? { messages }
            : {
              messages: out,
              ...(replaced > 0 ? { report: `saved ${replaced} large tool result(s) to files` } : { report: "kept saved results replaced" })
            }
        })
    } satisfies Stage
  })
