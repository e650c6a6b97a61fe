/**
 * Reading a host's stream-json input ahead of the session: the first line's initialize, the control
 * channel's own lines taken up at once (answers to Keel's requests, the host's mcp_message and
 * control_cancel_request), every other line passed on numbered as read; and the host's requests in
 * flight, withdrawn or interrupted by its cancel.
 */
import { assert, describe, it } from "@effect/vitest"
import { Ids } from "@keel/core"
import type { HostLink } from "@keel/tools"
import { Chunk, Deferred, Effect, Fiber, Option, Stream } from "effect"
import * as HostChannel from "../../src/host/HostChannel.js"
import * as Initialize from "../../src/Initialize.js"
import * as HostInFlight from "../../src/host/HostInFlight.js"
import * as HostInput from "../../src/host/HostInput.js"
import * as HostStartup from "../../src/host/HostStartup.js"
import * as SdkMcpHost from "../../src/host/SdkMcpHost.js"

async function* linesOf(lines: ReadonlyArray<unknown>) {
  for (const line of lines) yield typeof line === "string" ? line : JSON.stringify(line)
}

const started = (lines: ReadonlyArray<unknown>) =>
  Effect.gen(function*() {
    const written: Array<any> = []
    const errors: Array<string> = []
    const write = (line: unknown) => written.push(line)
    const channel = yield* HostChannel.make(write).pipe(Effect.provideService(Ids.Ids, Ids.seeded(2)))
    const inFlight = yield* HostInFlight.make
    const sdk = yield* SdkMcpHost.make(channel)
    const input = yield* HostInput.start(linesOf(lines), { channel, inFlight, sdk, write, err: (t) => errors.push(t) })
    return { channel, inFlight, sdk, input, written, errors }
  })

const initialize = {
  type: "control_request",
  request_id: "init-1",
  request: { subtype: "initialize", sdkMcpServers: ["calc"] }
}

describe("HostInput", () => {
  it.scoped("the first line's initialize is kept; other lines go on numbered as read", () =>
    Effect.gen(function*() {
      const { input } = yield* started(["", { type: "keep_alive" }, initialize, { type: "user", message: { role: "user", content: "hi" } }])
      assert.deepStrictEqual(yield* input.initialize, { requestId: "init-1", request: initialize.request })
      const lines = Chunk.toReadonlyArray(yield* Stream.runCollect(input.lines))
      assert.deepStrictEqual(lines.map((l) => l.line), [1, 2, 3, 4])
    }))

  it.scoped("a first line that is not an initialize, or no line at all: no initialize", () =>
    Effect.gen(function*() {
      const other = yield* started([{ type: "user", message: { role: "user", content: "hi" } }, initialize])
      assert.isUndefined(yield* other.input.initialize)
      const none = yield* started([])
      assert.isUndefined(yield* none.input.initialize)
      assert.strictEqual(Chunk.size(yield* Stream.runCollect(none.input.lines)), 0)
    }))

  it.scoped("an answer to Keel's request is taken up at once; an answer that is not Keel's goes on", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const lines: Array<unknown> = []
      async function* input() {
        await Effect.runPromise(Deferred.await(gate))
        for (const line of lines) yield JSON.stringify(line)
      }
      const written: Array<any> = []
      const channel = yield* HostChannel.make((l) => written.push(l)).pipe(Effect.provideService(Ids.Ids, Ids.seeded(3)))
      const inFlight = yield* HostInFlight.make
      const host = yield* HostInput.start(input(), {
        channel,
        inFlight,
        sdk: yield* SdkMcpHost.make(channel),
        write: (l) => written.push(l),
        err: () => {}
      })
      const asked = yield* Effect.fork(channel.request({ subtype: "mcp_message" }, "1 minute"))
      yield* Effect.yieldNow()
      const id = written[0].request_id
      lines.push(
        { type: "control_response", response: { subtype: "success", request_id: id, response: { mcp_response: { ok: 1 } } } },
        { type: "control_response", response: { subtype: "success", request_id: "a-permission-ask", response: { behavior: "allow" } } }
      )
      yield* Deferred.succeed(gate, undefined)
      assert.deepStrictEqual(yield* Fiber.join(asked), { mcp_response: { ok: 1 } })
      const passed = Chunk.toReadonlyArray(yield* Stream.runCollect(host.lines))
      assert.deepStrictEqual(passed.map((l) => [l.line, JSON.parse(l.text).response.request_id]), [[2, "a-permission-ask"]])
    }))

  it.scoped("the host's mcp_message reaches the server's listener and is acknowledged; for no such server, an error response", () =>
    Effect.gen(function*() {
      const received: Array<HostLink.Message> = []
      const { input, sdk, written, errors } = yield* started([])
      sdk.link.listen("calc", (m) => received.push(m))
      const again = yield* Effect.gen(function*() {
        const channel = yield* HostChannel.make((l) => written.push(l)).pipe(Effect.provideService(Ids.Ids, Ids.seeded(4)))
        return yield* HostInput.start(linesOf([
          { type: "control_request", request_id: "m1", request: { subtype: "mcp_message", server_name: "calc", message: { jsonrpc: "2.0", method: "notifications/tools/list_changed" } } },
          { type: "control_request", request_id: "m2", request: { subtype: "mcp_message", server_name: "nope", message: { jsonrpc: "2.0", method: "x" } } },
          { type: "control_request", request_id: "m3", request: { subtype: "mcp_message", server_name: "calc", message: { not: "json-rpc" } } }
        ]), { channel, inFlight: yield* HostInFlight.make, sdk, write: (l) => written.push(l), err: (t) => errors.push(t) })
      })
      assert.strictEqual(Chunk.size(yield* Stream.runCollect(again.lines)), 0, "all three taken up")
      assert.strictEqual(Chunk.size(yield* Stream.runCollect(input.lines)), 0)
      assert.deepStrictEqual(received, [{ jsonrpc: "2.0", method: "notifications/tools/list_changed" }])
      assert.deepStrictEqual(written, [
        { type: "control_response", response: { subtype: "success", request_id: "m1", response: {} } },
        {
          type: "control_response",
          response: { subtype: "error", request_id: "m2", error: "no in-process MCP server named \"nope\" is connected to this session" }
        },
        {
          type: "control_response",
          response: { subtype: "error", request_id: "m3", error: "mcp_message needs a \"server_name\" and a JSON-RPC \"message\"" }
        }
      ])
      assert.strictEqual(errors.length, 2)
    }))

  it.scoped("control_cancel_request: a queued request is withdrawn (never handled), an unknown id has nothing to cancel", () =>
    Effect.gen(function*() {
      const { errors, inFlight, input } = yield* started([
        { type: "control_request", request_id: "r1", request: { subtype: "mcp_status" } },
        { type: "control_cancel_request", request_id: "r1" },
        { type: "control_cancel_request", request_id: "never-sent" }
      ])
      const passed = Chunk.toReadonlyArray(yield* Stream.runCollect(input.lines))
      assert.deepStrictEqual(passed.map((l) => l.line), [1])
      let handled = false
      const outcome = yield* inFlight.run("r1", Effect.sync(() => (handled = true)))
      assert.isTrue(Option.isNone(outcome))
      assert.isFalse(handled)
      assert.deepStrictEqual(errors, [
        "keel: stdin line 3: control_cancel_request for never-sent: no request of that id waits or runs; nothing to cancel\n"
      ])
    }))
})

