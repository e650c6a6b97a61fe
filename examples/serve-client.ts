/**
 * An app that embeds Keel through its runtime protocol: it starts `keel serve --stdio`, talks to it
 * with `@effect/rpc`'s own client (typed by `RuntimeProtocol.RuntimeRpcs`), opens a session, runs a
 * prompt with its events streamed back, answers the permission asks, and prints the session's
 * cost. (Over HTTP, `keel serve --port N`, the client is the same with
 * `RpcClient.layerProtocolHttp({ url })` and an `HttpClient` in place of the socket.)
 *
 *   npx tsx examples/serve-client.ts "what files are here?"
 *
 * with ANTHROPIC_API_KEY set, or against the fake API (`npm run fake-api` prints the
 * ANTHROPIC_BASE_URL to use). `KEEL_BIN` names the `keel` to start (default: `keel` on the PATH).
 */
import * as Socket from "@effect/platform/Socket"
import { NodeRuntime, NodeSocket } from "@effect/platform-node"
import { RpcClient, RpcSerialization } from "@effect/rpc"
import { RuntimeProtocol } from "@keel/core"
import { Console, Effect, Layer, Stream } from "effect"
import { spawn } from "node:child_process"
import { Duplex } from "node:stream"

const prompt = process.argv.slice(2).join(" ") || "What files are here?"

// The connection: `keel serve --stdio`'s stdin and stdout. Closing it ends the server's input, and
// the server ends once what was asked is done.
const KeelStdio = Layer.scoped(
  Socket.Socket,
  Effect.gen(function*() {
    const keel = yield* Effect.acquireRelease(
      Effect.sync(() => spawn(process.env.KEEL_BIN ?? "keel", ["serve", "--stdio"], { stdio: ["pipe", "pipe", "inherit"] })),
      (keel) => Effect.sync(() => keel.stdin.end())
    )
    return yield* NodeSocket.fromDuplex(Effect.sync(() => Duplex.from({ readable: keel.stdout, writable: keel.stdin })))
  })
)

const program = Effect.gen(function*() {
  const keel = yield* RpcClient.make(RuntimeProtocol.RuntimeRpcs)
  const { init, sessionId } = yield* keel.session.start({})
  yield* Console.log(`[session ${sessionId}] ${init.model} in ${init.cwd}`)

  // The turn's events as they come: its messages, and the asks it waits on.
  yield* keel.turn.start({ sessionId, prompt }).pipe(
    Stream.runForEach((event) => {
      switch (event._tag) {
        case "Message": {
          const message = event.message
          if (message.type === "result") return Console.log(`[result] ${message.subtype}`)
          if (message.type !== "assistant") return Effect.void
          const content = message.message.content
          const text = typeof content === "string"
            ? content
            : content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("")
          return text.length > 0 ? Console.log(text) : Effect.void
        }
        case "Action": {
          // A tool call that needs permission: this app allows reads and refuses the rest.
          const change = event.event
          if (change.event !== "opened" || change.action.request.kind !== "permission") return Effect.void
          const { toolName } = change.action.request
          const answer = ["Read", "Glob", "Grep"].includes(toolName)
            ? { behavior: "allow" as const }
            : { behavior: "deny" as const, message: `This app does not allow ${toolName}.` }
          return Console.log(`[ask] ${toolName}: ${answer.behavior}`).pipe(
            Effect.zipRight(keel.action.respond({ sessionId, actionId: change.action.id, answer }))
          )
        }
        default:
          return Effect.void
      }
    })
  )

  const { lastResult } = yield* keel.session.read({ sessionId })
  yield* Console.log(`[cost] $${lastResult?.total_cost_usd.toFixed(4) ?? "0"}`)
  yield* keel.session.close({ sessionId })
}).pipe(
  Effect.scoped,
  Effect.provide(RpcClient.layerProtocolSocket().pipe(Layer.provide([KeelStdio, RpcSerialization.layerNdjson])))
)

NodeRuntime.runMain(program)
