// What the raw-SDK and floor clients send, shared so they send the same bytes as each other and as
// keel: the request keel itself sent first (captured by the runner from the bench server: system
// prompt, tool definitions, max_tokens, its first user message), read from $BENCH_REQUEST; or, when
// that is unset, a bare `{ max_tokens, messages: [user prompt] }`. Model and stream are set per run.
// Also the agent loop both run ({@link agentLoop}) and the one tool they run, `Read` of a relative path: the file's lines numbered `cat -n` style,
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

/**
 * The agent loop both clients run: sends the growing conversation through `send(body, onEvent)`
 * (which calls `onEvent` for every event of the answer and resolves at its end), builds the final
 * message from EVERY event (text appended per delta, tool input JSON accumulated and parsed once at
 * its block's end, stop reason from message_delta), runs the tools and sends their results, until
 * an answer stops for another reason than tool_use. Answers the last answer's text.
 */
export const agentLoop = async (base, model, send, who) => {
  const messages = [...base.messages]
  for (;;) {
    const content = []
    let stopReason = null
    await send({ ...base, model, messages, stream: true }, (event) => {
      switch (event.type) {
        case "content_block_start":
          content[event.index] = event.content_block.type === "tool_use"
            ? { ...event.content_block, input: {}, json: "" }
            : { ...event.content_block }
          break
        case "content_block_delta": {
          const block = content[event.index]
          if (event.delta.type === "text_delta") block.text += event.delta.text
          else if (event.delta.type === "input_json_delta") block.json += event.delta.partial_json
          break
        }
        case "content_block_stop": {
          const block = content[event.index]
          if (block.type === "tool_use") {
            block.input = block.json === "" ? {} : JSON.parse(block.json)
            delete block.json
          }
          break
        }
        case "message_delta":
          stopReason = event.delta.stop_reason
          break
      }
    })
    if (stopReason === null) throw new Error(`${who}: the stream ended without a stop reason`)
    messages.push({ role: "assistant", content })
    if (stopReason !== "tool_use") {
      let text = ""
      for (const block of content) if (block.type === "text") text += block.text
      return text
    }
    const results = []
    for (const block of content) {
      if (block.type === "tool_use") results.push({ type: "tool_result", tool_use_id: block.id, ...(await runTool(block)) })
    }
    messages.push({ role: "user", content: results })
  }
}
