/**
 * The single owner of a session's turn admission. `submit` returns at once with the turn's id and
 * its output stream; while a turn runs, new input waits in the queue (`Admission`), which can be
 * listed, pruned, reordered or cleared, and `now` input interrupts the running turn and runs next.
 * One worker fiber, in the runtime's scope, takes the queue's head whenever nothing runs and drives
 * the session's `submit` with it, so no caller keeps a busy flag or a queue of its own.
 *
 * Each turn's messages go to a mailbox of its own as they are made, whether or not anyone reads
 * them yet: a caller may read a queued turn's stream from the start, before it runs. A queued turn
 * that is removed or cleared never runs, and its stream fails with `TurnCancelled`; a turn that dies
 * (a bug below the session) fails its own stream and the queue goes on.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as PubSub from "effect/PubSub"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as SynchronizedRef from "effect/SynchronizedRef"
import { Ids } from "../ids/Ids.js"
import type { UserMessage } from "../message/Message.js"
import type * as SdkMessage from "../session/SdkMessage.js"
import type * as Session from "../session/Session.js"
import * as Admission from "./Admission.js"

/** A queued turn that will not run: it was removed, or the queue was cleared. @category Errors */
export class TurnCancelled extends Schema.TaggedError<TurnCancelled>("@keel/SessionRuntime/TurnCancelled")(
  "TurnCancelled",
  { turnId: Schema.String, reason: Schema.Literal("removed", "cleared", "closed") }
) {
  override get message() {
    return `Turn ${this.turnId} was ${this.reason === "closed" ? "not run: the session closed" : this.reason} before it ran.`
  }
}

/** A submission refused because {@link Admission.MAX_QUEUED} inputs already wait. @category Errors */
export class QueueFull extends Schema.TaggedError<QueueFull>("@keel/SessionRuntime/QueueFull")(
  "QueueFull",
  { queued: Schema.Number }
) {
  override get message() {
    return `${this.queued} inputs already wait for their turn; remove some, or wait for them to run.`
  }
}

/** How a submission is admitted. @category Models */
export interface SubmitOptions {
  /** Default {@link Admission.DEFAULT_PRIORITY}; `now` interrupts the running turn. */
  readonly priority?: Admission.Priority | undefined
}

/** A submission, admitted. @category Models */
export interface Submitted {
  readonly turnId: string
  /**
   * The turn's messages (the last is its `result`); it fails if the turn is cancelled before it
   * runs. It has one reader: read a turn from `submit` or from `turns`, not from both.
   */
  readonly events: Stream.Stream<SdkMessage.SdkMessage, TurnCancelled>
}

/** @category Models */
export interface Service {
  /** Admits `input`: it runs now if nothing runs, else it waits in the queue. */
  readonly submit: (input: string | UserMessage, options?: SubmitOptions) => Effect.Effect<Submitted, QueueFull>
  /**
   * Admits a reply that needs no model (e.g. the error answer to a malformed input line): it takes
   * its place in the queue like a turn, so a caller that prints turns in the order they run prints
   * it in order too. `reply` runs when its turn comes (so it can read the session's totals then).
   */
  readonly submitReply: (
    preview: string,
    reply: Effect.Effect<ReadonlyArray<SdkMessage.SdkMessage>>,
    options?: SubmitOptions
  ) => Effect.Effect<Submitted, QueueFull>
  /**
   * The turns as they start, in the order they run, each with its stream: what a caller that prints
   * every turn reads (one turn's messages are all out before the next turn starts). Only turns that
   * start after the subscription are seen: subscribe before submitting. It ends when the runtime
   * closes, after the turns already started (subscribe in a scope that outlives the runtime's).
   */
  readonly turns: Effect.Effect<Stream.Stream<Submitted>, never, Scope.Scope>
  /** What waits, the next to run first. */
  readonly queue: Effect.Effect<ReadonlyArray<Admission.Snapshot>>
  /**
   * The last `result` a turn of this runtime made (as the worker saw it, whatever its readers have
   * read so far): a reply admitted after a turn sees that turn's totals.
   */
  readonly lastResult: Effect.Effect<SdkMessage.Result | undefined>
  /** The running turn's id, if a turn runs. */
  readonly running: Effect.Effect<string | undefined>
  /** Drops a queued turn; false if it is not queued (it ran, runs, or never was). */
  readonly remove: (turnId: string) => Effect.Effect<boolean>
  /** Moves a queued turn to the head; false if it is not queued. */
  readonly promote: (turnId: string) => Effect.Effect<boolean>
  /** Drops every queued turn; returns what was dropped. */
  readonly clear: Effect.Effect<ReadonlyArray<Admission.Snapshot>>
  /** Interrupts the running turn (the queue goes on with its head). */
  readonly interrupt: Effect.Effect<void>
  /** Resolves when nothing runs and nothing waits. */
  readonly idle: Effect.Effect<void>
}

