// The floor of bench/startup.ts: a hand-written one-prompt script over the raw `@anthropic-ai/sdk`
// stream (`messages.create` with `stream: true`), printing the text as it arrives.
import Anthropic from "@anthropic-ai/sdk"

const client = new Anthropic()
const stream = await client.messages.create({
  model: "claude-sonnet-4-6",
  max_tokens: 1024,
  messages: [{ role: "user", content: process.argv[2] ?? "hi" }],
  stream: true
})
for await (const event of stream) {
  if (event.type === "content_block_delta" && event.delta.type === "text_delta") process.stdout.write(event.delta.text)
}
process.stdout.write("\n")
