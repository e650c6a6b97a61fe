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
import { agentLoop, template } from "./request.mjs"

const model = process.argv[2]
const base = template(process.argv[3] ?? "hi")
const client = new Anthropic({ maxRetries: 0 })
// Every event of the SDK's stream, handed to the loop's fold.
const send = async (body, onEvent) => {
  for await (const event of await client.messages.create(body)) onEvent(event)
}
const text = await agentLoop(base, model, send, "raw SDK")
process.stdout.write(text + "\n")