/** The runtime of a session. @category Tags */
export class SessionRuntime extends Context.Tag("@keel/core/SessionRuntime")<SessionRuntime, Service>() {}

/** A queued turn's output, open from its submission. */
type Output = Mailbox.Mailbox<SdkMessage.SdkMessage, TurnCancelled>

/**
 * The runtime over `session`, its worker running in the scope: closing the scope stops the running
 * turn and cancels what waits.
 *
 * @category Constructors
 */
export const make = (session: Session.Service): Effect.Effect<Service, never, Ids | Scope.Scope> =>
  Effect.gen(function*() {
    const ids = yield* Ids
    // One lock for the admission state and the outputs, so a submission, a removal and the
    // worker's start of the next turn never see each other half done.
    const state = yield* SubscriptionRef.make<Admission.Admission>(Admission.empty)
    const outputs = new Map<string, Output>()
    // The replies that need no model, by turn id (a prompt's turn has none).
    const replies = new Map<string, Effect.Effect<ReadonlyArray<SdkMessage.SdkMessage>>>()
    // The turns as they start; `None` when the runtime closes, so a reader ends after the last turn
    // (shutting the hub down instead would drop the turns a slow reader has not taken yet).
    const started = yield* PubSub.unbounded<Option.Option<Submitted>>()
    // The running turn's abort switch, made with its start under the lock: stopping a turn never
    // misses one that has been admitted but has not reached the session yet.
    const running: { controller: AbortController | undefined } = { controller: undefined }
    // The worker waits on this when nothing can start; every change that may let one start wakes it.
    const wake = yield* Mailbox.make<void>({ capacity: 1, strategy: "dropping" })
    const lastResult = yield* Ref.make<SdkMessage.Result | undefined>(undefined)

    const cancel = (dropped: ReadonlyArray<Admission.Queued>, reason: TurnCancelled["reason"]) =>
      Effect.forEach(dropped, (q) => {
        const output = outputs.get(q.id)
        outputs.delete(q.id)
        replies.delete(q.id)
        return output === undefined ? Effect.void : output.fail(new TurnCancelled({ turnId: q.id, reason }))
      }, { discard: true })

    const admit = (
      input: string | UserMessage,
      reply: Effect.Effect<ReadonlyArray<SdkMessage.SdkMessage>> | undefined,
      options: SubmitOptions | undefined
    ) =>
      Effect.gen(function*() {
        const priority = options?.priority ?? Admission.DEFAULT_PRIORITY
        const queuedAt = yield* Clock.currentTimeMillis
        const turnId = ids.uuid()
        const output = yield* Mailbox.make<SdkMessage.SdkMessage, TurnCancelled>()
        const item: Admission.Queued = { id: turnId, priority, input, preview: Admission.preview(input), queuedAt }
        yield* SynchronizedRef.updateEffect(state, (admission) =>
          admission.queue.length >= Admission.MAX_QUEUED
            ? Effect.fail(new QueueFull({ queued: admission.queue.length }))
            : Effect.sync(() => {
              outputs.set(turnId, output)
              if (reply !== undefined) replies.set(turnId, reply)
              // `now`: the running turn stops, and this one is at the head when the worker looks
              // again. Under the lock, so a turn that is starting is stopped as it starts.
              if (priority === "now") running.controller?.abort()
              return Admission.enqueue(admission, item)
            }))
        yield* wake.offer(undefined)
        return { turnId, events: Mailbox.toStream(output) } satisfies Submitted
      })

    const drop = (turnId: string) =>
      SynchronizedRef.modifyEffect(state, (admission) =>
        Admission.isQueued(admission, turnId)
          ? Effect.as(
            cancel(admission.queue.filter((q) => q.id === turnId), "removed"),
            [true, Admission.remove(admission, turnId)] as const
          )
          : Effect.succeed([false, admission] as const))

    const clearAll = SynchronizedRef.modifyEffect(state, (admission) =>
      Effect.as(cancel(admission.queue, "cleared"), [Admission.snapshots(admission), Admission.clear(admission)] as const))

    // Runs one turn into its output; the output ends with the turn.
    const runTurn = (
      item: Admission.Queued,
      output: Output,
      controller: AbortController,
      reply: Effect.Effect<ReadonlyArray<SdkMessage.SdkMessage>> | undefined
    ) =>
      (reply === undefined
        ? session.submit(item.input, { signal: controller.signal })
        : Stream.flatMap(Stream.fromEffect(reply), Stream.fromIterable)).pipe(
        Stream.runForEach((message) =>
          message.type === "result" ? Effect.zipRight(Ref.set(lastResult, message), output.offer(message)) : output.offer(message)
        ),
        Effect.zipRight(output.end),
        // A turn that dies (a bug below the session) fails its own stream, not the runtime: the
        // worker goes on with the queue. Interruption (the runtime closing) still stops the worker.
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.zipRight(output.end, Effect.failCause(cause))
            : Effect.zipRight(
              Effect.logError("a turn died; the queue goes on", cause),
              output.failCause(Cause.die(Cause.squash(cause)))
            )
        ),
        Effect.onInterrupt(() => output.end),
        Effect.ensuring(SynchronizedRef.update(state, (admission) => {
          running.controller = undefined
          return Admission.finish(admission)
        }))
      )

    // The worker: start the head whenever nothing runs; otherwise wait to be woken.
    const worker = Effect.gen(function*() {
      for (;;) {
        const next = yield* SynchronizedRef.modify(state, (admission) => {
          const [item, after] = Admission.start(admission)
          if (item === undefined) return [undefined, after] as const
          running.controller = new AbortController()
          const output = outputs.get(item.id)!
          const reply = replies.get(item.id)
          outputs.delete(item.id)
          replies.delete(item.id)
          return [{ item, output, reply, controller: running.controller }, after] as const
        })
        if (next === undefined) {
          yield* wake.take
          continue
        }
        yield* PubSub.publish(started, Option.some({ turnId: next.item.id, events: Mailbox.toStream(next.output) }))
        yield* runTurn(next.item, next.output, next.controller, next.reply)
      }
    })
    yield* Effect.forkScoped(worker)
    // Closing the runtime: what waits will not run.
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(SynchronizedRef.getAndUpdate(state, Admission.clear), (admission) => cancel(admission.queue, "closed")).pipe(
        Effect.zipRight(PubSub.publish(started, Option.none()))
      )
    )

    // The state's changes, from the current one, until one with nothing running or waiting.
    const idle = state.changes.pipe(
      Stream.takeUntil((admission) => admission.running === undefined && admission.queue.length === 0),
      Stream.runDrain
    )

    return {
      submit: (input, options) => admit(input, undefined, options),
      submitReply: (preview, reply, options) => admit(preview, reply, options),
      turns: Effect.map(PubSub.subscribe(started), (subscription) =>
        Stream.fromQueue(subscription).pipe(
          Stream.takeWhile(Option.isSome),
          Stream.map((turn) => turn.value)
        )),
      queue: Effect.map(SynchronizedRef.get(state), Admission.snapshots),
      running: Effect.map(SynchronizedRef.get(state), (admission) => admission.running),
      lastResult: Ref.get(lastResult),
      remove: drop,
      promote: (turnId) =>
        SynchronizedRef.modify(state, (admission) =>
          Admission.isQueued(admission, turnId)
            ? [true, Admission.promote(admission, turnId)] as const
            : [false, admission] as const),
      clear: clearAll,
      // Under the lock, like `now`: a turn being started is stopped as it starts.
      interrupt: SynchronizedRef.updateEffect(state, (admission) =>
        Effect.sync(() => {
          running.controller?.abort()
          return admission
        })),
      idle
    }
  })
