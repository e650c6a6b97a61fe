/**
 * End to end: `keel serve`, the runtime protocol, as an app drives it, against the loopback fake of
 * the Messages API.
 *
 * - `--stdio` with `@effect/rpc`'s own client (`RuntimeProtocol.RuntimeRpcs`) over the process's
 *   stdin and stdout: a whole session (start, a running turn and a queued one streamed back in
 *   order, the queue, an ask answered, a goal continued to done, read, export), then the end of
 *   input ending the server.
 * - `--stdio` as a hand-written client writes it: a malformed line and an unknown method answered
 *   with a typed error, and the server still serving.
 * - `--port 0`: the address printed, the same client over HTTP, a bad body answered typed, a
 *   signal stopping the server.
 * - `examples/serve-client.ts`, the README's client, run as it is.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as Socket from "@effect/platform/Socket"
import * as NodeSocket from "@effect/platform-node/NodeSocket"
import * as RpcClient from "@effect/rpc/RpcClient"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import { afterEach, assert, describe, it } from "@effect/vitest"
import { RuntimeProtocol } from "@keel/core"
import { Chunk, Effect, Fiber, Layer, Stream } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Duplex } from "node:stream"
import * as FakeAnthropic from "./support/FakeAnthropic.js"
import { closeServers, envFor, fake, keel, type Live, live, workdir } from "./support/KeelProcess.js"

afterEach(() => closeServers())

const sonnet = { model: "claude-sonnet-4-6" }

type Event = RuntimeProtocol.RuntimeEvent

/** The last user text of a request body: which prompt (or continuation) it answers. */
const lastUserText = (body: any): string => {
  const last = body.messages.filter((m: any) => m.role === "user").at(-1)
  return typeof last.content === "string"
    ? last.content
    : last.content.filter((b: any) => b.type === "text").map((b: any) => b.text).join("")
}

