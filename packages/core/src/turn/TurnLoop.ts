/**
 * The turn loop, as one `Stream` pipeline. Each iteration: prepare (the `Pipeline` of stages) →
 * model stream (`ModelClient`) → accumulate (`Accumulator`, folded chunk by chunk as events pass
 * through) → tool execution (`ToolRuntime`) → continue or stop. It stops when the model answers
 * without `tool_use`, when `maxTurns` model calls have run, when the model call fails, or when
 * interrupted; whichever way it stops, every `tool_use` in the conversation has its `tool_result`.
 *
 * The loop itself is one Effect fiber that writes its events into a `Mailbox`; the turn's `Stream` is
 * that mailbox. Each iteration costs one run of the model's stream (folded chunk by chunk) and a few
 * effects, never a deeper pipeline: per-event and per-iteration costs are the same on the 1st
 * iteration and the 100th. Closing the stream (the consumer stops pulling) interrupts the fiber.
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Mailbox from "effect/Mailbox"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { type AssistantMessage, type ToolResultBlock, type ToolUseBlock, UserMessage } from "../message/Message.js"
import * as Accumulator from "../model/Accumulator.js"
import { ModelClient } from "../model/ModelClient.js"
import type { ModelError } from "../model/ModelError.js"
import type { ModelRequest, QuerySource } from "../model/ModelRequest.js"
import { addUsage, SessionState } from "../session/SessionState.js"
import { ToolRegistry } from "../tool/ToolRegistry.js"
import { interruptedResult, ToolRuntime } from "../tool/ToolRuntime.js"
import { Pipeline } from "./Pipeline.js"
import { type TerminalReason, TurnEvent } from "./TurnEvent.js"

/** Most events (raw-event batches count as one) waiting for the consumer before the loop waits. @category Constants */
export const MAILBOX_CAPACITY = 64

/** Options of one turn. @category Models */
export interface Options {
  readonly model: string
  readonly maxTokens: number
  /** The most model calls in this turn; the turn ends with `max_turns` after the last one's tools. */
  readonly maxTurns?: number | undefined
  readonly system?: ModelRequest["system"] | undefined
  /** Working directory handed to tools. */
  readonly cwd: string
  readonly source?: QuerySource | undefined
  /** Further Messages API parameters. */
  readonly params?: Readonly<Record<string, unknown>> | undefined
  /** When this effect completes, the turn stops: the model stream and running tools are interrupted. */
  readonly interrupt?: Effect.Effect<void> | undefined
  /** Emit raw events as `StreamEvents` batches (default true). */
  readonly emitStreamEvents?: boolean | undefined
}

/** The services a turn needs. @category Models */
export type Requirements = ModelClient | ToolRuntime | ToolRegistry | Pipeline | SessionState

/**
 * Runs one turn on the session's conversation (which must end with the user's message). Emits
 * `TurnEvent`s; the last is always `TurnComplete`, unless the consumer itself stops pulling, in
 * which case the conversation is still left valid.
 *
 * @category Constructors
 */
