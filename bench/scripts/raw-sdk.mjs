// The raw-SDK client of the bench table: a hand-written agent loop over `@anthropic-ai/sdk`'s
// `messages.create({ stream: true })`, doing the work keel -p does for the same answer:
//   - it sends the same request as keel (./request.mjs: keel's captured system prompt, tools and
//     first message) and grows the conversation the same way (assistant message, then a user
//     message with the tool_result), re-serialising the whole history every round as keel does;
//   - it consumes EVERY event and builds the final message (text appended per delta, tool input
//     JSON accumulated and parsed once at its block's end, stop reason from message_delta);
//   - it runs the tool (reads the file, numbers its lines as keel's Read does) and sends the result;
//   - it prints the final answer's text to stdout, as `keel -p` does.
// Usage: node raw-sdk.mjs <model> [prompt]   (ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY from the env)
import Anthropic from "@anthropic-ai/sdk"
import { runTool, template } from "./request.mjs"

const model = process.argv[2]
const base = template(process.argv[3] ?? "hi")
const client = new Anthropic({ maxRetries: 0 })
const messages = [...base.messages]
let text = ""
for (;;) {
  const content = []
  let stopReason = null
  const stream = await client.messages.create({ ...base, model, messages, stream: true })
  for await (const event of stream) {
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
  }
  if (stopReason === null) throw new Error("raw SDK: the stream ended without a stop reason")
  messages.push({ role: "assistant", content })
  if (stopReason !== "tool_use") {
    for (const block of content) if (block.type === "text") text += block.text
    break
  }
  const results = []
  for (const block of content) {
    if (block.type === "tool_use") results.push({ type: "tool_result", tool_use_id: block.id, ...(await runTool(block)) })
  }
  messages.push({ role: "user", content: results })
}
process.stdout.write(text + "\n")
