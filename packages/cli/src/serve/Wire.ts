/**
 * The runtime protocol on the wire: `@effect/rpc`'s own messages (`Request`, `Chunk`, `Exit`, ...),
 * one JSON object a line, over stdio or in HTTP bodies. The server is `@effect/rpc`'s (`RpcServer`),
 * and so is the HTTP transport (`RpcServer.makeProtocolWithHttpApp`); what this module adds is what
 * a server that hand-written clients talk to needs on top:
 *
 * - {@link serialization}: the library's ndjson framing, except that a line that is not JSON (or
 *   not a protocol message) is one bad request, not an exception: the library's parser keeps the
 *   bad line in its buffer and fails every later read of the connection.
 * - {@link guard}: every request is checked before the server sees it (a known method, an id, a
 *   payload its schema accepts), and a bad one is answered with the typed `InvalidRequest` in an
 *   `Exit`, under the request's id (`-1` when it has none that can be read). The library would
 *   answer some of these with a `Defect` (which fails every call of a library client) or not at
 *   all.
 * - {@link stdioProtocol}: stdio without the library's per-chunk acknowledgements (a client reads a
 *   stream's chunks as they come, no `Ack` to send) and with an orderly end: at the end of stdin,
 *   what was asked is finished and answered before the server ends.
 *
 * @since 0.1.0
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import type * as Rpc from "@effect/rpc/Rpc"
import type * as RpcGroup from "@effect/rpc/RpcGroup"
import type { FromClientEncoded, FromServerEncoded } from "@effect/rpc/RpcMessage"
import * as RpcSerialization from "@effect/rpc/RpcSerialization"
import * as RpcServer from "@effect/rpc/RpcServer"
import { RuntimeProtocol } from "@keel/core"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Mailbox from "effect/Mailbox"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/** Longest line read (as the library's ndjson): a longer one is a bad request of its own. @category Constants */
export const MAX_LINE_BYTES = 16 * 1024 * 1024

/** The request id of an answer to a request whose id could not be read. @category Constants */
export const UNKNOWN_REQUEST_ID = "-1"

/** A line that is not a protocol message, as the parser hands it to {@link guard}. */
interface Malformed {
  readonly _tag: "Malformed"
  readonly reason: "MalformedJson" | "NotAMessage"
  readonly message: string
  /** The request id the line seems to carry, so the answer can name it. */
  readonly id: string | undefined
}

const FROM_CLIENT = new Set(["Request", "Ack", "Interrupt", "Ping"])

const idIn = (line: string): string | undefined => /"id"\s*:\s*"?(\d+)"?/.exec(line)?.[1]

/** One line read: a protocol message, or what is wrong with it. */
const readLine = (line: string): FromClientEncoded | Malformed => {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e)
    return { _tag: "Malformed", reason: "MalformedJson", message: `The line is not JSON (${why}).`, id: idIn(line) }
  }
  const tag = Predicate.isRecord(value) ? value._tag : undefined
  if (typeof tag === "string" && FROM_CLIENT.has(tag)) return value as unknown as FromClientEncoded
  return {
    _tag: "Malformed",
    reason: "NotAMessage",
    message: `The line is not a protocol message: an object whose "_tag" is "Request", "Interrupt", "Ack" or "Ping" ` +
      `(got ${typeof tag === "string" ? `"_tag": ${JSON.stringify(tag)}` : JSON.stringify(line.slice(0, 80))}).`,
    id: idIn(line)
  }
}

/** The parser of {@link serialization}, with what is left at the end of input. */
export interface Parser extends RpcSerialization.Parser {
  /** The last line, if the input ended without its newline. */
  readonly flush: () => ReadonlyArray<unknown>
}

/** A serialization whose parser is a {@link Parser}. @category Serialization */
export interface Serialization extends Omit<RpcSerialization.RpcSerialization["Type"], "unsafeMake"> {
  readonly unsafeMake: () => Parser
}

/**
 * Newline-delimited JSON, as `RpcSerialization.ndjson` writes it, read line by line: a line that is
 * not JSON, or not a message a client sends, is passed on as a bad request for {@link guard} to
 * answer, and the lines after it are read as usual. `wholeInput`: each `decode` is given a whole
 * input (an HTTP body), so its last line needs no newline.
 *
 * @category Serialization
 */