export const run = (options: Options): Stream.Stream<TurnEvent, never, Requirements> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const client = yield* ModelClient
    const runtime = yield* ToolRuntime
    const registry = yield* ToolRegistry
    const pipeline = yield* Pipeline
    const session = yield* SessionState
    const emitStreamEvents = options.emitStreamEvents !== false
    const maxTurns = options.maxTurns ?? Number.POSITIVE_INFINITY
    // Bounded: a consumer that falls behind holds the loop back instead of letting events pile up.
    const mailbox = yield* Mailbox.make<TurnEvent>({ capacity: MAILBOX_CAPACITY, strategy: "suspend" })
    const emit = (...events: Array<TurnEvent>): Effect.Effect<void> =>
      events.length === 0 ? Effect.void : Effect.asVoid(mailbox.offerAll(events))

    // Loop-local control state: confined to this turn's fiber, read and written by its steps in order.
    let iteration = 0
    let finished: TurnEvent | undefined
    let phase: "streaming" | "tools" = "streaming"
    let lastMessage: AssistantMessage | undefined
    let pending: { readonly uses: ReadonlyArray<ToolUseBlock>; readonly results: Map<string, ToolResultBlock> } | undefined
    let repaired: UserMessage | undefined

    const complete = (reason: TerminalReason, error?: ModelError): TurnEvent => {
      finished = TurnEvent.TurnComplete({ reason, iterations: iteration, lastMessage, error })
      return finished
    }

    /** Answers every tool call still open, with its result if it finished and "interrupted" if not. */
    const repair = Effect.suspend(() => {
      if (pending === undefined) return Effect.void
      const { results, uses } = pending
      pending = undefined
      repaired = new UserMessage({ content: uses.map((u) => results.get(u.id) ?? interruptedResult(u.id)) })
      const message = repaired
      return Ref.update(session.messages, (ms) => [...ms, message])
    })

    /** Adds the time since `startedAt` to the session's API time. */
    const recordApiTime = (startedAt: number) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.update(session.apiDurationMs, (d) => d + now - startedAt))

    /** Runs the tool calls of `result` and records their results. */
    const runTools = (result: Accumulator.Result) =>
      Effect.gen(function*() {
        const uses = result.message.toolUses
        phase = "tools"
        const results = new Map<string, ToolResultBlock>()
        pending = { uses, results }
        const calls = uses.map((block) => ({ block, malformedInput: result.malformedToolInput.get(block.id) }))
        yield* Stream.runForEach(
          runtime.run(calls, options.cwd),
          (r) => Effect.sync(() => results.set(r.tool_use_id, r))
        )
        const message = new UserMessage({ content: uses.map((u) => results.get(u.id)!) })
        pending = undefined
        phase = "streaming"
        yield* Ref.update(session.messages, (ms) => [...ms, message])
        yield* emit(TurnEvent.ToolResults({ message }))
        if (iteration >= maxTurns) yield* emit(complete("max_turns"))
      })

    /** One iteration: prepare, stream and fold the model's answer, record it, run its tools. */
    const iterate = Effect.gen(function*() {
      iteration++
      phase = "streaming"
      yield* Ref.update(session.turnCount, (n) => n + 1)
      const history = yield* Ref.get(session.messages)
      const prepared = yield* pipeline.run(history, { model: options.model, iteration })
      if (prepared.messages !== history) yield* Ref.set(session.messages, prepared.messages)
      yield* emit(...prepared.reports.map((report) => TurnEvent.StageApplied({ report })))
      const request: ModelRequest = {
        model: options.model,
        messages: prepared.messages,
        max_tokens: options.maxTokens,
        tools: registry.definitions,
        source: options.source ?? "foreground",
        ...(options.system !== undefined ? { system: options.system } : {}),
        ...(options.params !== undefined ? { params: options.params } : {})
      }
      const startedAt = yield* Clock.currentTimeMillis
      const acc = Accumulator.make()
      const streamed = yield* client.stream(request).pipe(
        Stream.runForEachChunk((chunk) => {
          // Indexed loops over the backing array: a chunk's iterator costs more than the work per event.
          const batch = Chunk.toReadonlyArray(chunk)
          for (let i = 0; i < batch.length; i++) Accumulator.step(acc, batch[i]!)
          return emitStreamEvents && batch.length > 0 ? emit({ _tag: "StreamEvents", events: batch }) : Effect.void
        }),
        Effect.either
      )
      yield* recordApiTime(startedAt)
      if (streamed._tag === "Left") return yield* emit(complete("model_error", streamed.left))
      const result = Accumulator.finish(acc)
      const message = result.message
      lastMessage = message
      yield* Ref.update(session.messages, (ms) => [...ms, message])
      if (message.usage !== undefined) {
        const usage = message.usage
        yield* Ref.update(session.usage, (u) => addUsage(u, message.model ?? options.model, usage))
      }
      yield* emit(TurnEvent.Assistant({ message }))
      if (message.toolUses.length === 0) return yield* emit(complete("completed"))
      yield* runTools(result)
    })

    const loop = Effect.whileLoop({ while: () => finished === undefined, body: () => iterate, step: () => {} }).pipe(
      Effect.ensuring(repair)
    )
    const interruptible = options.interrupt === undefined ? loop : Effect.race(loop, options.interrupt)
    // After an interruption: the repaired tool results (if any), then the closing event.
    const closing = Effect.suspend(() => {
      if (finished !== undefined) return Effect.void
      const tail: Array<TurnEvent> = repaired !== undefined ? [TurnEvent.ToolResults({ message: repaired })] : []
      return emit(...tail, complete(phase === "tools" ? "aborted_tools" : "aborted_streaming"))
    })
    yield* Effect.forkScoped(Mailbox.into(Effect.andThen(interruptible, closing), mailbox))
    return Mailbox.toStream(mailbox)
  }))
