/**
 * Keel's own control requests to a stream-json host (Claude Code's protocol, as the Claude Agent
 * SDK speaks it) that are not pending actions: a `control_request` goes out on stdout with a fresh
 * `request_id`, and the host's `control_response` with that id is its answer. The one place such
 * requests are sent and awaited (an `mcp_message` to a server in the host's process).
 *
 * Every request is bounded: no answer within its timeout (under `Clock`) fails it, and withdraws it
 * from the host with a `control_cancel_request`, as does interrupting the wait; an error response
 * fails it with the host's reason; once the host's input has ended, waiting requests fail and new
 * ones fail at once (nothing can answer them any more).
 *
 * @since 0.1.0
 */
import { Ids } from "@keel/core"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as ControlMessages from "../ControlMessages.js"

/** A request to the host that got no answer: refused, not answered in time, or the host's input ended. @category Errors */
export class HostRequestFailed extends Schema.TaggedError<HostRequestFailed>("@keel/cli/HostRequestFailed")(
  "HostRequestFailed",
  {
    subtype: Schema.String,
    reason: Schema.Literal("refused", "no-answer", "input-ended"),
    message: Schema.String
  }
) {}

/** A control request's body: its `subtype` and fields. @category Models */
export type Request = { readonly subtype: string } & Readonly<Record<string, unknown>>

/** @category Models */
export interface Service {
  /** Sends `request` to the host and waits for its answer (the success response's `response`), at most `timeout`. */
  readonly request: (request: Request, timeout: Duration.DurationInput) => Effect.Effect<unknown, HostRequestFailed>
  /** Takes a host's `control_response`: `true` when it answered one of these requests (else it is someone else's). */
  readonly receive: (response: ControlMessages.Response) => Effect.Effect<boolean>
  /** The host's input ended: waiting requests fail, and later ones fail at once. */
  readonly end: Effect.Effect<void>
}

/** @category Context */
export class HostChannel extends Context.Tag("@keel/cli/HostChannel")<HostChannel, Service>() {}

interface Pending {
  readonly subtype: string
  readonly answer: Deferred.Deferred<unknown, HostRequestFailed>
}

/**
 * A channel that writes its requests with `write` (one stdout line each, a value as JSON).
 *
 * @category Constructors
 */
export const make = (write: (line: unknown) => void): Effect.Effect<Service, never, Ids.Ids> =>
  Effect.gen(function*() {
    const ids = yield* Ids.Ids
    const pending = new Map<string, Pending>()
    let ended = false
    const inputEnded = (subtype: string) =>
      new HostRequestFailed({
        subtype,
        reason: "input-ended",
        message: `the ${subtype} request to the host got no answer: the host's input ended`
      })

    const request = (body: Request, timeout: Duration.DurationInput) =>
      Effect.suspend(() => {
        if (ended) return Effect.fail(inputEnded(body.subtype))
        const id = ids.uuid()
        const limit = Duration.decode(timeout)
        return Effect.flatMap(Deferred.make<unknown, HostRequestFailed>(), (answer) => {
          pending.set(id, { subtype: body.subtype, answer })
          write({ type: "control_request", request_id: id, request: body })
          return Deferred.await(answer).pipe(
            Effect.timeoutFail({
              duration: limit,
              onTimeout: () =>
                new HostRequestFailed({
                  subtype: body.subtype,
                  reason: "no-answer",
                  message: `the host did not answer the ${body.subtype} request within ${Duration.format(limit)}`
                })
            }),
            // Not answered (timed out, or the wait was interrupted): withdrawn from the host.
            Effect.ensuring(Effect.sync(() => {
              if (pending.delete(id)) write({ type: "control_cancel_request", request_id: id })
            }))
          )
        })
      })

    const receive = (response: ControlMessages.Response) =>
      Effect.suspend(() => {
        const waiting = pending.get(response.requestId)
        if (waiting === undefined) return Effect.succeed(false)
        pending.delete(response.requestId)
        return Effect.as(
          response._tag === "Answer"
            ? Deferred.succeed(waiting.answer, response.answer)
            : Deferred.fail(
              waiting.answer,
              new HostRequestFailed({
                subtype: waiting.subtype,
                reason: "refused",
                message: `the host refused the ${waiting.subtype} request: ${response.error}`
              })
            ),
          true
        )
      })

    const end = Effect.suspend(() => {
      ended = true
      const waiting = [...pending.values()]
      pending.clear()
      return Effect.forEach(waiting, (p) => Deferred.fail(p.answer, inputEnded(p.subtype)), { discard: true })
    })

    return HostChannel.of({ request, receive, end })
  })

/** The channel as a layer, writing with `write`. @category Layers */
export const layer = (write: (line: unknown) => void): Layer.Layer<HostChannel, never, Ids.Ids> =>
  Layer.effect(HostChannel, make(write))