describe("HostInFlight", () => {
  it.effect("a cancel while the request runs interrupts it: None; one that finished is unknown", () =>
    Effect.gen(function*() {
      const inFlight = yield* HostInFlight.make
      const running = yield* Effect.fork(inFlight.run("r1", Effect.never))
      yield* Effect.yieldNow()
      assert.strictEqual(yield* inFlight.cancel("r1"), "interrupted")
      assert.isTrue(Option.isNone(yield* Fiber.join(running)))
      assert.deepStrictEqual(yield* inFlight.run("r2", Effect.succeed(7)), Option.some(7))
      assert.strictEqual(yield* inFlight.cancel("r2"), "unknown")
    }))
})

describe("HostStartup", () => {
  it("waits for the first line (an initialize may name in-process servers), but for a session resumed with -p", () => {
    assert.isTrue(HostStartup.waitsForFirstLine({ print: false, resume: "abc", continue: false }), "the Agent SDK passes no -p")
    assert.isTrue(HostStartup.waitsForFirstLine({ print: true, resume: undefined, continue: false }))
    assert.isFalse(HostStartup.waitsForFirstLine({ print: true, resume: "abc", continue: false }))
    assert.isFalse(HostStartup.waitsForFirstLine({ print: true, resume: undefined, continue: true }))
  })
})

describe("SdkMcpHost", () => {
  it("the servers initialize names, with their timeout (1 s or more) and captured handshake", () => {
    const servers = SdkMcpHost.serversOf({
      sdkMcpServers: ["calc", "notes", "calc"],
      sdkMcpServerConfigs: { calc: { timeout: 5000 }, notes: { timeout: 10 } },
      sdkMcpServerManifests: { calc: { initializeResult: { protocolVersion: "x" }, toolsListResult: { tools: [] } } }
    })
    assert.deepStrictEqual(servers.map((s) => [s.name, s.config]), [
      ["calc", { type: "sdk", timeout: 5000, manifest: { initializeResult: { protocolVersion: "x" }, toolsListResult: { tools: [] } } }],
      ["notes", { type: "sdk", timeout: undefined, manifest: undefined }]
    ])
  })

  it("initialize: servers the session connected are honoured; others, and settings beyond timeout, are refused by name", () => {
    const request = { subtype: "initialize", sdkMcpServers: ["calc"] }
    assert.deepStrictEqual(Initialize.unsupported(request, { first: true, connected: ["calc"] }), [])
    assert.deepStrictEqual(Initialize.unsupported(request, { first: true, connected: [] }), [
      "sdkMcpServers (calc: Keel connects them only from an initialize on the first line of input, not in a session resumed with -p)"
    ])
    assert.deepStrictEqual(
      Initialize.unsupported({ ...request, sdkMcpServerConfigs: { calc: { disableAutoBackground: true } } }, { first: true, connected: ["calc"] }),
      ["sdkMcpServerConfigs.calc.disableAutoBackground"]
    )
  })

  it("refuses by name the servers' settings beyond timeout", () => {
    assert.deepStrictEqual(SdkMcpHost.unsupported({ sdkMcpServerConfigs: { calc: { timeout: 5000 } } }), [])
    assert.deepStrictEqual(
      SdkMcpHost.unsupported({ sdkMcpServerConfigs: { calc: { timeout: 5000, tools: [{ name: "add", policy: "always_ask" }] } } }),
      ["sdkMcpServerConfigs.calc.tools"]
    )
  })
})
