/**
 * The runtime protocol on the wire, in memory: the line parser (a bad line is one bad request,
 * not the end of the connection), and the stdio server over sessions on the testing layer, driven
 * line by line as a hand-written client would: bad requests are answered with a typed
 * `InvalidRequest` under their id and the server goes on; a turn's chunks come without acks; at
 * the end of input every request is answered before the server ends.
 */
import { assert, describe, it } from "@effect/vitest"
import { RuntimeProtocol } from "@keel/core"
import { Testing, TestModel } from "@keel/core/testing"
import { Effect, Fiber, Layer, Mailbox, Queue } from "effect"
import * as Serve from "../../src/serve/Serve.js"
import * as Wire from "../../src/serve/Wire.js"
import { testOpener } from "./TestOpener.js"

describe("Wire.serialization", () => {
  it("reads a line at a time across chunks (UTF-8 split included); a bad line does not stop the ones after it", () => {
    const parser = Wire.serialization().unsafeMake()
    const bytes = new TextEncoder().encode(`{"_tag":"Ping","x":"é"}\nnot json\n{"_tag":"Pi`)
    const cut = bytes.indexOf(0xc3) + 1 // inside "é"
    assert.deepStrictEqual(parser.decode(bytes.slice(0, cut)), [])
    const read = parser.decode(bytes.slice(cut))
    assert.deepStrictEqual(read[0], { _tag: "Ping", x: "é" })
    assert.strictEqual((read[1] as { reason: string }).reason, "MalformedJson")
    assert.deepStrictEqual(parser.decode(`ng"}\n\n  \n{"_tag":"Ping"}\n`), [{ _tag: "Ping" }, { _tag: "Ping" }])
    assert.deepStrictEqual(parser.decode(`{"_tag":"Ping"}`), [], "no newline yet")
    assert.deepStrictEqual(parser.flush(), [{ _tag: "Ping" }], "the end of input ends the line")
  })

  it("JSON that is not a client message is a bad request, with the id it seems to carry; wholeInput needs no last newline", () => {
    const parser = Wire.serialization({ wholeInput: true }).unsafeMake()
    const [eof, other, array] = parser.decode(`{"_tag":"Eof"}\n{"_tag":"Request","id":"7","tag":1,"oops"\n[1,2]`)
    assert.strictEqual((eof as { reason: string }).reason, "NotAMessage")
    assert.deepStrictEqual([(other as { reason: string }).reason, (other as { id: string }).id], ["MalformedJson", "7"])
    assert.strictEqual((array as { reason: string }).reason, "NotAMessage")
  })

  it("a line over the limit is one bad request; the next line is read as usual", () => {
    const parser = Wire.serialization().unsafeMake()
    const long = "x".repeat(Wire.MAX_LINE_BYTES + 1)
    const first = parser.decode(long)
    assert.strictEqual(first.length, 1)
    assert.isTrue(Wire.isMalformed(first[0]))
    assert.deepStrictEqual(parser.decode(`${"y".repeat(10)}\n{"_tag":"Ping"}\n`), [{ _tag: "Ping" }])
  })
})

/** The stdio server over sessions on the testing layer, and a client that writes lines and reads answers. */
const wire = Effect.gen(function*() {
  const input = yield* Mailbox.make<string>()
  const output = yield* Queue.unbounded<any>()
  const server = yield* Layer.build(Serve.layer(yield* testOpener))
  const running = yield* Serve.stdio({
    input: Mailbox.toStream(input),
    write: (text) => Queue.offerAll(output, text.trim().split("\n").map((line) => JSON.parse(line)))
  }).pipe(Effect.provide(server), Effect.fork)
  const send = (line: unknown) => input.offer(typeof line === "string" ? `${line}\n` : `${JSON.stringify(line)}\n`)
  /** The answers up to the `Exit` of `requestId`. */
  const answers = (requestId: string) =>
    Effect.gen(function*() {
      const got: Array<any> = []
      for (;;) {
        const message = yield* Queue.take(output)
        got.push(message)
        if (message._tag === "Exit" && message.requestId === requestId) return got
      }
    })
  const request = (id: string, tag: string, payload: unknown) =>
    Effect.zipRight(send({ _tag: "Request", id, tag, payload, headers: [] }), answers(id))
  return { send, answers, request, end: input.end, running, output }
})

