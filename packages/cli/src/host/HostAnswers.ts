/**
 * The host's control requests answered as `HostRequests` does, unless the host withdraws one with
 * `control_cancel_request` first (see `HostInFlight`): a request cancelled before or while it is
 * handled is answered with an error saying so, and only when it was not answered yet (exactly one
 * response per request).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as HostRequests from "../HostRequests.js"
import type * as HostInFlight from "./HostInFlight.js"
import { CANCELLED } from "./HostStartup.js"

/**
 * Answers `request` in `context`, unless the host cancelled it (`"answered"` then too).
 *
 * @category Answering
 */
export const answer = (
  request: HostRequests.Request,
  context: HostRequests.Context,
  inFlight: HostInFlight.Service
): Effect.Effect<HostRequests.Outcome> =>
  Effect.suspend(() => {
    let answered = false
    const write = (message: unknown) => {
      answered = true
      context.write(message)
    }
    return Effect.map(inFlight.run(request.requestId, HostRequests.answer(request, { ...context, write })), (outcome) => {
      if (Option.isSome(outcome)) return outcome.value
      if (!answered) {
        context.err(`keel: stdin line ${request.line}: the host cancelled its ${request.subtype} request; answered with an error\n`)
        context.write({
          type: "control_response",
          response: { subtype: "error", request_id: request.requestId, error: CANCELLED }
        })
      }
      return "answered"
    })
  })
