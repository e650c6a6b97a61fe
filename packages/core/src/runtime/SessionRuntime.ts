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
 * The runtime also keeps the session's facts that outlive a turn, in the transcript: the queued
 * inputs (saved on every change), the pending actions' events (`Actions`: what asks wait for) and
 * the goal. `resume` takes them up after a restart, the same way for `keel --resume` and any
 * other start: a turn cut while it waited for an answer runs on from its tool calls (the restored
 * action still waits for `respond`), then the saved inputs run. With an active goal, the idle
 * runtime admits the goal's continuation turns through the same queue (see `Goal.blocker` for
 * when it must not). Nothing starts before the first `submit` or `resume`, so a caller subscribes
 * to `turns` first and misses nothing.
 *
 * @since 0.1.0
 */
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
import { Actions, currentTurn } from "../action/Actions.js"
import * as Admission from "../admission/Admission.js"
import * as Goal from "../goal/Goal.js"
import * as GoalDriver from "./GoalDriver.js"
import * as Resumption from "./Resumption.js"
import * as SessionFacts from "./SessionFacts.js"
import * as TurnOutput from "./TurnOutput.js"

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
  /**
   * Interrupts the turn `turnId` if it is the one running (checked and stopped under the admission
   * lock, so a turn that has just ended never takes the interrupt meant for it); false otherwise.
   */
  readonly interruptTurn: (turnId: string) => Effect.Effect<boolean>
  /** Resolves when nothing runs, nothing waits, and no goal continuation is due. */
  readonly idle: Effect.Effect<void>
  /**
   * Takes up what the session's transcript left: the pending actions (listed again), a turn cut
   * while it waited for one (it runs on from its tool calls, first), then the inputs that were
   * queued. Call it once, after subscribing to `turns`; it also lets an active goal continue.
   */
  readonly resume: Effect.Effect<Resumed>
  /** The session's goal, if one is set. */
  readonly goal: Effect.Effect<Goal.Goal | undefined>
  /** Sets the session's goal (replacing any); while it is active, the idle runtime works on it. */
  readonly setGoal: (objective: string, options?: GoalOptions) => Effect.Effect<Goal.Goal>
  /** Ends the goal; false if there was none. */
  readonly clearGoal: Effect.Effect<boolean>
  /** Pauses (or resumes) the goal's continuations; false if there is no goal to pause or resume. */
  readonly pauseGoal: (paused: boolean) => Effect.Effect<boolean>
}

/** What {@link Service.resume} took up. @category Models */
export type Resumed = Resumption.Resumed

