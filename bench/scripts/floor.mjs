// The floor client of the bench table: the same agent loop as raw-sdk.mjs (same request bytes via
// ./request.mjs, every event consumed, the final message built, the tool run and its result sent,
// the answer printed) over a bare `node:http` keep-alive client and a hand-written SSE parser: what
// any client must pay on this machine, with no SDK and no kernel.
// Usage: node floor.mjs <model> [prompt]   (ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY from the env)
import * as http from "node:http"
import { agentLoop, template } from "./request.mjs"

const model = process.argv[2]
const base = template(process.argv[3] ?? "hi")
const url = new URL("/v1/messages", process.env.ANTHROPIC_BASE_URL)
const agent = new http.Agent({ keepAlive: true })

/** POSTs `body`, calls `onEvent` for every SSE event's parsed data, resolves at the response's end. */
const post = (body, onEvent) =>
  new Promise((resolve, reject) => {
    const payload = Buffer.from(JSON.stringify(body))
    const req = http.request(url, {
      method: "POST",
      agent,
      headers: {
        "content-type": "application/json",
        "content-length": payload.length,
        "x-api-key": process.env.ANTHROPIC_API_KEY,
        "anthropic-version": "2023-06-01",
        accept: "text/event-stream"
      }
    }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`floor: HTTP ${res.statusCode}`))
      res.setEncoding("utf8")
      let buffer = ""
      res.on("data", (chunk) => {
        buffer += chunk
        let end
        while ((end = buffer.indexOf("\n\n")) !== -1) {
          const frame = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const data = frame.indexOf("data: ")
          if (data !== -1) onEvent(JSON.parse(frame.slice(data + 6)))
        }
      })
      res.on("end", resolve)
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(payload)
  })

const text = await agentLoop(base, model, post, "floor")
agent.destroy()
process.stdout.write(text + "\n")