export const serialization = (
  options: { readonly wholeInput?: boolean | undefined } = {}
): Serialization => ({
  contentType: "application/ndjson",
  includesFraming: true,
  unsafeMake: () => {
    const encoder = RpcSerialization.ndjson.unsafeMake()
    const decoder = new TextDecoder()
    let buffer = ""
    // Past a line over the limit: what comes until its newline is dropped.
    let skipping = false
    const take = (complete: boolean): Array<unknown> => {
      const parts = buffer.split("\n")
      buffer = complete ? "" : parts.pop()!
      const out: Array<unknown> = []
      for (const part of parts) {
        if (skipping) skipping = false
        else if (part.length > MAX_LINE_BYTES) out.push(tooLong())
        else if (part.trim() !== "") out.push(readLine(part))
      }
      if (buffer.length > MAX_LINE_BYTES) {
        if (!skipping) out.push(tooLong())
        buffer = ""
        skipping = true
      }
      return out
    }
    return {
      decode: (data) => {
        buffer += typeof data === "string" ? data : decoder.decode(data, { stream: options.wholeInput !== true })
        return take(options.wholeInput === true)
      },
      encode: encoder.encode,
      flush: () => take(true)
    }
  }
})

const tooLong = (): Malformed => ({
  _tag: "Malformed",
  reason: "NotAMessage",
  message: `The line is longer than ${MAX_LINE_BYTES} bytes.`,
  id: undefined
})

const encodeInvalid = Schema.encodeSync(RuntimeProtocol.InvalidRequest)

/** The `Exit` that answers a bad request with `InvalidRequest`. @category Constructors */
export const refusal = (requestId: string | undefined, error: RuntimeProtocol.InvalidRequest): FromServerEncoded => ({
  _tag: "Exit",
  requestId: requestId ?? UNKNOWN_REQUEST_ID,
  exit: { _tag: "Failure", cause: { _tag: "Fail", error: encodeInvalid(error) } }
})

const isRequestId = (u: unknown): u is string => typeof u === "string" && /^\d+$/.test(u)

const isHeader = (u: unknown): u is [string, string] =>
  Array.isArray(u) && u.length === 2 && typeof u[0] === "string" && typeof u[1] === "string"

/**
 * What is wrong with `message` for a server of `group`, or the message as the server may take it
 * (a request's headers kept only when well formed).
 */
const check = (
  group: RpcGroup.RpcGroup<Rpc.Any>,
  message: FromClientEncoded | Malformed
): Either.Either<FromClientEncoded, FromServerEncoded> => {
  const invalid = (id: string | undefined, reason: RuntimeProtocol.InvalidRequest["reason"], text: string, method?: string) =>
    Either.left(refusal(id, new RuntimeProtocol.InvalidRequest({ reason, message: text, ...(method === undefined ? {} : { method }) })))
  switch (message._tag) {
    case "Malformed":
      return invalid(message.id, message.reason, message.message)
    case "Ack":
    case "Interrupt":
      return isRequestId(message.requestId)
        ? Either.right(message)
        : invalid(undefined, "NotAMessage", `An ${message._tag} needs the "requestId" of a request: a string of digits.`)
    case "Request": {
      if (!isRequestId(message.id)) {
        return invalid(undefined, "NotAMessage", `A request needs an "id": a string of digits, e.g. "1".`)
      }
      const method = typeof message.tag === "string" ? message.tag : undefined
      const rpc = method === undefined ? undefined : group.requests.get(method) as Rpc.AnyWithProps | undefined
      if (rpc === undefined) {
        const known = [...group.requests.keys()].join(", ")
        return invalid(
          message.id,
          "UnknownMethod",
          `There is no method ${JSON.stringify(message.tag)} (the "tag" of a request); the methods are ${known}.`,
          method
        )
      }
      const decoded = Schema.decodeUnknownEither(rpc.payloadSchema as Schema.Schema<unknown, unknown>)(message.payload)
      if (Either.isLeft(decoded)) {
        return invalid(
          message.id,
          "InvalidPayload",
          `The payload of ${method} is not valid: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`,
          method
        )
      }
      const headers = Array.isArray(message.headers) ? message.headers.filter(isHeader) : []
      return Either.right({ ...message, headers })
    }
    default:
      return Either.right(message)
  }
}

/**
 * `protocol` with every message checked first (see the module doc): a bad one is answered with
 * `InvalidRequest` and never reaches the server.
 *
 * @category Protocols
 */
export const guard = (
  group: RpcGroup.RpcGroup<Rpc.Any>,
  protocol: RpcServer.Protocol["Type"]
): RpcServer.Protocol["Type"] => ({
  ...protocol,
  run: (f) =>
    protocol.run((clientId, message) =>
      Either.match(check(group, message as FromClientEncoded | Malformed), {
        onLeft: (answer) => protocol.send(clientId, answer),
        onRight: (checked) => f(clientId, checked)
      })
    )
})