/** Limits of a goal. @category Models */
export type GoalOptions = GoalDriver.GoalOptions

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
export const make = (session: Session.Service): Effect.Effect<Service, never, Ids | Actions | Scope.Scope> =>
  Effect.gen(function*() {
    const ids = yield* Ids
    const actions = yield* Actions
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
    // Nothing starts before the first submission or `resume` (a caller subscribes to `turns` first).
    const ready = yield* Ref.make(false)
    // The worker waits to be woken: it has nothing to start and no goal continuation to admit.
    const parked = yield* SubscriptionRef.make(false)
    // Wakes the worker; until it has looked again (and parked), the runtime is not idle.
    const nudge = Effect.zipRight(SubscriptionRef.set(parked, false), wake.offer(undefined))
    // The queue, the actions' events and the goal, kept with the session.
    const facts = yield* SessionFacts.make(session)
    const saveQueue = facts.saveQueue

    const cancel = (dropped: ReadonlyArray<Admission.Queued>, reason: TurnCancelled["reason"]) =>
      Effect.forEach(dropped, (q) => {
        const output = outputs.get(q.id)
        outputs.delete(q.id)
        replies.delete(q.id)
        return output === undefined ? Effect.void : output.fail(new TurnCancelled({ turnId: q.id, reason }))
      }, { discard: true })

    /** Queues `item` (the queue under its limit), its output open from now. */
    const enqueue = (item: Admission.Queued, reply: Effect.Effect<ReadonlyArray<SdkMessage.SdkMessage>> | undefined) =>
      Effect.gen(function*() {
        const output = yield* Mailbox.make<SdkMessage.SdkMessage, TurnCancelled>()
        const admission = yield* SynchronizedRef.updateAndGetEffect(state, (admission) =>
          admission.queue.length >= Admission.MAX_QUEUED
            ? Effect.fail(new QueueFull({ queued: admission.queue.length }))
            : Effect.sync(() => {
              outputs.set(item.id, output)
              if (reply !== undefined) replies.set(item.id, reply)
              // `now`: the running turn stops, and this one is at the head when the worker looks
              // again. Under the lock, so a turn that is starting is stopped as it starts.
              if (item.priority === "now") running.controller?.abort()
              return Admission.enqueue(admission, item)
            }))
        // Saved only when it waits: with nothing running, the worker starts it now.
        const waits = admission.running !== undefined || admission.queue[0]?.id !== item.id
        if ((item.kind ?? "input") === "input" && waits) yield* saveQueue(admission)
        yield* Ref.set(ready, true)
        yield* nudge
        return { turnId: item.id, events: Mailbox.toStream(output) } satisfies Submitted
      })

    const admit = (
      input: string | UserMessage,
      reply: Effect.Effect<ReadonlyArray<SdkMessage.SdkMessage>> | undefined,
      options: SubmitOptions | undefined
    ) =>
      Effect.flatMap(Clock.currentTimeMillis, (queuedAt) =>
        enqueue({
          id: ids.uuid(),
          priority: options?.priority ?? Admission.DEFAULT_PRIORITY,
          input,
          preview: Admission.preview(input),
          queuedAt,
          kind: reply === undefined ? "input" : "reply"
        }, reply))

    /** Changes the queue under the lock (dropping what it drops), then saves it. */
    const changeQueue = <A>(
      f: (admission: Admission.Admission) => readonly [A, Admission.Admission, ReadonlyArray<Admission.Queued>, TurnCancelled["reason"]]
    ) =>
      Effect.gen(function*() {
        const [answer, admission] = yield* SynchronizedRef.modifyEffect(state, (admission) => {
          const [answer, next, dropped, reason] = f(admission)
          return Effect.as(cancel(dropped, reason), [[answer, next] as const, next] as const)
        })
        yield* saveQueue(admission)
        return answer
      })

    // Runs one turn into its output; the output ends with the turn.
    const runTurn = (
      item: Admission.Queued,
      output: Output,
      controller: AbortController,
      reply: Effect.Effect<ReadonlyArray<SdkMessage.SdkMessage>> | undefined
    ) => {
      const kind = item.kind ?? "input"
      const messages: Stream.Stream<SdkMessage.SdkMessage> = reply !== undefined
        ? Stream.flatMap(Stream.fromEffect(reply), Stream.fromIterable)
        : kind === "resume"
        ? session.resumeTools({ signal: controller.signal, turnId: item.id })
        : session.submit(item.input, {
          signal: controller.signal,
          turnId: item.id,
          ...(kind === "goal" ? { metadata: { goalContinuation: true } } : {})
        })
      return TurnOutput.drain(messages, output, (result) => Ref.set(lastResult, result)).pipe(
        Effect.tap((drained) => (kind === "goal" ? goals.afterContinuation(drained) : Effect.void)),
        // The actions the turn opens know which turn they pause.
        Effect.locally(currentTurn, item.id),
        Effect.ensuring(SynchronizedRef.update(state, (admission) => {
          running.controller = undefined
          return Admission.finish(admission)
        }))
      )
    }

    const goals = GoalDriver.make({
      session,
      facts,
      nudge,
      situation: Effect.gen(function*() {
        const admission = yield* SynchronizedRef.get(state)
        return {
          queued: admission.queue.length,
          running: admission.running !== undefined,
          pendingActions: (yield* actions.pending).length,
          lastResult: yield* Ref.get(lastResult)
        }
      }),
      admit: (prompt) =>
        Effect.flatMap(Clock.currentTimeMillis, (queuedAt) =>
          Effect.orDie(enqueue({ id: ids.uuid(), priority: "later", input: prompt, preview: Admission.preview(prompt), queuedAt, kind: "goal" }, undefined)))
    })

    // The worker: start the head whenever nothing runs; otherwise work on the goal, or wait to be woken.
    const worker = Effect.gen(function*() {
      for (;;) {
        const next = !(yield* Ref.get(ready)) ? undefined : yield* SynchronizedRef.modify(state, (admission) => {
          const [item, after] = Admission.start(admission)
          if (item === undefined) return [undefined, after] as const
          running.controller = new AbortController()
          const output = outputs.get(item.id)!
          const reply = replies.get(item.id)
          outputs.delete(item.id)
          replies.delete(item.id)
          return [{ item, output, reply, controller: running.controller, admission: after }, after] as const
        })
        if (next === undefined) {
          if ((yield* Ref.get(ready)) && (yield* goals.consider)) continue
          yield* SubscriptionRef.set(parked, true)
          yield* wake.take
          yield* SubscriptionRef.set(parked, false)
          continue
        }
        if ((next.item.kind ?? "input") === "input") yield* saveQueue(next.admission)
        yield* PubSub.publish(started, Option.some({ turnId: next.item.id, events: Mailbox.toStream(next.output) }))
        yield* runTurn(next.item, next.output, next.controller, next.reply)
      }
    })

    // The actions' events go to the transcript as they happen (an action restored from it is not
    // written twice); a `deny` that asks to stop the turn stops it.
    const recordActions = Effect.gen(function*() {
      const events = yield* actions.subscribe
      yield* Stream.runForEach(events, (event) =>
        facts.recordAction(event).pipe(
          Effect.zipRight(Effect.sync(() => {
            if (event.event === "resolved" && "behavior" in event.answer && event.answer.behavior === "deny" && event.answer.interrupt === true) {
              running.controller?.abort()
            }
          })),
          // An answered action may be what a goal's continuation waited for.
          Effect.zipRight(nudge)
        ))
    })

    yield* Effect.forkScoped(worker)
    // Closing the runtime: what waits will not run (but stays saved: a restarted process runs it).
    yield* Effect.addFinalizer(() =>
      Effect.flatMap(SynchronizedRef.getAndUpdate(state, Admission.clear), (admission) => cancel(admission.queue, "closed")).pipe(
        Effect.zipRight(PubSub.publish(started, Option.none()))
      )
    )
    // Forked last, so stopped first when the runtime closes: the actions a closing runtime cuts
    // stay pending in the transcript, for a restarted process to ask again.
    yield* Effect.forkScoped(recordActions)

    // Each time the worker parks (and now, if it is parked): done once nothing runs or waits then,
    // so a goal continuation the worker admits after a turn is not missed.
    const idle = parked.changes.pipe(
      Stream.mapEffect((isParked) =>
        isParked
          ? Effect.map(SynchronizedRef.get(state), (admission) => admission.running === undefined && admission.queue.length === 0)
          : Effect.succeed(false)
      ),
      Stream.takeUntil((done) => done),
      Stream.runDrain
    )

    const resume = Resumption.resume({
      session,
      actions,
      facts,
      newId: ids.uuid,
      enqueue: (item) => Effect.as(enqueue(item, undefined), true).pipe(Effect.catchTag("QueueFull", () => Effect.succeed(false)))
    }).pipe(Effect.tap(() => Effect.zipRight(Ref.set(ready, true), nudge)))

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
      remove: (turnId) =>
        changeQueue((admission) =>
          Admission.isQueued(admission, turnId)
            ? [true, Admission.remove(admission, turnId), admission.queue.filter((q) => q.id === turnId), "removed"]
            : [false, admission, [], "removed"]
        ),
      promote: (turnId) =>
        changeQueue((admission) =>
          Admission.isQueued(admission, turnId)
            ? [true, Admission.promote(admission, turnId), [], "removed"]
            : [false, admission, [], "removed"]
        ),
      clear: changeQueue((admission) => [Admission.snapshots(admission), Admission.clear(admission), admission.queue, "cleared"]),
      // Under the lock, like `now`: a turn being started is stopped as it starts.
      interrupt: SynchronizedRef.updateEffect(state, (admission) =>
        Effect.sync(() => {
          running.controller?.abort()
          return admission
        })),
      interruptTurn: (turnId) =>
        SynchronizedRef.modify(state, (admission) => {
          if (admission.running !== turnId || running.controller === undefined) return [false, admission] as const
          running.controller.abort()
          return [true, admission] as const
        }),
      idle,
      resume,
      goal: goals.goal,
      setGoal: goals.setGoal,
      clearGoal: goals.clearGoal,
      pauseGoal: goals.pauseGoal
    }
  })
