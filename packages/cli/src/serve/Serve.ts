/**
 * `keel serve`: the runtime protocol (`RuntimeProtocol.RuntimeRpcs`) for an IDE or an app to embed,
 * over stdio (`--stdio`: a JSON message a line on stdin, the answers as lines on stdout) or HTTP
 * (`--port N`: `POST /rpc`, JSON lines both ways). Every session it opens is built as a `keel -p`
 * run's is (`Runtime.layer`, `Runtime.openSession`): the command line's flags are the defaults,
 * `session.start`'s options go over them. A tool call that would ask (and an MCP server's
 * elicitation) is a pending action, answered by the client with `action.respond`.
 *
 * With `--stdio` the server ends at the end of stdin, once the sessions are idle and every request
 * has been answered; a signal (SIGINT, SIGTERM, SIGHUP) stops it at once: running turns are
 * interrupted, sessions, their locks and their MCP servers closed, and it exits 130, 143 or 129.
 *
 * @since 0.1.0
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Actions, Pricing, RuntimeProtocol, SessionRuntime, SessionStore } from "@keel/core"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as http from "node:http"
import * as path from "node:path"
import { type Flags, sessionFlagsError } from "../Flags.js"
import * as Runtime from "../Runtime.js"
import * as Signals from "../Signals.js"
import * as Handlers from "./Handlers.js"
import { SessionOpener, Sessions } from "./Sessions.js"
import * as Sessions_ from "./Sessions.js"
import * as Wire from "./Wire.js"

/** Where to serve: stdio, or HTTP on a port (0: any free one) of a host. @category Models */
export type Transport =
  | { readonly _tag: "Stdio" }
  | { readonly _tag: "Http"; readonly port: number; readonly host: string }

/** Where a server's output goes, and what it reads with `--stdio`. @category Models */
export interface Io {
  readonly out: (text: string) => void
  readonly err: (text: string) => void
  /** The protocol's input with `--stdio` (stdin). */
  readonly input: AsyncIterable<Uint8Array | string>
}

/**
 * Opens sessions as `keel` does for a run, `flags` the defaults and the server's working directory
 * the base of a relative `cwd`. A session that cannot be opened fails with `SessionStartFailed`,
 * saying what `keel` would print.
 *
 * @category Constructors
 */
export const opener = (flags: Flags, cwd: string): SessionOpener["Type"] => ({
  open: (start) =>
    Effect.gen(function*() {
      const options: Runtime.Options = {
        ...flags,
        cwd: path.resolve(cwd, start.cwd ?? "."),
        model: start.model ?? flags.model,
        resume: start.resume,
        continue: start.continue ?? false,
        forkSession: start.forkSession ?? false,
        sessionId: start.sessionId,
        permissionMode: start.permissionMode ?? flags.permissionMode,
        maxTurns: start.maxTurns ?? flags.maxTurns,
        maxBudgetUsd: start.maxBudgetUsd ?? flags.maxBudgetUsd,
        sessionPersistence: start.persist ?? flags.sessionPersistence,
        askThroughActions: true,
        // Each session's settings `env` goes over an environment of its own, not the server's process.env.
        env: { ...process.env }
      }
      const problem = sessionFlagsError(options)
      if (problem !== undefined) return yield* new RuntimeProtocol.SessionStartFailed({ message: problem })
      const context = yield* Layer.build(Runtime.layer(options))
      const { session, warnings } = yield* Runtime.openSession(options).pipe(Effect.provide(context))
      const store = Context.get(context, SessionStore.SessionStore)
      return {
        session,
        warnings,
        runtime: SessionRuntime.make(session).pipe(Effect.provide(context)),
        actions: Context.get(context, Actions.Actions),
        transcript: Effect.flatMap(session.sessionId, (id) => store.loadEntries(options.cwd, id)),
        pricing: yield* Pricing.tableConfig.pipe(Effect.provide(NodeContext.layer))
      }
    }).pipe(
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.interrupt
          : Effect.fail(
            new RuntimeProtocol.SessionStartFailed({
              message: Runtime.describeFailure(cause, flags.debug).lines.join("\n")
            })
          )
      )
    )
})

/**
 * The protocol's handlers over sessions opened by `opener`, with the sessions themselves (closed,
 * every one, when the layer is).
 *
 * @category Layers
 */
export const layer = (
  open: SessionOpener["Type"]
): Layer.Layer<Sessions | Layer.Layer.Success<typeof Handlers.layer>> =>
  Handlers.layer.pipe(
    Layer.provideMerge(Sessions_.layer),
    Layer.provide(Layer.succeed(SessionOpener, open))
  )

/**
 * Serves the protocol over `input` and `write` (see `Wire.stdioProtocol`) until the end of input,
 * once every session is idle and every request has been answered.
 *
 * @category Running
 */
export const stdio = (options: {
  readonly input: Stream.Stream<Uint8Array | string, unknown>
  readonly write: (text: string) => Effect.Effect<void>
}) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions
    const { done, protocol } = yield* Wire.stdioProtocol({ ...options, onEnd: sessions.closeAllWhenIdle })
    yield* Wire.serve(RuntimeProtocol.RuntimeRpcs, protocol)
    yield* done
  }).pipe(Effect.scoped)

/**
 * Serves the protocol over HTTP (`POST /rpc`) on `port` of `host` until interrupted; `listening`
 * is told the address once the port is open.
 *
 * @category Running
 */
export const httpServer = (options: {
  readonly port: number
  readonly host: string
  readonly listening: (url: string) => Effect.Effect<void>
}) =>
  Effect.gen(function*() {
    const router = yield* Wire.httpRouter(RuntimeProtocol.RuntimeRpcs)
    const server = yield* NodeHttpServer.make(() => http.createServer(), { port: options.port, host: options.host })
    yield* server.serve(router)
    const address = server.address
    const where = address._tag === "TcpAddress"
      ? `http://${address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname}:${address.port}`
      : HttpServer.formatAddress(address)
    yield* options.listening(`${where}${Wire.HTTP_PATH}`)
    return yield* Effect.never
  }).pipe(Effect.scoped)

/**
 * Runs `keel serve`. Returns the exit code: 0 at the end of stdin, 130 after a signal, 1 when the
 * server could not start (the port is taken) or failed.
 *
 * @category Running
 */
export const run = async (flags: Flags, transport: Transport, io: Io): Promise<number> => {
  const program = (transport._tag === "Stdio"
    ? stdio({
      input: Stream.fromAsyncIterable(io.input, (e) => e),
      write: (text) => Effect.sync(() => io.out(text))
    })
    : httpServer({
      port: transport.port,
      host: transport.host,
      listening: (url) => Effect.sync(() => io.out(`${JSON.stringify({ listening: url })}\n`))
    })).pipe(
      Effect.provide(layer(opener(flags, process.cwd()))),
      Effect.provide(Runtime.logging(flags.debug))
    )
  const fiber = Effect.runFork(program)
  // SIGINT, SIGTERM, SIGHUP: every session stops (its turn interrupted, its lock released), then
  // the process exits with the signal's code, within Signals.GRACE_MS; a second signal exits at once.
  const signals = Signals.install(() => void Effect.runFork(Fiber.interrupt(fiber)))
  const exit = await Effect.runPromise(Fiber.await(fiber))
  signals.dispose()
  const signalled = signals.code()
  if (Exit.isSuccess(exit)) return signalled ?? 0
  if (Cause.isInterruptedOnly(exit.cause)) return signalled ?? 0
  const failure = Runtime.describeFailure(exit.cause, flags.debug)
  io.err(failure.lines.map((line) => `keel: ${line}\n`).join(""))
  return 1
}
