/**
 * `stream-json` input as the host sends it, read ahead of the session: the lines that belong to the
 * control channel's own traffic are taken up at once, whatever the session is doing (also while it
 * starts, when a server in the host's process is still being connected):
 *
 * - a `control_response` to one of Keel's `HostChannel` requests answers it;
 * - the host's `mcp_message` request carries a message of one of its in-process servers to Keel
 *   (acknowledged with an empty success; an error response when no such server is connected);
 * - the host's `control_cancel_request` withdraws a request of its own that waits or runs
 *   (`HostInFlight`); one for an id Keel is not working on has nothing to cancel (a line on stderr).
 *
 * Every other line goes on, numbered as read, to the session's reader (a bounded mailbox: reading
 * waits while 1,024 lines wait there). The first line (blank lines and `keep_alive` aside) is kept
 * too: when it is an `initialize` request, it says what the session is built with (its in-process
 * MCP servers).
 *
 * @since 0.1.0
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Mailbox from "effect/Mailbox"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as ControlMessages from "../ControlMessages.js"
import type * as HostChannel from "./HostChannel.js"
import type * as HostInFlight from "./HostInFlight.js"
import type * as SdkMcpHost from "./SdkMcpHost.js"

/** One line for the session's reader, and its number in the input. @category Models */
export interface Line {
  readonly text: string
  readonly line: number
}

/** @category Models */
export interface HostInput {
  /** The first line's `initialize` request, when the first line is one. */
  readonly initialize: Effect.Effect<Initialize | undefined>
  /** The lines the control channel did not take, in order. */
  readonly lines: Stream.Stream<Line, unknown>
}

/** An `initialize` request: its id, and the request (its `subtype` and fields). @category Models */
export interface Initialize {
  readonly requestId: string
  readonly request: Record<string, unknown>
}

/** Who takes the control channel's lines. @category Models */
export interface Handlers {
  readonly channel: HostChannel.Service
  readonly inFlight: HostInFlight.Service
  /** Where the in-process servers' messages go. */
  readonly sdk: SdkMcpHost.Service
  /** Writes one stdout line (a value as JSON). */
  readonly write: (message: unknown) => void
  /** Writes to stderr. */
  readonly err: (text: string) => void
}

/** Lines that may wait for the session's reader. @category Constants */
export const CAPACITY = 1024

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const parse = (text: string): Record<string, unknown> | undefined => {
  try {
    const value: unknown = JSON.parse(text)
    return isRecord(value) ? value : undefined
  } catch {
    return undefined
  }
}

/**
 * Starts reading `input` in the current scope (reading stops when it closes).
 *
 * @category Constructors
 */
export const start = (input: AsyncIterable<string>, handlers: Handlers): Effect.Effect<HostInput, never, Scope.Scope> =>
  Effect.gen(function*() {
    const { channel, inFlight, write, err } = handlers
    const mailbox = yield* Mailbox.make<Line, unknown>({ capacity: CAPACITY, strategy: "suspend" })
    const first = yield* Deferred.make<Initialize | undefined>()
    let count = 0

    const respond = (requestId: string, error?: string) =>
      write({
        type: "control_response",
        response: error === undefined
          ? { subtype: "success", request_id: requestId, response: {} }
          : { subtype: "error", request_id: requestId, error }
      })

    /** Takes up a line of the control channel's own; `false` for a line the session reads. */
    const taken = (value: Record<string, unknown>, line: number): Effect.Effect<boolean> => {
      switch (value.type) {
        case "control_response": {
          const response = ControlMessages.readResponse(value)
          return response === undefined ? Effect.succeed(false) : channel.receive(response)
        }
        case "control_request": {
          const request = value.request
          if (typeof value.request_id !== "string" || !isRecord(request)) return Effect.succeed(false)
          if (request.subtype !== "mcp_message") return Effect.as(inFlight.queued(value.request_id), false)
          const server = request.server_name
          const delivery = typeof server === "string" ? handlers.sdk.deliver(server, request.message) : Effect.succeed<SdkMcpHost.Delivery>("invalid")
          return Effect.map(delivery, (delivery) => {
            if (delivery === "delivered") return respond(value.request_id as string)
            const error = delivery === "invalid"
              ? "mcp_message needs a \"server_name\" and a JSON-RPC \"message\""
              : `no in-process MCP server named ${JSON.stringify(server)} is connected to this session`
            err(`keel: stdin line ${line}: ${error}; answered with an error\n`)
            respond(value.request_id as string, error)
          }).pipe(Effect.as(true))
        }
        case "control_cancel_request": {
          const id = value.request_id
          if (typeof id !== "string") return Effect.succeed(false)
          return Effect.map(inFlight.cancel(id), (cancelled) => {
            if (cancelled === "unknown") {
              err(`keel: stdin line ${line}: control_cancel_request for ${id}: no request of that id waits or runs; nothing to cancel\n`)
            }
            return true
          })
        }
        default:
          return Effect.succeed(false)
      }
    }

    const read = (text: string) =>
      Effect.gen(function*() {
        const line = ++count
        const value = text.trim() === "" ? undefined : parse(text)
        if (value?.type !== "keep_alive" && text.trim() !== "" && !(yield* Deferred.isDone(first))) {
          const request = value?.type === "control_request" && isRecord(value.request) ? value.request : undefined
          const id = value?.request_id
          yield* Deferred.succeed(
            first,
            request?.subtype === "initialize" && typeof id === "string" ? { requestId: id, request } : undefined
          )
        }
        if (value !== undefined && (yield* taken(value, line))) return
        yield* mailbox.offer({ text, line })
      })

    yield* Stream.fromAsyncIterable(input, (e) => e).pipe(
      Stream.runForEach(read),
      Effect.exit,
      Effect.flatMap((exit) =>
        Effect.all([Deferred.succeed(first, undefined), channel.end, mailbox.done(exit)], { discard: true })
      ),
      Effect.forkScoped
    )
    return { initialize: Deferred.await(first), lines: Mailbox.toStream(mailbox) }
  })
