/**
 * The benchmark's server, in its own process so its work does not count against the client being
 * measured. It speaks the Messages API's SSE wire format like `test/support/FakeAnthropic.ts`, but
 * renders each scenario's body once and then writes the cached bytes in 64 KB writes, so that the
 * server is never what the client waits for. Prints `ANTHROPIC_BASE_URL=...` when listening.
 *
 * `bench-loop-N` is answered by round: the request's count of `tool_result` blocks says which.
 *
 * It keeps a log for the bench runner (bench/table.ts): for each Messages request, when its body had
 * arrived and when the response's last byte was handed to the kernel (`finish`), as epoch ms with
 * sub-ms precision (`performance.timeOrigin + performance.now()`), plus the first and the last request's bodies.
 * `POST /__bench/reset` clears it, `GET /__bench/log` returns it as JSON.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { performance } from "node:perf_hooks"
import { eventsFor, loopEvents } from "./scenario.js"

const frame = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`

const render = (events: ReadonlyArray<{ readonly type: string }>): Buffer => {
  const frames: Array<string> = []
  for (const event of events) {
    frames.push(frame(event.type, event))
    if (event.type === "message_start") frames.push(frame("ping", { type: "ping" }))
  }
  return Buffer.from(frames.join(""))
}

const bodies = new Map<string, Buffer>()
const cached = (key: string, make: () => Buffer): Buffer => {
  let body = bodies.get(key)
  if (body === undefined) {
    body = make()
    bodies.set(key, body)
  }
  return body
}

/** How many `tool_result` blocks the request's messages hold (the rounds already done). */
const toolResults = (messages: ReadonlyArray<any>): number => {
  let n = 0
  for (const m of messages) {
    if (m.role !== "user" || typeof m.content === "string") continue
    for (const b of m.content) if (b.type === "tool_result") n++
  }
  return n
}

const bodyFor = (request: { readonly model: string; readonly messages: ReadonlyArray<any> }): Buffer => {
  const [, shape, n] = request.model.split("-")
  if (shape === "loop") {
    const round = toolResults(request.messages) + 1
    const last = Number(n)
    return cached(round > last ? "loop-end" : `loop-${round}`, () => render(loopEvents(round, last)))
  }
  return cached(request.model, () => render(eventsFor(request.model)))
}

const now = () => performance.timeOrigin + performance.now()

/** One Messages request: when its body had arrived, its size, and when its response was flushed. */
interface Exchange {
  readonly at: number
  readonly bytes: number
  readonly model: string
  finish?: number
}

let log: Array<Exchange> = []
let firstBody: string | undefined
let lastBody: string | undefined

const control = (req: http.IncomingMessage, res: http.ServerResponse) => {
  if (req.url === "/__bench/reset") {
    log = []
    firstBody = undefined
    lastBody = undefined
    res.end("{}")
  } else {
    res.setHeader("content-type", "application/json")
    res.end(JSON.stringify({ exchanges: log, firstBody, lastBody }))
  }
}

const server = http.createServer((req, res) => {
  const parts: Array<Buffer> = []
  req.on("data", (c: Buffer) => parts.push(c))
  req.on("end", () => {
    if (req.url?.startsWith("/__bench/")) return control(req, res)
    const at = now()
    const text = Buffer.concat(parts).toString("utf8")
    const request = JSON.parse(text)
    const exchange: Exchange = { at, bytes: Buffer.byteLength(text), model: request.model }
    log.push(exchange)
    firstBody ??= text
    lastBody = text
    const body = bodyFor(request)
    res.on("finish", () => (exchange.finish = now()))
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
server.keepAliveTimeout = 60_000
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`ANTHROPIC_BASE_URL=http://127.0.0.1:${(server.address() as AddressInfo).port}\n`)
})
process.on("SIGTERM", () => process.exit(0))