/** Options of {@link stdioProtocol}. @category Models */
export interface StdioOptions {
  /** The input: bytes (or text) of JSON lines. */
  readonly input: Stream.Stream<Uint8Array | string, unknown>
  /** Writes output (whole lines). */
  readonly write: (text: string) => Effect.Effect<void>
  /** Runs at the end of input, before the server ends the client (e.g. finish the sessions' turns). */
  readonly onEnd: Effect.Effect<void>
}

/**
 * A protocol for one client on a pair of streams: every line of `input` is a message, and every
 * answer is a line written. At the end of input, `onEnd` runs and the client ends once every
 * request it made has been answered; `done` then resolves. No `Ack`s: chunks are written as they
 * come (an `Ack` a client sends anyway is ignored).
 *
 * @category Protocols
 */
export const stdioProtocol = (
  options: StdioOptions
): Effect.Effect<{ readonly protocol: RpcServer.Protocol["Type"]; readonly done: Effect.Effect<void> }, never, Scope.Scope> =>
  Effect.gen(function*() {
    const done = yield* Deferred.make<void>()
    const parser = serialization().unsafeMake()
    const protocol = yield* RpcServer.Protocol.make((writeRequest) =>
      Effect.gen(function*() {
        const deliver = (messages: ReadonlyArray<unknown>) =>
          Effect.forEach(messages, (message) => writeRequest(0, message as FromClientEncoded), { discard: true })
        yield* options.input.pipe(
          Stream.runForEach((chunk) => deliver(parser.decode(chunk))),
          Effect.catchAllCause((cause) => Effect.logError("reading the protocol's input failed", cause)),
          Effect.zipRight(Effect.suspend(() => deliver(parser.flush()))),
          Effect.zipRight(options.onEnd),
          // Suspended: `writeRequest` only buffers until the server runs.
          Effect.zipRight(Effect.suspend(() => writeRequest(0, { _tag: "Eof" }))),
          Effect.forkScoped
        )
        return {
          disconnects: yield* Mailbox.make<number>(),
          send: (_clientId, response) => {
            const encoded = parser.encode(response)
            return encoded === undefined ? Effect.void : options.write(encoded as string)
          },
          end: () => Deferred.succeed(done, undefined),
          clientIds: Effect.succeed(new Set([0])),
          initialMessage: Effect.succeedNone,
          supportsAck: false,
          supportsTransferables: false,
          supportsSpanPropagation: true
        }
      })
    )
    return { protocol, done: Deferred.await(done) }
  })

/** The server's options: a handler that dies fails its own request, not the connection. */
const serverOptions = { disableFatalDefects: true, spanPrefix: "keel.rpc" } as const

/**
 * Serves `group` on `protocol` (guarded) until the scope closes.
 *
 * @category Servers
 */
export const serve = <Rpcs extends Rpc.Any>(
  group: RpcGroup.RpcGroup<Rpcs>,
  protocol: RpcServer.Protocol["Type"]
): Effect.Effect<void, never, Scope.Scope | Rpc.ToHandler<Rpcs> | Rpc.Middleware<Rpcs> | Rpc.Context<Rpcs>> =>
  RpcServer.make(group, serverOptions).pipe(
    Effect.provideService(RpcServer.Protocol, guard(group as unknown as RpcGroup.RpcGroup<Rpc.Any>, protocol)),
    Effect.interruptible,
    Effect.forkScoped,
    Effect.asVoid
  )

/** The path the HTTP transport serves at (`POST`). @category Constants */
export const HTTP_PATH = "/rpc"

/**
 * The HTTP transport: `POST /rpc` with JSON lines of requests in the body; the answers (a stream's
 * chunks as they come) are JSON lines in the response body, which ends when every request of the
 * body has been answered. Each request is a client of its own: closing the connection stops what
 * it asked for (its streams), not the turns it started.
 *
 * @category Servers
 */
export const httpRouter = <Rpcs extends Rpc.Any>(
  group: RpcGroup.RpcGroup<Rpcs>
): Effect.Effect<
  HttpRouter.HttpRouter,
  never,
  Scope.Scope | Rpc.ToHandler<Rpcs> | Rpc.Middleware<Rpcs> | Rpc.Context<Rpcs>
> =>
  Effect.gen(function*() {
    const { httpApp, protocol } = yield* RpcServer.makeProtocolWithHttpApp.pipe(
      Effect.provideService(RpcSerialization.RpcSerialization, serialization({ wholeInput: true }))
    )
    yield* serve(group, protocol)
    return HttpRouter.empty.pipe(HttpRouter.post(HTTP_PATH, httpApp))
  })

/** Whether a decoded line is a bad request (for tests of the parser). @category Guards */
export const isMalformed = (u: unknown): boolean => Predicate.isRecord(u) && u._tag === "Malformed"
