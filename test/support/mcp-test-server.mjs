#!/usr/bin/env node
/**
 * A small stdio MCP server for tests, on the SDK's low-level `Server`, with tools that misbehave on
 * purpose:
 *
 * - `echo` {text}: answers the text (read-only).
 * - `write` {path, text}: writes a file (not read-only).
 * - `crash`: writes to stderr and exits with code 7 without answering: a server crashing mid-session.
 * - `hang`: never answers; appends `started <request id>` to the file named by MCP_TEST_CANCEL_FILE,
 *   and `cancelled <request id>` when the client cancels the call.
 * - `big` {chars}: answers that many characters.
 * - `fail`: an `isError` result.
 * - `structured`: only `structuredContent`.
 * - `weird.name/v2`: a name the API refuses as is.
 * - `only-task`: runs as a task only (so a client without tasks should not offer it).
 * - `ask` {question}: asks the user through the client (MCP elicitation, a form with one `answer`
 *   string) and answers what came back; an error result when the client cannot be asked.
 *
 * With `--never-ready` it starts but never answers anything (a server that hangs at start-up); with
 * `--stubborn` it ignores SIGTERM and the end of its stdin. It writes its pid to the file named by
 * MCP_TEST_PID_FILE, and MCP_TEST_GREETING (when set) to stderr.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import * as fs from "node:fs"

if (process.env.MCP_TEST_PID_FILE) fs.writeFileSync(process.env.MCP_TEST_PID_FILE, String(process.pid))
if (process.env.MCP_TEST_GREETING) process.stderr.write(`${process.env.MCP_TEST_GREETING}\n`)
if (process.argv.includes("--stubborn")) {
  process.on("SIGTERM", () => {})
  setInterval(() => {}, 1000)
}

if (process.argv.includes("--never-ready")) {
  setInterval(() => {}, 1000)
} else {
  const object = (properties = {}, required = []) => ({ type: "object", properties, required })
  const tools = [
    {
      name: "echo",
      description: "Answers the text it is given",
      inputSchema: object({ text: { type: "string", description: "What to answer" } }, ["text"]),
      annotations: { readOnlyHint: true }
    },
    {
      name: "write",
      description: "Writes text to a file",
      inputSchema: object({ path: { type: "string" }, text: { type: "string" } }, ["path", "text"])
    },
    { name: "crash", description: "Exits the server", inputSchema: object() },
    { name: "hang", description: "Never answers", inputSchema: object(), annotations: { readOnlyHint: true } },
    { name: "big", description: "Answers many characters", inputSchema: object({ chars: { type: "number" } }, ["chars"]) },
    { name: "fail", description: "Always fails", inputSchema: object() },
    { name: "structured", description: "Answers structured content only", inputSchema: object() },
    { name: "weird.name/v2", description: "Has a name with dots and slashes", inputSchema: object() },
    { name: "only-task", description: "Runs as a task only", inputSchema: object(), execution: { taskSupport: "required" } },
    { name: "ask", description: "Asks the user a question", inputSchema: object({ question: { type: "string" } }, ["question"]) }
  ]
  const server = new Server({ name: "keel-test-server", version: "1.2.3" }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }))
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = request.params.arguments ?? {}
    switch (request.params.name) {
      case "echo":
        return { content: [{ type: "text", text: String(args.text) }] }
      case "write":
        fs.writeFileSync(String(args.path), String(args.text))
        return { content: [{ type: "text", text: `wrote ${args.path}` }] }
      case "crash":
        process.stderr.write("crashing on purpose\n")
        process.exit(7)
        break
      case "hang":
        if (process.env.MCP_TEST_CANCEL_FILE) fs.appendFileSync(process.env.MCP_TEST_CANCEL_FILE, `started ${extra.requestId}\n`)
        return new Promise(() => {
          extra.signal.addEventListener("abort", () => {
            if (process.env.MCP_TEST_CANCEL_FILE) fs.appendFileSync(process.env.MCP_TEST_CANCEL_FILE, `cancelled ${extra.requestId}\n`)
          })
        })
      case "big":
        return { content: [{ type: "text", text: "x".repeat(Number(args.chars)) }] }
      case "fail":
        return { content: [{ type: "text", text: "the widget is broken" }], isError: true }
      case "structured":
        return { content: [], structuredContent: { answer: 42 } }
      case "ask":
        try {
          const answer = await server.elicitInput({
            message: String(args.question),
            requestedSchema: { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] }
          })
          return { content: [{ type: "text", text: `${answer.action}: ${JSON.stringify(answer.content ?? {})}` }] }
        } catch (e) {
          return { content: [{ type: "text", text: `could not ask: ${e instanceof Error ? e.message : String(e)}` }], isError: true }
        }
      case "weird.name/v2":
        return { content: [{ type: "text", text: "weird ok" }] }
      default:
        return { content: [{ type: "text", text: `unknown tool ${request.params.name}` }], isError: true }
    }
  })
  await server.connect(new StdioServerTransport())
}
