// What the raw-SDK and floor clients send, shared so they send the same bytes as each other and as
// keel: the request keel itself sent first (captured by the runner from the bench server: system
// prompt, tool definitions, max_tokens, its first user message), read from $BENCH_REQUEST; or, when
// that is unset, a bare `{ max_tokens, messages: [user prompt] }`. Model and stream are set per run.
// Also the one tool both run, `Read` of a relative path: the file's lines numbered `cat -n` style,
// as keel's Read returns them, so that every round appends the same tool_result text as keel's.
import { readFileSync } from "node:fs"
import { readFile } from "node:fs/promises"

/** The request body without model/stream, and the conversation it starts with. */
export const template = (prompt) => {
  const file = process.env.BENCH_REQUEST
  if (file === undefined || file === "") return { max_tokens: 32000, messages: [{ role: "user", content: prompt }] }
  const body = JSON.parse(readFileSync(file, "utf8"))
  delete body.model
  delete body.stream
  return body
}

/** Runs the tool call `block` ({ name, input }) as keel's Read does for a small text file. */
export const runTool = async (block) => {
  if (block.name !== "Read") return { content: `unknown tool ${block.name}`, is_error: true }
  const text = await readFile(block.input.file_path, "utf8")
  const lines = text.endsWith("\n") ? text.slice(0, -1).split("\n") : text.split("\n")
  return { content: lines.map((line, i) => `${String(i + 1).padStart(6, " ")}\t${line}`).join("\n") }
}
