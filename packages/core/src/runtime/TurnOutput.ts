/**
 * One admitted turn's messages into its output (the mailbox its reader takes them from): every
 * message as it comes, the output ended with the turn. A turn that dies (a bug below the session)
 * fails its own output, not the runtime; interruption (the runtime closing) ends the output and
 * goes on stopping the runtime's worker. What the runtime needs after the turn (its result, its
 * tool calls: a goal's progress check) is counted on the way.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Mailbox from "effect/Mailbox"
import * as Stream from "effect/Stream"
import type * as SdkMessage from "../session/SdkMessage.js"

/** What a turn left for the runtime. @category Models */
export interface Drained {
  readonly result: SdkMessage.Result | undefined
  /** Tool calls its answers made. */
  readonly toolCalls: number
}

/** Tool calls in a message (its answers' `tool_use` blocks). */
const toolCallsOf = (message: SdkMessage.SdkMessage): number => {
  if (message.type !== "assistant") return 0
  const content = message.message.content
  return Array.isArray(content) ? content.filter((b) => b.type === "tool_use").length : 0
}

/**
 * Runs `messages` into `output`; `onResult` sees the turn's `result` before its reader does.
 *
 * @category Running
 */
export const drain = <E>(
  messages: Stream.Stream<SdkMessage.SdkMessage>,
  output: Mailbox.Mailbox<SdkMessage.SdkMessage, E>,
  onResult: (result: SdkMessage.Result) => Effect.Effect<void>
): Effect.Effect<Drained> =>
  Effect.suspend(() => {
    let toolCalls = 0
    let result: SdkMessage.Result | undefined
    return messages.pipe(
      Stream.runForEach((message) => {
        toolCalls += toolCallsOf(message)
        if (message.type !== "result") return output.offer(message)
        result = message
        return Effect.zipRight(onResult(message), output.offer(message))
      }),
      Effect.zipRight(output.end),
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.zipRight(output.end, Effect.failCause(cause))
          : Effect.zipRight(
            Effect.logError("a turn died; the queue goes on", cause),
            output.failCause(Cause.die(Cause.squash(cause)))
          )
      ),
      Effect.onInterrupt(() => output.end),
      Effect.map((): Drained => ({ result, toolCalls }))
    )
  })
