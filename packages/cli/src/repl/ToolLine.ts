/**
 * A tool call as the REPL shows it: one line with the tool and a short form of its input
 * (`Read(src/main.ts)`, `Bash(npm test)`), then its outcome and time (`⎿ 42 lines · 0.3 s`, or the
 * error's first line without the tags the model reads, or `Interrupted`).
 *
 * @since 0.1.0
 */
import * as path from "node:path"

const MAX_INPUT = 72

const cut = (text: string, max: number): string => {
  const line = text.replace(/\s+/g, " ").trim()
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

const relative = (cwd: string, file: string): string => {
  const rel = path.relative(cwd, file)
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : file
}

/** The first input field worth showing for each built-in tool. */
const KEY_FIELD: Readonly<Record<string, string>> = {
  Read: "file_path",
  Write: "file_path",
  Edit: "file_path",
  Bash: "command",
  Glob: "pattern",
  Grep: "pattern",
  Task: "description"
}

/**
 * The call as `Name(short input)`: the field that says what the call does (a path relative to
 * `cwd`, the command, the pattern), else the first string field, cut to one short line.
 *
 * @category Rendering
 */
export const describeCall = (name: string, input: unknown, cwd: string): string => {
  const fields = typeof input === "object" && input !== null ? (input as Record<string, unknown>) : {}
  const key = KEY_FIELD[name]
  let value = key !== undefined ? fields[key] : undefined
  if (typeof value !== "string") value = Object.values(fields).find((v) => typeof v === "string")
  if (name === "TodoWrite" && Array.isArray(fields.todos)) value = `${fields.todos.length} tasks`
  if (typeof value !== "string") return name
  const shown = key === "file_path" ? relative(cwd, value) : value
  return `${name}(${cut(shown, MAX_INPUT)})`
}

/** The text of a tool result's content (strings and text blocks; other blocks by kind). @category Rendering */
export const resultText = (content: unknown): string => {
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  return content
    .map((block: { type?: unknown; text?: unknown }) =>
      block.type === "text" && typeof block.text === "string" ? block.text : `[${String(block.type)}]`
    )
    .join("\n")
}

const seconds = (ms: number): string => (ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`)

/** An error result's text without the `<tool_use_error>` wrapper the model is given. @category Rendering */
export const unwrapError = (text: string): string =>
  text.replace(/^\s*<tool_use_error>/, "").replace(/<\/tool_use_error>\s*$/, "")

/** The message an interrupted call's result carries. */
const INTERRUPTED = "Interrupted by user"

/**
 * The outcome line's text: the error's first line (without tags), `Interrupted` for a call the
 * user stopped, or how many lines came back; then the time (not for an interrupted call).
 *
 * @category Rendering
 */
export const describeOutcome = (result: { readonly content?: unknown; readonly is_error?: boolean | undefined }, elapsedMs: number | undefined): {
  readonly error: boolean
  readonly interrupted: boolean
  readonly text: string
} => {
  const text = resultText(result.content)
  const time = elapsedMs === undefined ? "" : ` · ${seconds(elapsedMs)}`
  if (result.is_error === true) {
    const unwrapped = unwrapError(text).trim()
    if (unwrapped === INTERRUPTED) return { error: false, interrupted: true, text: "Interrupted" }
    const first = unwrapped.split("\n").find((l) => l.trim() !== "") ?? "failed"
    return { error: true, interrupted: false, text: `${cut(first, 100)}${time}` }
  }
  const lines = text === "" ? 0 : text.replace(/\n$/, "").split("\n").length
  const what = lines === 0 ? "done" : lines === 1 ? cut(text, 60) : `${lines} lines`
  return { error: false, interrupted: false, text: `${what}${time}` }
}

/** How long a call has been running, for its progress line. @category Rendering */
export const describeProgress = (elapsedSeconds: number): string => `running… ${Math.round(elapsedSeconds)} s`
