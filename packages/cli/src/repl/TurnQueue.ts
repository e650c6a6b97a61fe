/**
 * The REPL's turns, through the session's runtime (`SessionRuntime`, the single owner of turn
 * admission): everything entered is submitted at once and runs now or waits its turn; the turns
 * are printed whole, one after another, in the order they run (read from the runtime's `turns`,
 * the one reader of each turn's stream); what waits is shown as it changes. The REPL keeps no queue
 * and no busy flag: only the text it submitted, by turn id, to echo a prompt when its turn starts
 * and to hand a queued one back for editing.
 *
 * A runtime belongs to one session. When the REPL moves to another session (`/resume`), `switchTo`
 * opens that session's runtime, moves what waits to it in its order, and ends the old runtime once
 * its last turn is over; the printer goes on with the new runtime's turns after the old one's.
 *
 * @since 0.1.0
 */
import { type Admission, type SdkMessage, type Session, SessionRuntime } from "@keel/core"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { identity } from "effect/Function"
import * as Mailbox from "effect/Mailbox"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/** What the REPL does as turns come and go. @category Models */
export interface Hooks {
  /**
   * The turn of `text` starts (before its first message); `text` is `undefined` for a turn the
   * runtime admitted itself (a goal's continuation), which no one typed.
   */
  readonly started: (text: string | undefined) => void
  /** A message of the turn being printed. */
  readonly render: (message: SdkMessage.SdkMessage) => void
  /** The turn of `text` is printed whole; `result` is its result (`undefined` if the turn died without one). */
  readonly ended: (text: string | undefined, result: SdkMessage.Result | undefined) => Effect.Effect<void>
  /** What waits changed: the previews, the next to run first. */
  readonly queued: (previews: ReadonlyArray<string>) => void
  /** `text` could not be queued (the queue is full). */
  readonly refused: (text: string, reason: string) => void
  /**
   * The REPL's own commands: the messages that answer `text`, made when its turn comes (with the
   * queue, to switch sessions); `undefined` for the session's input.
   */
  readonly reply: (text: string, queue: TurnQueue) => Effect.Effect<ReadonlyArray<SdkMessage.SdkMessage>> | undefined
}

/** The REPL's side of the runtime. @category Models */
export interface TurnQueue {
  /** Submits `text`: it runs now, or waits its turn. Resolves once its turn is printed (or it is dropped). */
  readonly submit: (text: string) => Promise<void>
  /** Takes the last queued prompt out of the queue: its text, or `undefined` when none waits any more. */
  readonly pullBack: () => Promise<string | undefined>
  /** Stops the running turn (what waits runs next). */
  readonly interrupt: () => void
  /** Whether a turn is being printed. */
  readonly running: () => boolean
  /** How many prompts wait. */
  readonly queued: () => number
  /**
   * Goes on with `session`, from a reply while its turn runs: what waits moves to the new session's
   * runtime, and the present one ends when this turn is over; then `after` runs (closing the
   * session left).
   */
  readonly switchTo: (session: Session.Service, after: Effect.Effect<void>) => Effect.Effect<void>
  /** Drops what waits, stops the running turn, waits until it is printed and closes the runtime. */
  readonly close: () => Promise<void>
}

/** What a runtime of a session needs, its scope aside. @category Models */
export type Requirements = Exclude<Effect.Effect.Context<ReturnType<typeof SessionRuntime.make>>, Scope.Scope>

interface Entry {
  readonly text: string
  /** Resolves the submitter's promise. */
  readonly done: () => void
}

/** A session's runtime, in its own scope. */
interface Lane {
  readonly runtime: SessionRuntime.Service
  readonly scope: Scope.CloseableScope
}

/**
 * The turns of `session`, in the scope (each runtime lives in a scope of its own inside it, so it
 * can end first).
 *
 * @category Constructors
 */
