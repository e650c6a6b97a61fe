/**
 * How a session over `stream-json` input starts, when a host (the Claude Agent SDK) may be on the
 * other side: the input is read ahead at once (`HostInput`), so that the control channel works
 * while the session is built, and the session waits for the first line: an `initialize` there
 * names the host's in-process MCP servers, which are connected like the configured ones while the
 * session's layers are built (and the host's `control_cancel_request` for that `initialize` stops
 * the start). A session resumed with `-p` (a client of its own, not the Agent SDK, which passes no
 * `-p`) does not wait: what it left (a permission ask to answer again) may be what its client
 * waits for before it writes; in-process servers are not connected then (an `initialize` naming
 * them is refused, by name).
 *
 * @since 0.1.0
 */
import { Ids } from "@keel/core"
import type { ConfigError } from "effect/ConfigError"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as HostChannel from "./HostChannel.js"
import * as HostInFlight from "./HostInFlight.js"
import * as HostInput from "./HostInput.js"
import * as SdkMcpHost from "./SdkMcpHost.js"

/** A started host session: its input, its requests in flight, and its in-process servers. @category Models */
export interface Started {
  readonly input: HostInput.HostInput
  readonly inFlight: HostInFlight.Service
  /** The first line's `initialize` request id, when it was one. */
  readonly initializeId: string | undefined
  /** The first line's `initialize` request (its fields), when it was one. */
  readonly initialize: Record<string, unknown> | undefined
  /** The host's in-process MCP servers and the link to them (none: `undefined`). */
  readonly mcp: { readonly servers: ReturnType<typeof SdkMcpHost.serversOf>; readonly link: SdkMcpHost.Service["link"] } | undefined
}

/**
 * Whether the session waits for the first line before it is built: always, but for a session
 * resumed with `-p` (see above).
 *
 * @category Running
 */
export const waitsForFirstLine = (flags: { readonly print: boolean; readonly resume?: string | undefined; readonly continue?: boolean | undefined }): boolean =>
  !(flags.print && (flags.resume !== undefined || flags.continue === true))

/**
 * Starts reading `lines` and, when `wait`, waits for the first one (or the end of input).
 *
 * @category Running
 */
export const start = (
  lines: AsyncIterable<string>,
  write: (message: unknown) => void,
  err: (text: string) => void,
  wait: boolean
): Effect.Effect<Started, ConfigError, Scope.Scope> =>
  Effect.gen(function*() {
    const channel = yield* HostChannel.make(write).pipe(Effect.provideService(Ids.Ids, Ids.crypto))
    const inFlight = yield* HostInFlight.make
    const sdk = yield* SdkMcpHost.make(channel)
    const input = yield* HostInput.start(lines, { channel, inFlight, sdk, write, err })
    const initialize = wait ? yield* input.initialize : undefined
    const servers = initialize === undefined ? [] : SdkMcpHost.serversOf(initialize.request)
    return {
      input,
      inFlight,
      initializeId: initialize?.requestId,
      initialize: initialize?.request,
      mcp: servers.length === 0 ? undefined : { servers, link: sdk.link }
    }
  })

/** The error a request the host cancelled is answered with. @category Constants */
export const CANCELLED = "cancelled by the host (control_cancel_request) before it was answered"

/**
 * Builds the session's layers in the current scope. While they build (MCP servers start) the first
 * line's `initialize` is still unanswered, and the host may cancel it: then the start stops (what
 * started is closed with the scope), the `initialize` is answered with an error, and `undefined`
 * is returned.
 *
 * @category Running
 */
export const build = <ROut, E>(
  host: Started,
  layer: Layer.Layer<ROut, E>,
  write: (message: unknown) => void,
  err: (text: string) => void
): Effect.Effect<Context.Context<ROut> | undefined, E, Scope.Scope> =>
  Effect.gen(function*() {
    const building = Effect.either(Layer.buildWithScope(layer, yield* Effect.scope))
    const id = host.initializeId
    if (id === undefined) return yield* Effect.flatten(building)
    const built = yield* host.inFlight.run(id, building)
    if (Option.isNone(built)) {
      err(`keel: the host cancelled its initialize while the session started; nothing ran\n`)
      write({ type: "control_response", response: { subtype: "error", request_id: id, error: CANCELLED } })
      return undefined
    }
    // Answered once the session is open; until then the host may still withdraw it.
    yield* host.inFlight.queued(id)
    return yield* Either.match(built.value, { onLeft: Effect.fail, onRight: Effect.succeed })
  })
