/**
 * A tool call as the REPL shows it: one line with the tool and a short form of its input
 * (`Read(src/main.ts)`, `Bash(npm test)`), then its outcome and time (`⎿ 42 lines · 0.3 s`, or the
 * error's first line).
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

/**
 * The outcome line's text: the error's first line, or how many lines came back; then the time.
 *
 * @category Rendering
 */
export const describeOutcome = (result: { readonly content?: unknown; readonly is_error?: boolean | undefined }, elapsedMs: number | undefined): {
  readonly error: boolean
  readonly text: string
} => {
  const text = resultText(result.content)
  const time = elapsedMs === undefined ? "" : ` · ${seconds(elapsedMs)}`
  if (result.is_error === true) {
    const first = text.split("\n").find((l) => l.trim() !== "") ?? "failed"
    return { error: true, text: `${cut(first, 100)}${time}` }
  }
  const lines = text === "" ? 0 : text.replace(/\n$/, "").split("\n").length
  const what = lines === 0 ? "done" : lines === 1 ? cut(text, 60) : `${lines} lines`
  return { error: false, text: `${what}${time}` }
}

/** How long a call has been running, for its progress line. @category Rendering */
export const describeProgress = (elapsedSeconds: number): string => `running… ${Math.round(elapsedSeconds)} s`