export const make = (session: Session.Service, hooks: Hooks): Effect.Effect<TurnQueue, never, Requirements | Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Scope.Scope
    const context = yield* Effect.context<Requirements>()
    const run = Runtime.runPromise(yield* Effect.runtime<never>())
    // The runtimes' streams of turns, in the order the printer takes them.
    const lanes = yield* Mailbox.make<Stream.Stream<SessionRuntime.Submitted>>()
    const open = (of: Session.Service) =>
      Effect.gen(function*() {
        const laneScope = yield* Scope.fork(scope, ExecutionStrategy.sequential)
        const runtime = yield* SessionRuntime.make(of).pipe(Scope.extend(laneScope), Effect.provide(context))
        // Subscribed before anything is submitted, outside the runtime's scope: no turn is missed.
        yield* lanes.offer(yield* Scope.extend(runtime.turns, scope))
        // What the session's transcript left (a turn cut while it waited, queued input) runs first.
        yield* runtime.resume
        return { runtime, scope: laneScope } satisfies Lane
      })
    let lane = yield* open(session)

    // What the REPL submitted, by turn id. A submission is registered under the permit, so a
    // printer that does not know a turn yet waits for the permit once to tell "not registered
    // yet" from "not the REPL's" (a turn the runtime admits itself).
    const entries = new Map<string, Entry>()
    const registering = yield* Effect.makeSemaphore(1)
    const take = (turnId: string) =>
      Effect.sync(() => {
        const entry = entries.get(turnId)
        entries.delete(turnId)
        return entry
      })

    let printing: string | undefined
    let waiting: ReadonlyArray<Admission.Snapshot> = []
    // The last refresh started wins: one that read the queue earlier never overwrites it.
    let version = 0
    const refresh = Effect.suspend(() => {
      const mine = ++version
      return Effect.map(lane.runtime.queue, (queue) => {
        if (mine !== version) return
        waiting = queue
        hooks.queued(queue.map((q) => q.preview))
      })
    })

    const print = (turn: SessionRuntime.Submitted) =>
      Effect.gen(function*() {
        printing = turn.turnId
        yield* refresh
        const entry = entries.has(turn.turnId) ? yield* take(turn.turnId) : yield* registering.withPermits(1)(take(turn.turnId))
        const text = entry?.text
        hooks.started(text)
        let result: SdkMessage.Result | undefined
        yield* Stream.runForEach(turn.events, (message) =>
          Effect.sync(() => {
            if (message.type === "result") result = message
            hooks.render(message)
          })).pipe(
            // A turn that died (a bug below the session) ends without a result; the next one goes on.
            Effect.catchAllCause((cause) => (Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : Effect.void))
          )
        printing = undefined
        yield* hooks.ended(text, result)
        entry?.done()
      })
    const printer = yield* Effect.forkIn(
      Mailbox.toStream(lanes).pipe(Stream.flatMap(identity), Stream.runForEach(print)),
      scope
    )

    // Runtimes left by `switchTo`, ending after their last turn.
    const closing: Array<Fiber.RuntimeFiber<void>> = []

    /** Queues `entry` on the present runtime. */
    const admit = (entry: Entry): Effect.Effect<void> =>
      Effect.gen(function*() {
        const reply = hooks.reply(entry.text, queue)
        yield* registering.withPermits(1)(Effect.gen(function*() {
          const submitted = yield* (reply === undefined
            ? lane.runtime.submit(entry.text)
            : lane.runtime.submitReply(entry.text, reply))
          entries.set(submitted.turnId, entry)
        }))
        yield* refresh
      }).pipe(Effect.catchTag("QueueFull", (full) =>
        Effect.sync(() => {
          hooks.refused(entry.text, full.message)
          entry.done()
        })))

    const queue: TurnQueue = {
      submit: (text) => new Promise<void>((resolve) => void run(admit({ text, done: resolve }))),
      pullBack: () =>
        run(Effect.gen(function*() {
          const last = waiting.filter((q) => entries.has(q.id)).at(-1)
          if (last === undefined || !(yield* lane.runtime.remove(last.id))) return undefined
          const entry = yield* take(last.id)
          entry?.done()
          yield* refresh
          return entry?.text
        })),
      interrupt: () => void run(lane.runtime.interrupt),
      running: () => printing !== undefined,
      queued: () => waiting.length,
      switchTo: (next, after) =>
        Effect.gen(function*() {
          const old = lane
          lane = yield* open(next)
          const moved = yield* old.runtime.clear
          yield* Effect.forEach(moved, (q) => Effect.flatMap(take(q.id), (entry) => (entry === undefined ? Effect.void : admit(entry))), {
            discard: true
          })
          yield* refresh
          closing.push(
            yield* Effect.forkIn(
              old.runtime.idle.pipe(Effect.zipRight(Scope.close(old.scope, Exit.void)), Effect.zipRight(after)),
              scope
            )
          )
        }),
      close: () =>
        run(Effect.gen(function*() {
          const dropped = yield* lane.runtime.clear
          yield* Effect.forEach(dropped, (q) => Effect.map(take(q.id), (entry) => entry?.done()), { discard: true })
          yield* lane.runtime.interrupt
          yield* lane.runtime.idle
          yield* Scope.close(lane.scope, Exit.void)
          yield* lanes.end
          yield* Fiber.joinAll([printer, ...closing])
          yield* refresh
        }))
    }
    return queue
  })
