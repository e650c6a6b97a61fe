/**
 * The benchmark's server, in its own process so its work does not count against the client being
 * measured. It speaks the Messages API's SSE wire format like `test/support/FakeAnthropic.ts`, but
 * renders each scenario's body once and then writes the cached bytes in 64 KB writes, so that the
 * server is never what the client waits for. Prints `ANTHROPIC_BASE_URL=...` when listening.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { eventsFor } from "./scenario.js"

const frame = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`

const bodies = new Map<string, Buffer>()
const bodyFor = (model: string): Buffer => {
  let body = bodies.get(model)
  if (body === undefined) {
    const frames: Array<string> = []
    for (const event of eventsFor(model)) {
      frames.push(frame(event.type, event))
      if (event.type === "message_start") frames.push(frame("ping", { type: "ping" }))
    }
    body = Buffer.from(frames.join(""))
    bodies.set(model, body)
  }
  return body
}

const server = http.createServer((req, res) => {
  const parts: Array<Buffer> = []
  req.on("data", (c: Buffer) => parts.push(c))
  req.on("end", () => {
    const body = bodyFor(JSON.parse(Buffer.concat(parts).toString("utf8")).model)
    res.writeHead(200, { "content-type": "text/event-stream", "request-id": "req_bench" })
    let offset = 0
    const write = () => {
      while (offset < body.length) {
        const chunk = body.subarray(offset, offset + 64 * 1024)
        offset += chunk.length
        if (!res.write(chunk)) return void res.once("drain", write)
      }
      res.end()
    }
    write()
  })
})
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`ANTHROPIC_BASE_URL=http://127.0.0.1:${(server.address() as AddressInfo).port}\n`)
})
process.on("SIGTERM", () => process.exit(0))
