/**
 * Keel from a TypeScript program that does not use Effect: `query()` in the Claude Agent SDK's
 * shape. It runs one prompt in the current folder, prints the assistant's text, its tool calls and
 * the result, asks at the terminal before tool calls that need permission, and stops the turn on
 * Ctrl+C or after five minutes (abort).
 *
 *   npx tsx examples/query.ts "what files are here?"
 *
 * with ANTHROPIC_API_KEY set, or against the fake API (`npm run fake-api` prints the
 * ANTHROPIC_BASE_URL to use). See examples/README.md.
 */
import { type Query, query, QueryError } from "@keel/cli"
import * as readline from "node:readline/promises"

const prompt = process.argv.slice(2).join(" ") || "What files are here?"

// Aborting stops the running turn (its result still arrives) and ends the query.
const abortController = new AbortController()
process.once("SIGINT", () => abortController.abort())
setTimeout(() => abortController.abort(), 5 * 60_000).unref()

// Asked for each tool call that no permission rule or mode decides (e.g. Bash, or a Write).
const canUseTool: Query.CanUseTool = async (toolName, input, { decisionReason }) => {
  if (!process.stdin.isTTY) {
    return { behavior: "deny", message: `${toolName} needs approval, and there is nobody at the terminal to give it.` }
  }
  const terminal = readline.createInterface({ input: process.stdin, output: process.stdout })
  try {
    const answer = await terminal.question(`Allow ${toolName} ${JSON.stringify(input)}? (${decisionReason}) [y/N] `)
    return /^y/i.test(answer.trim())
      ? { behavior: "allow", updatedInput: input }
      : { behavior: "deny", message: "The user declined this tool call." }
  } finally {
    terminal.close()
  }
}

/** What one message prints. */
const print = (message: Query.SDKMessage): void => {
  switch (message.type) {
    case "system":
      if (message.subtype === "init") console.log(`[init] ${message.model} in ${message.cwd}, tools: ${message.tools.join(", ")}`)
      break
    case "assistant": {
      const content = message.message.content
      for (const block of typeof content === "string" ? [{ type: "text" as const, text: content }] : content) {
        if (block.type === "text") console.log(block.text)
        else if (block.type === "tool_use") console.log(`[tool] ${block.name} ${JSON.stringify(block.input)}`)
      }
      break
    }
    case "result": {
      const cost = `$${message.total_cost_usd.toFixed(4)}`
      if (message.is_error) console.log(`[result] ${message.subtype}: ${message.result ?? message.errors?.join("; ") ?? "error"} (${cost})`)
      else console.log(`[result] ${message.subtype} after ${message.num_turns} model calls (${cost})`)
      process.exitCode = message.is_error ? 1 : 0
      break
    }
  }
}

try {
  for await (const message of query({ prompt, options: { cwd: process.cwd(), canUseTool, abortController } })) print(message)
} catch (error) {
  // Errors before a turn (no API key, invalid settings, a bad MCP config) carry the one line keel would print.
  console.error(error instanceof QueryError ? `keel: ${error.message}` : error)
  process.exitCode = error instanceof QueryError ? error.code : 1
}