/** `keel serve --stdio` in a fresh project against `server`, with its home inside the project. */
const serveStdio = (server: FakeAnthropic.FakeAnthropic, args: ReadonlyArray<string> = []) => {
  const dir = workdir()
  const process_ = live(["serve", "--stdio", ...args], { env: { ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home") }, cwd: dir })
  return { dir, keel: process_ }
}

/**
 * A process's stdout and stdin as one stream, stdout read through `data` events (the process's
 * other listeners keep a copy of what it prints).
 */
const duplexOf = (keelProcess: Live): Duplex => {
  const { stdin, stdout } = keelProcess.child
  const duplex = new Duplex({
    read: () => undefined,
    write: (chunk, _encoding, callback) => stdin!.write(chunk, callback),
    final: (callback) => stdin!.end(callback)
  })
  stdout!.on("data", (data) => duplex.push(data))
  stdout!.on("end", () => duplex.push(null))
  return duplex
}

/** `@effect/rpc`'s client protocol over a `keel serve --stdio` process's stdin and stdout (closed with the layer: stdin ends). */
const overStdio = (keelProcess: Live) =>
  RpcClient.layerProtocolSocket().pipe(
    Layer.provide(Layer.scoped(
      Socket.Socket,
      Effect.zipLeft(
        NodeSocket.fromDuplex(Effect.sync(() => duplexOf(keelProcess))),
        Effect.addFinalizer(() => Effect.sync(() => keelProcess.child.stdin!.end()))
      )
    )),
    Layer.provide(RpcSerialization.layerNdjson)
  )

/** The protocol's client (over the protocol layer provided around the whole program, which it needs open). */
const client = RpcClient.make(RuntimeProtocol.RuntimeRpcs)

/** Waits (real time) until `check` holds. */
const until = (check: () => boolean, what: string, timeoutMs = 20_000) =>
  Effect.promise(async () => {
    const deadline = Date.now() + timeoutMs
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })

const collect = <E>(stream: Stream.Stream<Event, E>) => Effect.fork(Effect.map(Stream.runCollect(stream), Chunk.toReadonlyArray))

/** The events without tool progress: tags, and each message's type. */
const shape = (events: ReadonlyArray<Event>) =>
  events.flatMap((e) =>
    e._tag === "Message"
      ? e.message.type === "tool_progress" ? [] : [`Message:${e.message.type}${e.message.type === "system" ? `/${e.message.subtype}` : ""}`]
      : e._tag === "Action"
      ? [`Action:${e.event.event}`]
      : [e._tag]
  )

const resultOf = (events: ReadonlyArray<Event>) => {
  const found = events.find((e) => e._tag === "Message" && e.message.type === "result")
  return found?._tag === "Message" && found.message.type === "result" ? found.message : undefined
}

describe("keel serve --stdio", () => {
  it("a whole session through @effect/rpc's client: two turns (one queued), an ask answered, a goal run to done, read, export", async () => {
    const server = await fake([
      // Turn 1 runs for about 2 s (pings between its events), long enough to queue turn 2 behind it.
      { ...FakeAnthropic.textReply("first answer", sonnet), keepAlive: { after: 2, pings: 8, everyMs: 250 } },
      // Turn 2 writes a file: the Write asks (default mode), the client allows it.
      FakeAnthropic.toolUseReply([{ name: "Write", input: { file_path: "notes.txt", content: "hello\n" }, id: "toolu_write" }], sonnet),
      FakeAnthropic.textReply("Wrote notes.txt.", sonnet),
      // The goal's continuation turn ends the goal.
      FakeAnthropic.toolUseReply([{ name: "update_goal", input: { status: "done", reason: "notes.txt is written" }, id: "toolu_goal" }], sonnet),
      FakeAnthropic.textReply("The goal is done.", sonnet)
    ])
    const { dir, keel: keelProcess } = serveStdio(server)
    await Effect.runPromise(Effect.gen(function*() {
      const rpc = yield* client
      const { init, sessionId, warnings } = yield* rpc.session.start({})
      assert.deepStrictEqual([init.subtype, init.cwd, init.model, init.session_id, warnings], ["init", fs.realpathSync(dir), "claude-sonnet-4-6", sessionId, []])

      const watcher = yield* collect(rpc.session.events({ sessionId }))
      const first = yield* collect(rpc.turn.start({ sessionId, prompt: "first" }))
      yield* until(() => server.requests.length === 1, "the first request")
      // While the first turn runs, the second waits in the queue.
      const second = yield* collect(rpc.turn.start({ sessionId, prompt: "write the notes" }).pipe(
        // The Write asks: the ask is a pending action, listed, and allowed.
        Stream.tap((event) => {
          if (event._tag !== "Action" || event.event.event !== "opened") return Effect.void
          const actionId = event.event.action.id
          return Effect.flatMap(rpc.action.list({ sessionId }), (pending) => {
            assert.deepStrictEqual(pending.map((p) => [p.id, p.request.kind === "permission" && p.request.toolName]), [[actionId, "Write"]])
            return rpc.action.respond({ sessionId, actionId, answer: { behavior: "allow" } })
          })
        })
      ))
      const queue = yield* Effect.gen(function*() {
        for (;;) {
          const q = yield* rpc.queue.list({ sessionId })
          if (q.queued.length === 1) return q
          yield* Effect.sleep("20 millis")
        }
      })
      assert.isNotNull(queue.running)
      assert.deepStrictEqual(queue.queued.map((q) => [q.preview, q.priority, q.position]), [["write the notes", "next", 0]])
      assert.strictEqual(server.requests.length, 1, "the queued turn has not reached the model")

      const firstEvents = yield* Fiber.join(first)
      assert.deepStrictEqual(shape(firstEvents), ["Admitted", "Started", "Message:system/init", "Message:assistant", "Message:result", "Ended"])
      assert.strictEqual(resultOf(firstEvents)?.result, "first answer")
      const secondEvents = yield* Fiber.join(second)
      // The ask opens as soon as the Write's block is complete (while the answer may still stream),
      // and the tool result follows its answer.
      const second_ = shape(secondEvents)
      assert.deepStrictEqual(second_.slice(0, 2), ["Admitted", "Started"])
      assert.deepStrictEqual(second_.slice(-3), ["Message:assistant", "Message:result", "Ended"])
      assert.deepStrictEqual(second_.filter((k) => k.startsWith("Action")), ["Action:opened", "Action:resolved"])
      assert.isBelow(second_.indexOf("Action:resolved"), second_.indexOf("Message:user"))
      assert.strictEqual(second_.length, 9)
      assert.strictEqual(secondEvents[0]!.turnId, queue.queued[0]!.id)
      assert.strictEqual(resultOf(secondEvents)?.result, "Wrote notes.txt.")
      assert.strictEqual(fs.readFileSync(path.join(dir, "notes.txt"), "utf8"), "hello\n")

      // A goal: the idle runtime admits a continuation turn that works on it, until update_goal says done.
      const goal = yield* rpc.goal.set({ sessionId, objective: "make sure the notes are written" })
      assert.strictEqual(goal.status, "active")
      const read = yield* Effect.gen(function*() {
        for (;;) {
          const r = yield* rpc.session.read({ sessionId })
          if (r.goal?.status === "done" && r.running === null) return r
          yield* Effect.sleep("50 millis")
        }
      })
      assert.deepStrictEqual([read.goal?.reason, read.goal?.continuations], ["notes.txt is written", 1])
      assert.strictEqual(lastUserText(server.requests[3]!.body).startsWith("Continue working toward the session's goal: make sure the notes are written"), true)
      assert.deepStrictEqual([read.running, read.queued, read.pendingActions], [null, [], []])
      assert.strictEqual(read.lastResult?.result, "The goal is done.")
      assert.strictEqual(read.messages.length, 10)
      // The read model, from the transcript as saved: three turns, the Write allowed by the user.
      assert.deepStrictEqual(read.readModel?.turns.map((t) => t.prompt.slice(0, 20)), ["first", "write the notes", "Continue working tow"])
      const write = read.readModel?.turns[1]!.items.find((i) => i._tag === "tool_call")
      assert.deepStrictEqual(write?._tag === "tool_call" && [write.name, write.decision.outcome, write.decision.by], ["Write", "allowed", "user"])

      // The exports, as keel export writes them: the review names each call and who decided it.
      const { calls } = JSON.parse((yield* rpc.session.export({ sessionId, format: "review" })).text)
      assert.deepStrictEqual(calls.map((c: any) => c.name), ["Write", "update_goal"])
      assert.deepStrictEqual([calls[0].decision.outcome, calls[0].decision.by], ["allowed", "user"])
      assert.include((yield* rpc.session.export({ sessionId, format: "handoff" })).text, "notes.txt")

      // Every turn, in the order they ran, as the session's watcher saw them.
      yield* rpc.session.close({ sessionId })
      const seen = yield* Fiber.join(watcher)
      const turnOrder = seen.filter((e) => e._tag === "Started" || e._tag === "Ended").map((e) => `${e._tag}:${e.turnId}`)
      const ids = [firstEvents[0]!.turnId, secondEvents[0]!.turnId]
      assert.deepStrictEqual(turnOrder.slice(0, 4), [`Started:${ids[0]}`, `Ended:${ids[0]}`, `Started:${ids[1]}`, `Ended:${ids[1]}`])
      assert.strictEqual(turnOrder.length, 6, "and the goal's continuation")
    }).pipe(Effect.scoped, Effect.provide(overStdio(keelProcess))))
    // The client closed stdin: the server has answered everything and ends.
    const done = await keelProcess.done
    assert.deepStrictEqual([done.code, done.stderr], [0, ""])
  }, 60_000)

  it("a hand-written client's malformed line and unknown method get typed errors; the server keeps serving", async () => {
    const server = await fake([FakeAnthropic.textReply("still here", sonnet)])
    const { keel: keelProcess } = serveStdio(server)
    keelProcess.send("{this is not json")
    keelProcess.send({ _tag: "Request", id: "1", tag: "session.teleport", payload: {}, headers: [] })
    keelProcess.send({ _tag: "Request", id: "2", tag: "session.start", payload: { model: 7 } })
    keelProcess.send({ _tag: "Request", id: "3", tag: "session.start", payload: {} })
    const answers = await keelProcess.waitFor((m) => m.some((x) => x.requestId === "3"))
    const error = (id: string) => answers.find((m) => m.requestId === id)?.exit.cause.error
    assert.deepStrictEqual(answers[0], {
      _tag: "Exit",
      requestId: "-1",
      exit: {
        _tag: "Failure",
        cause: { _tag: "Fail", error: { _tag: "InvalidRequest", reason: "MalformedJson", message: error("-1").message } }
      }
    })
    assert.match(error("-1").message, /^The line is not JSON/)
    assert.deepStrictEqual([error("1")._tag, error("1").reason, error("1").method], ["InvalidRequest", "UnknownMethod", "session.teleport"])
    assert.deepStrictEqual([error("2").reason, error("2").method], ["InvalidPayload", "session.start"])
    // Still serving: the session starts, and a turn streams its chunks (no acks needed).
    const sessionId = answers.find((m) => m.requestId === "3").exit.value.sessionId
    keelProcess.send({ _tag: "Request", id: "4", tag: "turn.start", payload: { sessionId, prompt: "hello" }, headers: [] })
    const all = await keelProcess.waitFor((m) => m.some((x) => x._tag === "Exit" && x.requestId === "4"))
    const events = all.filter((m) => m._tag === "Chunk" && m.requestId === "4").flatMap((m) => m.values)
    assert.strictEqual(events.find((e: any) => e.message?.type === "result")?.message.result, "still here")
    assert.deepStrictEqual(all.at(-1), { _tag: "Exit", requestId: "4", exit: { _tag: "Success" } })
    keelProcess.end()
    assert.strictEqual((await keelProcess.done).code, 0)
  }, 60_000)
})

describe("keel serve --port", () => {
  it("prints its address; the same client over HTTP; a bad body answered typed; a signal stops it", async () => {
    const server = await fake([FakeAnthropic.textReply("over http", sonnet)])
    const dir = workdir()
    const keelProcess = live(["serve", "--port", "0"], { env: { ...envFor(server), KEEL_HOME: path.join(dir, ".keel-home") }, cwd: dir })
    const [{ listening }] = await keelProcess.waitFor((m) => m.length > 0)
    assert.match(listening, /^http:\/\/127\.0\.0\.1:\d+\/rpc$/)
    await Effect.runPromise(Effect.gen(function*() {
      const rpc = yield* client
      const { sessionId } = yield* rpc.session.start({})
      const events = yield* rpc.turn.start({ sessionId, prompt: "hi" }).pipe(Stream.runCollect, Effect.map(Chunk.toReadonlyArray))
      assert.deepStrictEqual(shape(events), ["Admitted", "Started", "Message:system/init", "Message:assistant", "Message:result", "Ended"])
      assert.strictEqual(resultOf(events)?.result, "over http")
      assert.deepStrictEqual(yield* rpc.queue.list({ sessionId }), { running: null, queued: [] })
      const missing = yield* Effect.flip(rpc.session.read({ sessionId: "nope" }))
      assert.strictEqual(missing._tag, "SessionNotFound")
    }).pipe(
      Effect.scoped,
      Effect.provide(RpcClient.layerProtocolHttp({ url: listening }).pipe(
        Layer.provide([FetchHttpClient.layer, RpcSerialization.layerNdjson])
      ))
    ))
    // A body a hand-written client got wrong: typed answers, one line each.
    const response = await fetch(listening, {
      method: "POST",
      body: `not json\n${JSON.stringify({ _tag: "Request", id: "9", tag: "queue.peek", payload: {}, headers: [] })}`
    })
    const lines = (await response.text()).trim().split("\n").map((l) => JSON.parse(l))
    assert.deepStrictEqual(lines.map((l) => [l.requestId, l.exit.cause.error.reason]), [["-1", "MalformedJson"], ["9", "UnknownMethod"]])
    keelProcess.child.kill("SIGTERM")
    const done = await keelProcess.done
    assert.deepStrictEqual([done.code, done.stderr], [143, ""])
  }, 60_000)
})

describe("examples/serve-client.ts", () => {
  it("runs as the README shows it: a session over keel serve --stdio, an ask refused, the cost", async () => {
    const server = await fake([
      FakeAnthropic.toolUseReply([{ name: "Bash", input: { command: "rm -rf /tmp/nothing" } }], sonnet),
      FakeAnthropic.textReply("I was not allowed to run it.", sonnet)
    ])
    const dir = workdir()
    const root = path.resolve(import.meta.dirname, "..")
    const out = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        path.join(root, "node_modules", ".bin", "tsx"),
        [path.join(root, "examples", "serve-client.ts"), "clean up"],
        { cwd: dir, env: { ...process.env, ...envFor(server), KEEL_BIN: keel, KEEL_HOME: path.join(dir, ".keel-home") } },
        (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr })
      )
    })
    assert.strictEqual(out.code, 0, out.stderr)
    const lines = out.stdout.trim().split("\n")
    assert.match(lines[0]!, /^\[session [0-9a-f-]{36}\] claude-sonnet-4-6 in /)
    assert.deepStrictEqual(lines.slice(1, -1), ["[ask] Bash: deny", "I was not allowed to run it.", "[result] success"])
    assert.match(lines.at(-1)!, /^\[cost\] \$0\.\d{4}$/)
  }, 60_000)
})