const invalid = (requestId: string, reason: string) => (answer: any) => {
  assert.strictEqual(answer._tag, "Exit")
  assert.strictEqual(answer.requestId, requestId)
  assert.strictEqual(answer.exit.cause.error._tag, "InvalidRequest")
  assert.strictEqual(answer.exit.cause.error.reason, reason)
  return answer.exit.cause.error.message as string
}

describe("the stdio server", () => {
  it.scoped("bad requests get a typed InvalidRequest under their id, and the server keeps serving", () =>
    Effect.gen(function*() {
      const client = yield* wire
      yield* client.send("this is not json")
      invalid("-1", "MalformedJson")((yield* client.answers("-1")).at(-1))
      yield* client.send(`{"_tag":"Request","id":"4","tag":"session.list", oops}`)
      invalid("4", "MalformedJson")((yield* client.answers("4")).at(-1))
      yield* client.send({ _tag: "Hello" })
      assert.include(invalid("-1", "NotAMessage")((yield* client.answers("-1")).at(-1)), `"_tag": "Hello"`)
      const unknown = invalid("1", "UnknownMethod")((yield* client.request("1", "session.explode", {})).at(-1))
      assert.include(unknown, "the methods are session.start, session.list")
      const payload = invalid("2", "InvalidPayload")((yield* client.request("2", "queue.list", { sessionId: 5 })).at(-1))
      assert.include(payload, "The payload of queue.list is not valid")
      yield* client.send({ _tag: "Request", id: "x", tag: "session.list", payload: {} })
      invalid("-1", "NotAMessage")((yield* client.answers("-1")).at(-1))
      yield* client.send({ _tag: "Interrupt", requestId: "nope" })
      invalid("-1", "NotAMessage")((yield* client.answers("-1")).at(-1))
      // Still serving: a request without headers, and a missing session as a typed error.
      yield* client.send({ _tag: "Request", id: "3", tag: "session.list", payload: {} })
      assert.deepStrictEqual(yield* client.answers("3"), [
        { _tag: "Exit", requestId: "3", exit: { _tag: "Success", value: [] } }
      ])
      const missing = (yield* client.request("5", "session.read", { sessionId: "s" })).at(-1)
      assert.deepStrictEqual(missing.exit, {
        _tag: "Failure",
        cause: { _tag: "Fail", error: { _tag: "SessionNotFound", sessionId: "s" } }
      })
      yield* client.send({ _tag: "Ping" })
      assert.deepStrictEqual(yield* Queue.take(client.output), { _tag: "Pong" })
      yield* client.end
      yield* Fiber.join(client.running)
    }).pipe(Effect.provide(Testing.layer([]))))

  it.scoped("a session over lines: start, a turn's chunks without acks, read; at the end of input the last turn is answered", () =>
    Effect.gen(function*() {
      const client = yield* wire
      const started = (yield* client.request("1", "session.start", {})).at(-1)
      const sessionId = started.exit.value.sessionId as string
      assert.strictEqual(started.exit.value.init.subtype, "init")
      const turn = yield* client.request("2", "turn.start", { sessionId, prompt: "hello" })
      const events = turn.filter((m) => m._tag === "Chunk").flatMap((m) => m.values)
      assert.deepStrictEqual(events.map((e: RuntimeProtocol.RuntimeEvent) => e._tag).filter((t: string) => t !== "Message"), [
        "Admitted",
        "Started",
        "Ended"
      ])
      assert.strictEqual(events.find((e: any) => e.message?.type === "result").message.result, "hi there")
      assert.deepStrictEqual(turn.at(-1), { _tag: "Exit", requestId: "2", exit: { _tag: "Success" } })
      const read = (yield* client.request("3", "session.read", { sessionId })).at(-1).exit.value
      assert.deepStrictEqual(read.messages.map((m: any) => [m.role, m.content]), [
        ["user", "hello"],
        ["assistant", [{ type: "text", text: "hi there", citations: null }]]
      ])
      // A turn asked for right before the end of input is run and answered before the server ends.
      yield* client.send({ _tag: "Request", id: "4", tag: "turn.start", payload: { sessionId, prompt: "bye" }, headers: [] })
      yield* client.end
      const last = yield* client.answers("4")
      assert.strictEqual(last.at(-1).exit._tag, "Success")
      assert.isTrue(last.some((m) => m._tag === "Chunk" && m.values.some((e: any) => e.message?.result === "goodbye")))
      yield* Fiber.join(client.running)
    }).pipe(Effect.provide(Testing.layer([TestModel.text("hi there"), TestModel.text("goodbye")]))))
})
